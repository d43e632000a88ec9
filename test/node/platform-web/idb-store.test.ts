/**
 * IndexedDBStore under fake-indexeddb: the quick Node run. Node has no Web Locks, so these runs
 * also prove the documented fallback lease (exclusion within this realm, one warning).
 * The real proof is Chromium: test/browser/idb-store.test.ts.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { isPolyLoopError } from '../../../src/core/index.ts';
import { IndexedDBStore } from '../../../src/platform-web/index.ts';
import { freshDbName, indexedDbStoreCases } from '../../browser/idb-store.cases.ts';
import { runStoreContract, started, stepWrite } from '../../contract/run-store.contract.ts';

const quiet = (): void => undefined;

runStoreContract(
  'IndexedDBStore (fake-indexeddb, waiting lease)',
  () => new IndexedDBStore({ dbName: freshDbName('contract'), onWarning: quiet }),
  { lease: 'waits' },
);
runStoreContract(
  'IndexedDBStore (fake-indexeddb, refusing lease)',
  () => new IndexedDBStore({ dbName: freshDbName('contract'), lease: 'refuse', onWarning: quiet }),
  { lease: 'refuses' },
);
indexedDbStoreCases('fake-indexeddb');

describe('IndexedDBStore without Web Locks', () => {
  it('warns once that its lease only excludes drivers in this page', async () => {
    const warnings: string[] = [];
    const store = new IndexedDBStore({ dbName: freshDbName('nolocks'), onWarning: (m) => warnings.push(m) });
    expect((globalThis as { navigator?: { locks?: unknown } }).navigator?.locks).toBeUndefined();
    const release = await store.acquire('r');
    await release();
    await (await store.acquire('r'))();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/Web Locks/);
  });

  it('excludes a second store instance in the same realm from a held run', async () => {
    const dbName = freshDbName('nolocks');
    const first = new IndexedDBStore({ dbName, onWarning: quiet });
    const second = new IndexedDBStore({ dbName, lease: 'refuse', onWarning: quiet });
    const release = await first.acquire('r');
    const err = await second.acquire('r').then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(err, 'run_locked')).toBe(true);
    await release();
    await (await second.acquire('r'))();
  });

  it('hands a waiting lease over in request order once the holder releases', async () => {
    const store = new IndexedDBStore({ dbName: freshDbName('nolocks'), onWarning: quiet });
    const order: string[] = [];
    const release = await store.acquire('r');
    const a = store.acquire('r').then((rel) => (order.push('a'), rel));
    const b = store.acquire('r').then((rel) => (order.push('b'), rel));
    await release();
    await (await a)();
    await (await b)();
    expect(order).toEqual(['a', 'b']);
  });
});

describe('IndexedDBStore stop requests without Web Locks', () => {
  /** A run with a stored log; a lone step is a barrier, so what the run held lands with it. */
  const storedRun = async (dbName: string): Promise<IndexedDBStore> => {
    const store = new IndexedDBStore({ dbName, onWarning: quiet });
    await store.runStarted('r', started('r'));
    await store.step('r', stepWrite(0));
    return store;
  };

  it('gives the next acquire a lost signal already aborted with the stop asked while no one held the run', async () => {
    const dbName = freshDbName('stop');
    await storedRun(dbName);
    // Asked through the store's own method: a lone step is no log readRunLog accepts.
    await new IndexedDBStore({ dbName, onWarning: quiet }).requestStop('r', { reason: 'enough' });
    const release = await new IndexedDBStore({ dbName, onWarning: quiet }).acquire('r');
    expect(release.lost?.aborted).toBe(true);
    expect(release.lost?.reason).toMatchObject({ code: 'stop_requested', runId: 'r', stop: { reason: 'enough' } });
    await release();
  });

  it("aborts the holder's lost signal when another store instance asks the run to stop", async () => {
    const dbName = freshDbName('stop');
    const store = await storedRun(dbName);
    const release = await store.acquire('r');
    const aborted = new Promise((resolve) => release.lost?.addEventListener('abort', resolve, { once: true }));
    await new IndexedDBStore({ dbName, onWarning: quiet }).requestStop('r', {});
    await aborted;
    expect(release.lost?.reason).toMatchObject({ code: 'stop_requested', runId: 'r', stop: {} });
    await release();
  });
});
