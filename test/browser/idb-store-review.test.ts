/**
 * Adversarial review of IndexedDBStore in real Chromium: two connections on one database,
 * long logs read in sequence order, abort of a waiting lease, durability per write.
 */
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { RECORD_VERSION } from '../../src/core/index.ts';
import type { ActionIntentRecord, InputRecord, InputRequestRecord, LogRecord } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { DB_VERSION } from '../../src/platform-web/schema.ts';
import { actionIntent, ended, modelIntent, modelResult, started, stepWrite } from '../contract/run-store.contract.ts';
import { freshDbName } from './idb-store.cases.ts';

const inputRequest = (i: number): InputRequestRecord => ({ kind: 'input_request', v: RECORD_VERSION, stepIndex: i, resultId: `s${i}.settle`, request: { kind: 'settle', target: 'model_call', decision: null }, requestedAt: '2026-12-01T00:00:00.000Z' });
const inputReply = (i: number): InputRecord => ({ kind: 'input', v: RECORD_VERSION, stepIndex: i, resultId: `s${i}.settle`, reply: { kind: 'retry', resultId: `s${i}.settle` }, receivedAt: '2026-12-01T00:00:01.000Z' });

// Steps are barriers: each is its own transaction (results alone would be held in memory, decision 0043).
const stepsOf = (log: readonly LogRecord[]): number[] => log.flatMap((r) => (r.kind === 'step' ? [r.step.stepIndex] : []));

describe('IndexedDBStore review (Chromium)', () => {
  it('keeps each run in write order when two connections on one database write different runs at once', async () => {
    const dbName = freshDbName('two-conns');
    const a = new IndexedDBStore({ dbName });
    const b = new IndexedDBStore({ dbName });
    await Promise.all([a.runStarted('ra', started('ra')), b.runStarted('rb', started('rb'))]);
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      writes.push(a.step('ra', stepWrite(i)), b.step('rb', stepWrite(i)));
    }
    await Promise.all(writes);
    const expected = Array.from({ length: 30 }, (_, i) => i);
    expect(stepsOf(await b.readLog('ra'))).toEqual(expected);
    expect(stepsOf(await a.readLog('rb'))).toEqual(expected);
    expect((await a.listRuns()).map((r) => [r.runId, r.records])).toEqual([
      ['ra', 31],
      ['rb', 31],
    ]);
    await Promise.all([a.close(), b.close()]);
  });

  it('loses no record when two connections append to the same run at once (sequence taken inside the transaction)', async () => {
    const dbName = freshDbName('same-run');
    const a = new IndexedDBStore({ dbName });
    const b = new IndexedDBStore({ dbName });
    await a.runStarted('r', started('r'));
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).step('r', stepWrite(i))));
    expect(stepsOf(await a.readLog('r')).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    await Promise.all([a.close(), b.close()]);
  });

  it('reads a log of 300 records in sequence order, not in string order of the key', async () => {
    const store = new IndexedDBStore({ dbName: freshDbName('long') });
    await store.runStarted('r', started('r'));
    for (let i = 0; i < 300; i++) await store.step('r', stepWrite(i));
    const log = await store.readLog('r');
    expect(log).toHaveLength(301);
    expect(stepsOf(log)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    await store.close();
  });

  it('rejects a waiting acquire with the abort reason and never hands it the lock afterwards', async () => {
    const dbName = freshDbName('abort');
    const holder = await new IndexedDBStore({ dbName }).acquire('r');
    const ac = new AbortController();
    const waiting = new IndexedDBStore({ dbName }).acquire('r', { signal: ac.signal });
    const reason = new Error('user left');
    ac.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await holder();
    const refusing = new IndexedDBStore({ dbName, lease: 'refuse' });
    const next = await refusing.acquire('r');
    await next();
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
    expect((await store.readLog('r')).map((r) => r.kind)).toEqual(['run_started', 'intent', 'result', 'intent', 'step', 'intent', 'result', 'input_request', 'input', 'run_ended']);
    await store.close();
  });

  it('never reports a write as done that an upgrade by another tab in the middle of a burst lost', async () => {
    const dbName = freshDbName('upgrade-mid-write');
    const store = new IndexedDBStore({ dbName, onWarning: () => undefined });
    await store.runStarted('r', started('r'));
    const writes = Array.from({ length: 20 }, (_, i) => store.step('r', stepWrite(i)).then(() => i, () => -1));
    const newer = await openDB(dbName, DB_VERSION + 1);
    const landed = (await Promise.all(writes)).filter((i) => i >= 0);
    const rows = await newer.getAll('records');
    newer.close();
    const stored = rows.flatMap((row: { text: string }) => {
      const rec = JSON.parse(row.text) as { kind: string; step?: { stepIndex: number } };
      return rec.kind === 'step' ? [rec.step?.stepIndex] : [];
    });
    for (const i of landed) expect(stored).toContain(i);
    expect(rows.map((row: { seq: number }) => row.seq)).toEqual(rows.map((_: unknown, i: number) => i));
  });
});
