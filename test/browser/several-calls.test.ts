/**
 * Steps with several calls over IndexedDBStore in real Chromium. Call results are not barriers: the
 * store holds them in memory and commits them in the transaction of the run's next barrier, so a
 * step with three calls costs the strict transactions of a step with one; a tab that dies before
 * that barrier loses them, which leaves the run at its `actions` intent, and a new tab resumes it:
 * safe calls run again, a person settles the `never` one from the outside world, and it ran once.
 * And the crash law at every write (a fresh database per case).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InMemoryStore, resume, run } from '../../src/core/index.ts';
import type { LogRecord, ModelReply, RunResult, RunStore } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import {
  SEVERAL_CALLS_SCRIPT,
  severalCallsLaw,
  severalCallsLawProblems,
  severalCallsReply,
  severalCallsSetup,
} from '../contract/several-calls-law.ts';
import { timeless } from '../node/core/fixtures.ts';
import { freshDbName } from './idb-store.cases.ts';

// The hold's timer is faked: a held record is committed by the next write or not at all, whatever
// the machine's load (a real timer would commit it on its own after 50 ms).
afterEach(() => {
  vi.useRealTimers();
});

const kinds = (log: readonly LogRecord[]): string[] =>
  log.map((r) => (r.kind === 'intent' ? `intent:${r.intent}` : r.kind === 'call_result' ? r.resultId : r.kind));

/** The durability of every readwrite transaction opened while `fn` runs. */
async function transactions(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const original = IDBDatabase.prototype.transaction;
  IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
    const tx = original.apply(this, args);
    if (args[1] === 'readwrite') seen.push(tx.durability);
    return tx;
  } as IDBDatabase['transaction'];
  try {
    await fn();
  } finally {
    IDBDatabase.prototype.transaction = original;
  }
  return seen;
}

/** Answer every request the run raises with the scenario's person, resuming on fresh setups over `store`. */
async function answerAll(first: RunResult, store: RunStore, world: string[]): Promise<RunResult> {
  const reply = severalCallsReply(() => world);
  let result = first;
  while (result.pending) {
    const s = severalCallsSetup(store, () => world);
    result = await resume(s.agent, s.request, { input: reply(result.pending) });
  }
  return result;
}

describe('several calls a step over IndexedDBStore (Chromium)', () => {
  it('commits held call results in the step’s strict transaction: three calls cost the transactions of one', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const oneStep = async (reply: ModelReply): Promise<{ seen: string[]; log: readonly LogRecord[] }> => {
      const dbName = freshDbName('calls-tx');
      const store = new IndexedDBStore({ dbName });
      const s = severalCallsSetup(store, () => []);
      const agent = { ...s.agent, model: scriptedModel([reply]) };
      const request = { ...s.request, budget: { ...s.request.budget, maxSteps: 1 } };
      const seen = await transactions(() => run(agent, request));
      const other = new IndexedDBStore({ dbName });
      const log = await other.readLog('several-law');
      await Promise.all([store.close(), other.close()]);
      return { seen, log };
    };
    const first = SEVERAL_CALLS_SCRIPT[0] as ModelReply;
    const three = await oneStep(first);
    const one = await oneStep({ ...first, toolCalls: (first.toolCalls ?? []).slice(0, 1) });
    // The model result with the actions intent, the step with the call results before it, run_ended.
    expect(three.seen).toEqual(['strict', 'strict', 'strict']);
    expect(one.seen).toEqual(three.seen);
    expect(kinds(three.log)).toEqual([
      'run_started',
      'intent:model_call',
      'result',
      'intent:actions',
      's0.a0',
      's0.a1',
      's0.a2',
      'step',
      'run_ended',
    ]);
  });

  it('a tab that dies after the calls ran, before the step landed, loses their held results; a new tab resumes from the actions intent and the never call ran once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const dbName = freshDbName('calls-died');
    const world: string[] = [];
    const tab = new IndexedDBStore({ dbName });
    // The dying tab: its step write never comes, and its lease died with it (a dead tab's Web Lock is freed).
    const dying: RunStore = {
      runStarted: (r, rec) => tab.runStarted(r, rec),
      intent: (r, rec) => tab.intent(r, rec),
      resultAndIntent: (r, result, intent) => tab.resultAndIntent(r, result, intent),
      result: (r, id, rec) => tab.result(r, id, rec),
      callResult: (r, rec) => tab.callResult(r, rec),
      step: () => new Promise<void>(() => undefined),
      runEnded: (r, rec) => tab.runEnded(r, rec),
      readLog: (r) => tab.readLog(r),
      inputRequest: (r, rec) => tab.inputRequest(r, rec),
      input: (r, rec) => tab.input(r, rec),
    };
    const doomed = severalCallsSetup(dying, () => world);
    void run(doomed.agent, doomed.request);
    // Not vi.waitUntil: it advances fake timers, which would commit the held records.
    const held = async (): Promise<number> =>
      (await tab.readLog('several-law')).filter((r) => r.kind === 'call_result').length;
    for (let i = 0; i < 1_000 && (await held()) < 3; i++);
    expect(await held()).toBe(3);
    expect([...world].sort()).toEqual(['read:a', 'read:c', 'send:b']);
    // What the dead tab held never reached the database: the run is at its last barrier, the actions intent.
    const reopened = new IndexedDBStore({ dbName });
    const stored = await reopened.readLog('several-law');
    expect(kinds(stored)).toEqual(['run_started', 'intent:model_call', 'result', 'intent:actions']);
    expect(stored).toEqual((await tab.readLog('several-law')).slice(0, 4));
    const s = severalCallsSetup(reopened, () => world);
    const first = await resume(s.agent, s.request);
    expect(first.pending).toMatchObject({ kind: 'settle', resultId: 's0.a1.settle' });
    const result = await answerAll(first, reopened, world);
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'done' });
    // The safe reads ran again; the never send and the approved pay once each; the denied pay never.
    expect([...world].sort()).toEqual(['pay:d', 'read:a', 'read:a', 'read:c', 'read:c', 'read:e', 'send:b']);
    const reference = severalCallsSetup(new InMemoryStore(), () => []);
    const uninterrupted = await answerAll(await run(reference.agent, reference.request), reference.agent.store, []);
    expect(timeless(result.trajectory)).toEqual(timeless(uninterrupted.trajectory));
    await reopened.close();
  });

  it('keeps the crash law: crashed at every write (lost, and landed) and resumed with the same replies, every case ends as the uninterrupted run, each never call exactly once', async () => {
    const stores: IndexedDBStore[] = [];
    const result = await severalCallsLaw({
      newStore: () => {
        const store = new IndexedDBStore({ dbName: freshDbName('calls-law') });
        stores.push(store);
        return store;
      },
    });
    await Promise.all(stores.map((s) => s.close()));
    expect(severalCallsLawProblems(result)).toEqual([]);
  }, 120_000);
});
