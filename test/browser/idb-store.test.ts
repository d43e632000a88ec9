/**
 * IndexedDBStore in real Chromium: real IndexedDB, real Web Locks. The shared contract suite in
 * both lease modes, the IndexedDB cases, a lock held by another context (a worker), a waiting
 * acquire aborted, and a long log read in sequence order.
 * A full quota is proven in test/e2e-web (it needs a CDP quota override on a real page).
 */
import { describe, expect, it } from 'vitest';
import { isPolyLoopError } from '../../src/core/index.ts';
import type { LogRecord } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { leaseName } from '../../src/platform-web/lease.ts';
import { runStoreContract, started, stepWrite } from '../contract/run-store.contract.ts';
import { expectUnknownOption } from '../contract/unknown-option.ts';
import { freshDbName, indexedDbStoreCases } from './idb-store.cases.ts';

runStoreContract(
  'IndexedDBStore (Chromium, waiting lease)',
  () => new IndexedDBStore({ dbName: freshDbName('contract') }),
  { lease: 'waits' },
);
runStoreContract(
  'IndexedDBStore (Chromium, refusing lease)',
  () => new IndexedDBStore({ dbName: freshDbName('contract'), lease: 'refuse' }),
  { lease: 'refuses' },
);
indexedDbStoreCases('Chromium');

// Steps are barriers: each is its own transaction (results alone would be held in memory, decision 0043).
const stepsOf = (log: readonly LogRecord[]): number[] =>
  log.flatMap((r) => (r.kind === 'step' ? [r.step.stepIndex] : []));

describe('IndexedDBStore in a real browser', () => {
  it('refuses an option it does not know, naming the one it most likely meant', async () => {
    await expectUnknownOption(
      () => new IndexedDBStore({ dbName: freshDbName('opts'), leases: 'refuse' } as never),
      'leases',
      'lease',
    );
    await expectUnknownOption(() => new IndexedDBStore({ dbname: freshDbName('opts') } as never), 'dbname', 'dbName');
  });

  it('refuses a run whose Web Lock a worker holds, and gets it once that worker is gone', async () => {
    const dbName = freshDbName('worker');
    const name = leaseName(dbName, 'r');
    const source = `navigator.locks.request(${JSON.stringify(name)}, () => { postMessage('held'); return new Promise(() => {}); });`;
    const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    const worker = new Worker(url);
    await new Promise((resolve) => worker.addEventListener('message', resolve, { once: true }));
    const refusing = new IndexedDBStore({ dbName, lease: 'refuse' });
    const err = await refusing.acquire('r').then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(err, 'run_locked')).toBe(true);
    const waiting = new IndexedDBStore({ dbName }).acquire('r');
    worker.terminate();
    URL.revokeObjectURL(url);
    const release = await waiting;
    await release();
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
});
