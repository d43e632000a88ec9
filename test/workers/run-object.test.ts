import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { RunStatus, StartOutcome } from '../../src/platform-workers/index.ts';
import type { ProbeInput } from './fixtures/probe-worker.ts';

type Probe = { start(runId: string, input: unknown): Promise<StartOutcome>; status(): Promise<RunStatus | null> };
const probe = (runId: string): Probe => env.PROBES.get(env.PROBES.idFromName(runId)) as unknown as Probe;
const stubOf = (runId: string): DurableObjectStub => env.PROBES.get(env.PROBES.idFromName(runId));
const uid = (p: string): string => `${p}-${crypto.randomUUID()}`;
const alarmOf = (runId: string): Promise<number | null> => runInDurableObject(stubOf(runId), (_o, state) => state.storage.getAlarm());

describe('the run object with a misbehaving agent factory (workerd)', () => {
  it('rejects the input (bad_request) and stores nothing when the factory builds an invalid request or agent', async () => {
    for (const fault of ['bad-budget', 'bad-model'] as const) {
      const runId = uid(fault);
      const input: ProbeInput = { goal: 'a b', fault };
      const outcome = await probe(runId).start(runId, input);
      expect(outcome).toMatchObject({ ok: false, code: 'bad_request' });
      expect(await probe(runId).status()).toBeNull();
      expect(await alarmOf(runId)).toBeNull();
    }
  });
});
