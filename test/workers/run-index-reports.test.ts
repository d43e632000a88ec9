/**
 * What a run object tells its run index when the index is down, in workerd: the probe objects
 * report to a stand-in index that refuses a run's first `indexFailures` reports. A refused report
 * never fails the run or its start; after an end whose report was refused the alarm stays, and
 * its firing reports the run and clears itself.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { RunStatus } from '../../src/platform-workers/index.ts';
import type { StartOutcome } from '../../src/platform-workers/run-setup.ts';
import { probeIndexReports } from './fixtures/probe-worker.ts';
import type { ProbeInput } from './fixtures/probe-worker.ts';

type Probe = { start(runId: string, input: unknown): Promise<StartOutcome>; status(): Promise<RunStatus | null> };
const probe = (runId: string): Probe => env.PROBES.get(env.PROBES.idFromName(runId)) as unknown as Probe;
const stubOf = (runId: string): DurableObjectStub => env.PROBES.get(env.PROBES.idFromName(runId));
const uid = (p: string): string => `${p}-${crypto.randomUUID()}`;
const alarmOf = (runId: string): Promise<number | null> =>
  runInDurableObject(stubOf(runId), (_o, state) => state.storage.getAlarm());
const reports = (runId: string): Promise<readonly string[]> =>
  runInDurableObject(stubOf(runId), () => probeIndexReports(runId));

async function until<T>(what: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const v = await what();
    if (done(v) || i > 500) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('reports to a run index that is down (workerd)', () => {
  it('reports running at the start and ended at the end when the index is up, and leaves no alarm', async () => {
    const runId = uid('index-up');
    expect(await probe(runId).start(runId, { goal: 'one', fault: 'none' } satisfies ProbeInput)).toEqual({ ok: true });
    expect(
      await until(
        () => reports(runId),
        (r) => r.includes('ended'),
      ),
    ).toEqual(['running', 'ended']);
    expect(
      await until(
        () => alarmOf(runId),
        (a) => a === null,
      ),
    ).toBeNull();
  });

  it('starts and finishes a run whose first report was refused; the end report lists it', async () => {
    const runId = uid('index-down-once');
    expect(
      await probe(runId).start(runId, { goal: 'one two', fault: 'none', indexFailures: 1 } satisfies ProbeInput),
    ).toEqual({ ok: true });
    expect(
      (
        await until(
          () => probe(runId).status(),
          (s) => s?.status === 'ended',
        )
      )?.stopReason,
    ).toBe('final_answer');
    expect(
      await until(
        () => reports(runId),
        (r) => r.length > 0,
      ),
    ).toEqual(['ended']);
    expect(
      await until(
        () => alarmOf(runId),
        (a) => a === null,
      ),
    ).toBeNull();
  });

  it('lists a long run whose first report was refused at its alarm firing, while it still runs', async () => {
    const runId = uid('index-down-running');
    expect(
      await probe(runId).start(runId, {
        goal: 'one two three',
        fault: 'none',
        pauseMs: 1_000,
        indexFailures: 1,
      } satisfies ProbeInput),
    ).toEqual({ ok: true });
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    expect((await probe(runId).status())?.status).toBe('running');
    expect(
      await until(
        () => reports(runId),
        (r) => r.length > 0,
      ),
    ).toEqual(['running']);
  });

  it('keeps the alarm of an ended run whose report was refused, and the firing reports it and clears the alarm', async () => {
    const runId = uid('index-down-twice');
    expect(
      await probe(runId).start(runId, { goal: 'one', fault: 'none', indexFailures: 2 } satisfies ProbeInput),
    ).toEqual({ ok: true });
    expect(
      (
        await until(
          () => probe(runId).status(),
          (s) => s?.status === 'ended',
        )
      )?.stopReason,
    ).toBe('final_answer');
    // Both reports (start and end) were refused, so the alarm armed at the start is still there.
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    expect(
      await until(
        () => reports(runId),
        (r) => r.length > 0,
      ),
    ).toEqual(['ended']);
    expect(await alarmOf(runId)).toBeNull();
    expect((await probe(runId).status())?.status).toBe('ended');
  });
});
