/**
 * IndexedDBStore's stop requests in real Chromium: a request made in another context (a worker,
 * with its own IndexedDB connection and BroadcastChannel, as a second tab has) reaches the context
 * that holds the run's Web Lock; one made while no one holds it is seen at the next `acquire`; a
 * request whose broadcast was missed is still seen (the holder re-reads the key); a stolen Web Lock
 * aborts `lost` with `LeaseLostError`; the stop key never shows in a log; a new run of an id whose
 * log is gone does not see an earlier run's stop. Outcomes only, no durations. The whole proof
 * through `run`/`resume` in separate Chromium tabs: test/node/e2e-web/idb-stop.test.ts.
 */
import { deleteDB, openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { isPolyLoopError, requestStop } from '../../src/core/index.ts';
import type { ReleaseLease } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { leaseName } from '../../src/platform-web/lease.ts';
import { actionIntent, ended, modelIntent, modelResult, started, stepWrite } from '../contract/run-store.contract.ts';
import { freshDbName } from './idb-store.cases.ts';

/** `requestStop` from a worker of this origin; resolves with `'stopped'` or the failure's text. */
function stopFromAnotherContext(dbName: string, runId: string, reason?: string): Promise<string> {
  const worker = new Worker(new URL('./idb-stop.worker.ts', import.meta.url), { type: 'module' });
  return new Promise<string>((resolve, reject) => {
    worker.addEventListener('message', (e: MessageEvent<string>) => resolve(e.data), { once: true });
    worker.addEventListener('error', (e) => reject(new Error(`the worker failed: ${e.message}`)), { once: true });
    worker.postMessage({ dbName, runId, ...(reason === undefined ? {} : { reason }) });
  }).finally(() => worker.terminate());
}

/** The reason `signal` aborts with, once it does. */
function abortReason(signal: AbortSignal | undefined): Promise<unknown> {
  if (!signal) return Promise.reject(new Error('the lease carries no lost signal'));
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

/** A store holding a run of one step, all stored (the step is a barrier: what was held lands with it). */
async function storedRun(
  dbName: string,
  runId: string,
  store = new IndexedDBStore({ dbName }),
): Promise<IndexedDBStore> {
  await store.runStarted(runId, started(runId));
  await store.intent(runId, modelIntent(0));
  await store.result(runId, 's0.model', modelResult(0));
  await store.intent(runId, actionIntent(0));
  await store.step(runId, stepWrite(0));
  return store;
}

/** The stop row as the store keeps it in `runs` (documented in docs/log-format.md), read raw. */
async function rawStopRow(dbName: string, runId: string): Promise<unknown> {
  const db = await openDB(dbName);
  try {
    return await db.get('runs', ['stop', runId]);
  } finally {
    db.close();
  }
}

function expectStop(reason: unknown, runId: string, stop: { reason?: string }): void {
  expect(isPolyLoopError(reason, 'stop_requested')).toBe(true);
  expect(reason).toMatchObject({ name: 'StopRequestedError', runId, stop });
}

async function cleanUp(dbName: string, ...stores: IndexedDBStore[]): Promise<void> {
  await Promise.all(stores.map((s) => s.close()));
  await deleteDB(dbName);
}

describe('IndexedDBStore stop requests (Chromium)', () => {
  it("aborts the lease holder's lost signal with StopRequestedError and the reason when another context asks the run to stop", async () => {
    const dbName = freshDbName('stop-held');
    const store = await storedRun(dbName, 'r');
    const release: ReleaseLease = await store.acquire('r');
    expect(release.lost?.aborted).toBe(false);
    expect(await stopFromAnotherContext(dbName, 'r', 'the customer cancelled')).toBe('stopped');
    expectStop(await abortReason(release.lost), 'r', { reason: 'the customer cancelled' });
    await release();
    await cleanUp(dbName, store);
  });

  it('gives the next acquire a lost signal already aborted when the stop was asked while no one held the run', async () => {
    const dbName = freshDbName('stop-idle');
    const store = await storedRun(dbName, 'r');
    expect(await stopFromAnotherContext(dbName, 'r')).toBe('stopped');
    const release = await new IndexedDBStore({ dbName }).acquire('r');
    expect(release.lost?.aborted).toBe(true);
    expectStop(release.lost?.reason, 'r', {});
    await release();
    // The request stays until the run ends (an ended run ignores it): every later driver sees it.
    const again = await store.acquire('r');
    expectStop(again.lost?.reason, 'r', {});
    await again();
    await cleanUp(dbName, store);
  });

  it('reaches the holder in the same page, through its own store or another instance', async () => {
    const dbName = freshDbName('stop-same-page');
    const store = await storedRun(dbName, 'r');
    const release = await store.acquire('r');
    await requestStop(store, 'r', 'from the same store');
    expectStop(await abortReason(release.lost), 'r', { reason: 'from the same store' });
    await release();
    await storedRun(dbName, 's', store);
    const holding = await store.acquire('s');
    await requestStop(new IndexedDBStore({ dbName }), 's', 'from another instance');
    expectStop(await abortReason(holding.lost), 's', { reason: 'from another instance' });
    await holding();
    await cleanUp(dbName, store);
  });

  it('reaches the holder when the broadcast is missed: the holder re-reads the durable key', async () => {
    const dbName = freshDbName('stop-missed');
    const store = await storedRun(dbName, 'r');
    const release = await store.acquire('r');
    // The key alone, as a tab that closed before its broadcast went out leaves it.
    const db = await openDB(dbName);
    await db.put('runs', { runId: ['stop', 'r'], stop: { reason: 'written, never announced' } });
    db.close();
    expectStop(await abortReason(release.lost), 'r', { reason: 'written, never announced' });
    await release();
    await cleanUp(dbName, store);
  });

  it('keeps the stop out of every log: readLog, listRuns and a raw read of the records are as before', async () => {
    const dbName = freshDbName('stop-invisible');
    const store = await storedRun(dbName, 'r');
    const log = await store.readLog('r');
    const runs = await store.listRuns();
    expect(await stopFromAnotherContext(dbName, 'r', 'stop')).toBe('stopped');
    expect(await store.readLog('r')).toEqual(log);
    expect(await store.listRuns()).toEqual(runs);
    // `records` holds the log's two transactions only (the step's first four records rode with its
    // action intent), and `runs` the stop alone.
    const db = await openDB(dbName);
    expect(await db.getAllKeys('records')).toEqual([
      ['r', 0],
      ['r', 1],
    ]);
    expect(await db.getAllKeys('runs')).toEqual([['stop', 'r']]);
    db.close();
    expect(await rawStopRow(dbName, 'r')).toEqual({ runId: ['stop', 'r'], stop: { reason: 'stop' } });
    await cleanUp(dbName, store);
  });

  it("does not let a new run of an id whose log is gone see an earlier run's stop, and clears it when the run starts", async () => {
    const dbName = freshDbName('stop-stale');
    const store = await storedRun(dbName, 'r');
    expect(await stopFromAnotherContext(dbName, 'r', 'old')).toBe('stopped');
    await store.close();
    // The earlier run's log is removed by hand; its stop request stays behind.
    const db = await openDB(dbName);
    await db.delete('records', IDBKeyRange.bound(['r', 0], ['r', Number.POSITIVE_INFINITY]));
    db.close();
    const fresh = new IndexedDBStore({ dbName });
    const release = await fresh.acquire('r');
    expect(release.lost?.aborted).toBe(false);
    await storedRun(dbName, 'r', fresh);
    expect(await rawStopRow(dbName, 'r')).toBeUndefined();
    expect(release.lost?.aborted).toBe(false);
    await release();
    const next = await fresh.acquire('r');
    expect(next.lost?.aborted).toBe(false);
    await next();
    await cleanUp(dbName, fresh);
  });

  it('does nothing to a run that has ended, and refuses a run without a log with RunNotFoundError', async () => {
    const dbName = freshDbName('stop-ended');
    const store = await storedRun(dbName, 'r');
    await store.runEnded('r', ended(1));
    expect(await stopFromAnotherContext(dbName, 'r')).toBe('stopped');
    expect(await rawStopRow(dbName, 'r')).toBeUndefined();
    expect(await stopFromAnotherContext(dbName, 'nobody')).toMatch(/^failed: RunNotFoundError/);
    await cleanUp(dbName, store);
  });

  it('aborts lost with LeaseLostError when another context steals the Web Lock, and drops what it held unwritten', async () => {
    const dbName = freshDbName('stolen');
    const store = await storedRun(dbName, 'r');
    const release = await store.acquire('r');
    // A result alone is held in memory for the run's next transaction (decision 0043).
    await store.result('r', 's1.model', modelResult(1));
    let letGo: () => void = () => undefined;
    const thief = navigator.locks.request(
      leaseName(dbName, 'r'),
      { steal: true },
      () => new Promise<void>((r) => (letGo = r)),
    );
    const reason = await abortReason(release.lost);
    expect(isPolyLoopError(reason, 'lease_lost')).toBe(true);
    expect(reason).toMatchObject({ name: 'LeaseLostError', runId: 'r' });
    await release();
    // Committed after the thief's writes it would land out of order: a crash would have lost it too.
    expect(await new IndexedDBStore({ dbName }).readLog('r')).toHaveLength(5);
    letGo();
    await thief;
    await cleanUp(dbName, store);
  });
});
