/**
 * FileStore and steps with several calls: a call result is not a barrier (no fsync of its own; the
 * step record's fsync makes it durable, so a step with three calls costs the fsyncs of a step with
 * one), and the crash law of several calls a step over real files
 * (docs/design/laws.md, a fresh directory per case).
 */
import { open } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../../src/core/index.ts';
import type { LogRecord, ModelReply } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { scriptedModel } from '../../../src/testing/index.ts';
import {
  actionsIntent,
  callResult,
  callsStepWrite,
  modelIntent,
  modelResult,
  started,
} from '../../contract/run-store.contract.ts';
import {
  SEVERAL_CALLS_SCRIPT,
  severalCallsLaw,
  severalCallsLawProblems,
  severalCallsSetup,
} from '../../contract/several-calls-law.ts';
import { tempDir } from '../../support/temp-dir.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

const quiet = (): void => undefined;

/** Counts `fsync` calls on every file handle while `fn` runs. */
async function syncsDuring(fn: () => Promise<unknown>): Promise<number> {
  const probe = await open(process.execPath, 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const spy = vi.spyOn(proto, 'sync');
  try {
    await fn();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('FileStore call results', () => {
  it('writes a call result without an fsync of its own, and the next barrier (the step record) makes it durable with one', async () => {
    const store = new FileStore({ dir: await tempDir('polyloop-calls-'), onWarning: quiet });
    await store.runStarted('r', started('r'));
    await store.intent('r', modelIntent(0));
    await store.resultAndIntent('r', modelResult(0), actionsIntent(0));
    expect(await syncsDuring(() => store.callResult('r', callResult(0, 1)))).toBe(0);
    expect(await syncsDuring(() => store.callResult('r', callResult(0, 0)))).toBe(0);
    expect(await syncsDuring(() => store.step('r', callsStepWrite(0)))).toBeGreaterThanOrEqual(1);
    const reread = new FileStore({ dir: store.dir, onWarning: quiet });
    expect((await reread.readLog('r')).map((r) => (r.kind === 'call_result' ? r.resultId : r.kind))).toEqual([
      'run_started',
      'intent',
      'result',
      'intent',
      's0.a1',
      's0.a0',
      'step',
    ]);
  });

  it('fsyncs a step with three calls as often as a step with one (the actions intent and the step are the barriers)', async () => {
    const oneStep = async (reply: ModelReply): Promise<{ syncs: number; log: readonly LogRecord[] }> => {
      const dir = await tempDir('polyloop-calls-');
      const s = severalCallsSetup(new FileStore({ dir, onWarning: quiet }), () => []);
      const agent = { ...s.agent, model: scriptedModel([reply]) };
      const syncs = await syncsDuring(() => run(agent, { ...s.request, budget: { ...s.request.budget, maxSteps: 1 } }));
      return { syncs, log: await new FileStore({ dir, onWarning: quiet }).readLog('several-law') };
    };
    const first = SEVERAL_CALLS_SCRIPT[0] as ModelReply;
    const three = await oneStep(first);
    const one = await oneStep({ ...first, toolCalls: (first.toolCalls ?? []).slice(0, 1) });
    expect(three.log.filter((r) => r.kind === 'call_result')).toHaveLength(3);
    expect(one.log.filter((r) => r.kind === 'call_result')).toHaveLength(0);
    expect(three.syncs).toBe(one.syncs);
  });
});

describe('the crash law of several calls a step over FileStore (crashAtEveryWrite, a fresh directory per case)', () => {
  it('ends every case crashed at each write and resumed with the same replies as the uninterrupted run; each never call exactly once, the denied one never', async () => {
    const tmp = await tempDir('polyloop-calls-law-');
    const dirs: string[] = [];
    const result = await severalCallsLaw({
      newStore: () => {
        dirs.push(`${tmp}/case-${dirs.length}`);
        return new FileStore({ dir: dirs.at(-1)!, onWarning: quiet });
      },
    });
    expect(severalCallsLawProblems(result)).toEqual([]);
    expect(new Set(dirs).size).toBe(result.report.cases.length + 1);
  }, 120_000);
});
