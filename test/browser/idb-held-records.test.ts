/**
 * IndexedDBStore holds non-barrier records (`run_started`, a safe model-call intent, a result
 * alone) in memory and commits them in the transaction of the run's next write (decision 0043), in
 * real Chromium: how many transactions a step costs, what readLog of the same and of another
 * instance sees, the timer, release and close, and a write that fails.
 */
import { describe, expect, it } from 'vitest';
import { isPolyLoopError, RECORD_VERSION } from '../../src/core/index.ts';
import type {
  ActionIntentRecord,
  InputRecord,
  InputRequestRecord,
  IntentRecord,
  LogRecord,
} from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { HOLD_MS } from '../../src/platform-web/held-records.ts';
import { actionIntent, ended, modelIntent, modelResult, started, stepWrite } from '../contract/run-store.contract.ts';
import { freshDbName } from './idb-store.cases.ts';

const action = (i: number): ActionIntentRecord => actionIntent(i) as ActionIntentRecord;
const neverIntent = (i: number): IntentRecord => ({ ...modelIntent(i), replayPolicy: 'never' }) as IntentRecord;
const kinds = (log: readonly LogRecord[]): string[] =>
  log.map((r) =>
    r.kind === 'intent' ? `intent:${r.resultId}` : r.kind === 'result' ? `result:${r.resultId}` : r.kind,
  );
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const inputRequest = (i: number): InputRequestRecord => ({
  kind: 'input_request',
  v: RECORD_VERSION,
  stepIndex: i,
  resultId: `s${i}.settle`,
  request: { kind: 'settle', target: 'model_call', decision: null },
  requestedAt: '2026-12-01T00:00:00.000Z',
});
const inputReply = (i: number): InputRecord => ({
  kind: 'input',
  v: RECORD_VERSION,
  stepIndex: i,
  resultId: `s${i}.settle`,
  reply: { kind: 'retry', resultId: `s${i}.settle` },
  receivedAt: '2026-12-01T00:00:01.000Z',
});

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

/**
 * Make the store's writes fail until the returned function is called: each add to `records`
 * aborts its own transaction, as a full quota does, so that transaction writes nothing.
 */
function failWrites(): () => void {
  const original = IDBObjectStore.prototype.add;
  IDBObjectStore.prototype.add = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore['add']>) {
    const request = original.apply(this, args);
    if (this.name === 'records') this.transaction.abort();
    return request;
  };
  return () => {
    IDBObjectStore.prototype.add = original;
  };
}

describe('IndexedDBStore holds non-barrier records until the next write (Chromium)', () => {
  it('an action step is two strict transactions: run_started and the safe model intent land with the result and the action intent', async () => {
    const dbName = freshDbName('held-step');
    const store = new IndexedDBStore({ dbName });
    const seen = await transactions(async () => {
      await store.runStarted('r', started('r'));
      await store.intent('r', modelIntent(0));
      await store.resultAndIntent('r', modelResult(0), action(0));
      await store.step('r', stepWrite(0));
    });
    expect(seen).toEqual(['strict', 'strict']);
    const other = new IndexedDBStore({ dbName });
    expect(kinds(await other.readLog('r'))).toEqual([
      'run_started',
      'intent:s0.model',
      'result:s0.model',
      'intent:s0.action',
      'step',
    ]);
    await Promise.all([store.close(), other.close()]);
  });

  it('readLog of the same instance returns held records after the stored ones; another instance sees them once a barrier commits them', async () => {
    const dbName = freshDbName('held-read');
    const a = new IndexedDBStore({ dbName });
    const b = new IndexedDBStore({ dbName });
    await a.runStarted('r', started('r'));
    await a.intent('r', neverIntent(0));
    await a.intent('r', modelIntent(1));
    await a.result('r', 's1.model', modelResult(1));
    expect(kinds(await a.readLog('r'))).toEqual([
      'run_started',
      'intent:s0.model',
      'intent:s1.model',
      'result:s1.model',
    ]);
    expect(kinds(await b.readLog('r'))).toEqual(['run_started', 'intent:s0.model']);
    expect((await a.listRuns()).map((x) => x.records)).toEqual([4]);
    await a.step('r', stepWrite(1));
    expect(kinds(await b.readLog('r'))).toEqual([
      'run_started',
      'intent:s0.model',
      'intent:s1.model',
      'result:s1.model',
      'step',
    ]);
    await Promise.all([a.close(), b.close()]);
  });

  it(`commits held records on their own, relaxed, once they waited ${HOLD_MS} ms without a write`, async () => {
    const dbName = freshDbName('held-timer');
    const a = new IndexedDBStore({ dbName });
    const b = new IndexedDBStore({ dbName });
    const seen = await transactions(async () => {
      await a.runStarted('r', started('r'));
      await a.intent('r', modelIntent(0));
      expect(await b.readLog('r')).toEqual([]);
      await sleep(HOLD_MS * 6);
    });
    expect(seen).toEqual(['relaxed']);
    expect(kinds(await b.readLog('r'))).toEqual(['run_started', 'intent:s0.model']);
    await Promise.all([a.close(), b.close()]);
  });

  it('releasing the lease commits the held records before the next driver gets the run, and close commits the rest', async () => {
    const dbName = freshDbName('held-release');
    const a = new IndexedDBStore({ dbName });
    const release = await a.acquire('r');
    await a.runStarted('r', started('r'));
    await a.intent('r', modelIntent(0));
    await release();
    const b = new IndexedDBStore({ dbName });
    const next = await b.acquire('r');
    expect(kinds(await b.readLog('r'))).toEqual(['run_started', 'intent:s0.model']);
    await next();
    await a.runStarted('q', started('q'));
    await a.close();
    expect(kinds(await b.readLog('q'))).toEqual(['run_started']);
    await b.close();
  });

  it('a write that fails keeps the held records, and the next write lands them first, in order', async () => {
    const dbName = freshDbName('held-fail');
    const a = new IndexedDBStore({ dbName });
    await a.runStarted('r', started('r'));
    await a.intent('r', neverIntent(0));
    await a.intent('r', modelIntent(1));
    const restore = failWrites();
    const failed = await a.resultAndIntent('r', modelResult(1), action(1)).then(
      () => null,
      (e: unknown) => e,
    );
    restore();
    expect(isPolyLoopError(failed, 'store_error')).toBe(true);
    await a.resultAndIntent('r', modelResult(1), action(1));
    const b = new IndexedDBStore({ dbName });
    expect(kinds(await b.readLog('r'))).toEqual([
      'run_started',
      'intent:s0.model',
      'intent:s1.model',
      'result:s1.model',
      'intent:s1.action',
    ]);
    await Promise.all([a.close(), b.close()]);
  });

  it('a write after another connection appended to the run lands after that record (the sequence this instance remembers is checked, not trusted)', async () => {
    const dbName = freshDbName('seq-cache');
    const a = new IndexedDBStore({ dbName });
    const b = new IndexedDBStore({ dbName });
    await a.step('r', stepWrite(0));
    await b.step('r', stepWrite(1));
    await a.step('r', stepWrite(2));
    await b.step('r', stepWrite(3));
    const steps = (await new IndexedDBStore({ dbName }).readLog('r')).map((r) =>
      r.kind === 'step' ? r.step.stepIndex : -1,
    );
    expect(steps).toEqual([0, 1, 2, 3]);
    await Promise.all([a.close(), b.close()]);
  });

  it('a release whose commit fails still frees the lease and drops the held records, so none lands later behind another driver', async () => {
    const dbName = freshDbName('held-release-fail');
    const a = new IndexedDBStore({ dbName, lease: 'refuse' });
    const release = await a.acquire('r');
    await a.runStarted('r', started('r'));
    await a.intent('r', neverIntent(0));
    await a.intent('r', modelIntent(1));
    const restore = failWrites();
    const failed = await release().then(
      () => null,
      (e: unknown) => e,
    );
    restore();
    expect(isPolyLoopError(failed, 'store_error')).toBe(true);
    const b = new IndexedDBStore({ dbName, lease: 'refuse' });
    const next = await b.acquire('r');
    await b.step('r', stepWrite(0));
    await next();
    expect(kinds(await a.readLog('r'))).toEqual(['run_started', 'intent:s0.model', 'step']);
    await a.intent('r', neverIntent(1));
    expect(kinds(await b.readLog('r'))).toEqual(['run_started', 'intent:s0.model', 'step', 'intent:s1.model']);
    await Promise.all([a.close(), b.close()]);
  });

  it('commits only at barriers, strict: run_started, a safe model-call intent and a result alone ride in the next transaction; an action step is two strict transactions', async () => {
    const store = new IndexedDBStore({ dbName: freshDbName('durability') });
    const seen: string[] = [];
    const original = IDBDatabase.prototype.transaction;
    IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
      const tx = original.apply(this, args);
      if (args[1] === 'readwrite') seen.push(tx.durability);
      return tx;
    } as IDBDatabase['transaction'];
    try {
      await store.runStarted('r', started('r'));
      await store.intent('r', modelIntent(0));
      await store.resultAndIntent('r', modelResult(0), actionIntent(0) as ActionIntentRecord);
      await store.step('r', stepWrite(0));
      await store.intent('r', { ...modelIntent(1), replayPolicy: 'never' });
      await store.result('r', 's1.model', modelResult(1));
      await store.inputRequest('r', inputRequest(1));
      await store.input('r', inputReply(1));
      await store.runEnded('r', ended(1));
    } finally {
      IDBDatabase.prototype.transaction = original;
    }
    // [run_started, safe intent, result, action intent], [step], [never intent], [result, input_request], [input], [run_ended].
    expect(seen).toEqual(['strict', 'strict', 'strict', 'strict', 'strict', 'strict']);
    expect((await store.readLog('r')).map((r) => r.kind)).toEqual([
      'run_started',
      'intent',
      'result',
      'intent',
      'step',
      'intent',
      'result',
      'input_request',
      'input',
      'run_ended',
    ]);
    await store.close();
  });
});
