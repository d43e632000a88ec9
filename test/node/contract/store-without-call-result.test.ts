/**
 * A user's own store written before steps could hold several calls — every method of its time but
 * `callResult` (and `upgrade`) — keeps working at one call a step, and is refused with a clear
 * `StoreError` for a run with `parallelToolCalls` above 1, before anything is written or called:
 * such a store could not write the outcome of a call that ran. A log written elsewhere with several
 * calls a step stays as it was and a store with the method finishes it.
 */
import { describe, expect, it } from 'vitest';
import { exportRun, importRun, InMemoryStore, readRunLog, resume, run } from '../../../src/core/index.ts';
import type { RunStore } from '../../../src/core/index.ts';
import { scriptedModel } from '../../../src/testing/index.ts';
import { runStoreContract } from '../../contract/run-store.contract.ts';
import { SEVERAL_CALLS_SCRIPT, severalCallsReply, severalCallsSetup } from '../../contract/several-calls-law.ts';

/** The 1.1 shape: a plain object forwarding every method of an InMemoryStore but `callResult` and `upgrade`. */
function storeWithoutCallResult(inner = new InMemoryStore()): RunStore {
  return {
    runStarted: (r, rec) => inner.runStarted(r, rec),
    intent: (r, rec) => inner.intent(r, rec),
    resultAndIntent: (r, result, intent) => inner.resultAndIntent(r, result, intent),
    result: (r, id, rec) => inner.result(r, id, rec),
    step: (r, rec) => inner.step(r, rec),
    runEnded: (r, rec) => inner.runEnded(r, rec),
    readLog: (r) => inner.readLog(r),
    inputRequest: (r, rec) => inner.inputRequest(r, rec),
    input: (r, rec) => inner.input(r, rec),
    acquire: (r, o) => inner.acquire(r, o),
  };
}

runStoreContract('a 1.1-style store without callResult', () => storeWithoutCallResult(), { lease: 'refuses' });

describe('a store without callResult', () => {
  it('refuses a run with parallelToolCalls above 1 with a StoreError naming callResult, before any write, model call or tool', async () => {
    const inner = new InMemoryStore();
    const world: string[] = [];
    const s = severalCallsSetup(storeWithoutCallResult(inner), () => world);
    const model = scriptedModel(SEVERAL_CALLS_SCRIPT);
    const agent = { ...s.agent, model };
    const failure = await run(agent, s.request).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toMatchObject({ name: 'StoreError', code: 'store_error', operation: 'callResult' });
    expect((failure as Error).message).toMatch(/no callResult method/);
    expect((failure as Error).message).toMatch(/parallelToolCalls/);
    expect(await inner.readLog('several-law')).toEqual([]);
    expect(model.calls).toEqual([]);
    expect(world).toEqual([]);
  });

  it('runs as before at parallelToolCalls 1: a reply with several calls is an invalid step and none runs', async () => {
    const world: string[] = [];
    const s = severalCallsSetup(storeWithoutCallResult(), () => world);
    const { parallelToolCalls: _p, ...request } = s.request;
    const result = await run(s.agent, { ...request, budget: { ...request.budget, maxSteps: 1 } });
    expect(result.trajectory.map((step) => step.decision)).toEqual(['invalid']);
    expect(world).toEqual([]);
  });

  it('refuses to resume a run with several calls a step that another store wrote, leaving its log as it was; a store with callResult then finishes it', async () => {
    // Written on a store with the method, up to step 1's three open requests.
    const inner = new InMemoryStore();
    const world: string[] = [];
    const first = severalCallsSetup(inner, () => world);
    const paused = await run(first.agent, first.request);
    expect(paused).toMatchObject({ stopReason: 'awaiting_input', pending: { resultId: 's1.a0.input' } });
    const before = await inner.readLog('several-law');
    const old = storeWithoutCallResult(inner);
    expect(readRunLog(await old.readLog('several-law')).openRequests.map((r) => r.resultId)).toEqual([
      's1.a0.input',
      's1.a2.input',
      's1.a3.input',
    ]);
    const s = severalCallsSetup(old, () => world);
    const input = { kind: 'approve', resultId: 's1.a0.input' } as const;
    await expect(resume(s.agent, s.request, { input })).rejects.toMatchObject({
      name: 'StoreError',
      operation: 'callResult',
    });
    expect(await inner.readLog('several-law')).toEqual(before);
    // The same replies, on a store with the method: the run ends, each never call once.
    const reply = severalCallsReply(() => world);
    let result = paused;
    while (result.pending) {
      const again = severalCallsSetup(inner, () => world);
      result = await resume(again.agent, again.request, { input: reply(result.pending) });
    }
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'done' });
    expect(world.sort()).toEqual(['pay:d', 'read:a', 'read:c', 'read:e', 'send:b']);
  });

  it('refuses to import a log holding call results, and writes nothing', async () => {
    const inner = new InMemoryStore();
    const s = severalCallsSetup(inner, () => []);
    await run(s.agent, s.request);
    const ndjson = await exportRun(inner, 'several-law');
    expect(ndjson).toContain('"kind":"call_result"');
    const target = new InMemoryStore();
    await expect(importRun(storeWithoutCallResult(target), 'several-law', ndjson)).rejects.toMatchObject({
      name: 'InvalidRequestError',
      message: expect.stringMatching(/no callResult method/),
    });
    expect(await target.readLog('several-law')).toEqual([]);
  });
});
