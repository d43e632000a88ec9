/**
 * IndexedDBStore step cost in Chromium, a benchmark, not a test: skipped by `npm test`
 * and run with `VITE_POLYLOOP_BENCH=1 npx vitest run --project browser test/browser/idb-bench.test.ts`.
 * Prints, in one page: the median action and final-answer step of the bench workload on
 * IndexedDBStore (step_started → step_finished, once the step is durable) beside its floor — two
 * strict readwrite transactions, each adding one row: the two rows an action step of the same
 * workload stored, so the same sizes — and beside one such transaction; the strict transactions
 * and requests per step; `readLog` of a 1,000-step log. The same two transactions ended with
 * `commit()`, as the store ends its own, are a second floor. Rounds alternate floor and workload, so a
 * change of load lands on both. Figures go to docs/performance.md.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, run } from '../../src/core/index.ts';
import type { EventSink } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { benchAgent, benchRequest } from '../../bench/fixtures.ts';
import { freshDbName } from './idb-store.cases.ts';
import { openDB } from 'idb';
import type { IDBPDatabase } from 'idb';

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** Step times (ms) from the step events, split into action steps and final answers. */
function timingSink(into: { action: number[]; final: number[] }): EventSink {
  let t0 = 0;
  return {
    params: { sink: 'step-timer' },
    deliver(e): void {
      if (e.type === 'step_started') t0 = performance.now();
      else if (e.type === 'step_finished')
        (e.step.decision === 'final' ? into.final : into.action).push(performance.now() - t0);
    },
  };
}

/** Count readwrite transactions by durability, and the adds and puts sent, while `fn` runs. */
async function countTransactions(fn: () => Promise<unknown>): Promise<Record<string, number>> {
  const seen: Record<string, number> = { requests: 0 };
  const original = IDBDatabase.prototype.transaction;
  const { add, put } = IDBObjectStore.prototype;
  IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
    const tx = original.apply(this, args);
    if (args[1] === 'readwrite') seen[tx.durability] = (seen[tx.durability] ?? 0) + 1;
    return tx;
  } as IDBDatabase['transaction'];
  IDBObjectStore.prototype.add = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore['add']>) {
    seen['requests'] = (seen['requests'] ?? 0) + 1;
    return add.apply(this, args);
  };
  IDBObjectStore.prototype.put = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore['put']>) {
    seen['requests'] = (seen['requests'] ?? 0) + 1;
    return put.apply(this, args);
  };
  try {
    await fn();
  } finally {
    IDBDatabase.prototype.transaction = original;
    Object.assign(IDBObjectStore.prototype, { add, put });
  }
  return seen;
}

/**
 * One strict readwrite transaction adding `row` under a fresh key: what a barrier costs at least.
 * `commit`: end it with `commit()` as the store does, rather than let the browser find out.
 */
async function strictAdd(db: IDBPDatabase, row: object, seq: number, commit = false): Promise<void> {
  const tx = db.transaction('rows', 'readwrite', { durability: 'strict' });
  const done = Promise.all([tx.store.add({ ...row, runId: 'floor', seq }), tx.done]);
  if (commit) tx.commit();
  await done;
}

describe.runIf(import.meta.env['VITE_POLYLOOP_BENCH'] === '1')('IndexedDBStore step cost (bench)', () => {
  it('measures an action step next to two strict one-row transactions, and readLog of a 1,000-step log', async () => {
    const n = 100;
    const rounds = 5;
    const dbName = freshDbName('bench');
    const store = new IndexedDBStore({ dbName });
    // A warm-up run whose stored rows the floor writes again: step 50's two transactions are rows
    // 100 and 101 (row 0 carries run_started and step 0's first records with its action intent).
    await run(benchAgent(store, n), benchRequest('warm', n));
    const raw = await openDB(dbName);
    const [first, second] = await raw.getAll('records', IDBKeyRange.bound(['warm', 100], ['warm', 101]));
    raw.close();
    if (!first || !second) throw new Error('the warm-up run stored fewer rows than expected');
    const floorDb = await openDB(freshDbName('floor'), 1, {
      upgrade: (db) => void db.createObjectStore('rows', { keyPath: ['runId', 'seq'] }),
    });
    const perRound: { stepMs: number; floorMs: number; ratio: number; runPerStepMs: number; floorLoopMs: number }[] =
      [];
    const all = {
      action: [] as number[],
      final: [] as number[],
      pair: [] as number[],
      single: [] as number[],
      committed: [] as number[],
    };
    let seq = 0;
    let counts: Record<string, number> = {};
    for (let r = 0; r < rounds; r++) {
      const pair: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await strictAdd(floorDb, first, seq++);
        await strictAdd(floorDb, second, seq++);
        const t1 = performance.now();
        await strictAdd(floorDb, first, seq++);
        const t2 = performance.now();
        await strictAdd(floorDb, first, seq++, true);
        await strictAdd(floorDb, second, seq++, true);
        pair.push(t1 - t0);
        all.single.push(t2 - t1);
        all.committed.push(performance.now() - t2);
      }
      const times = { action: [] as number[], final: [] as number[] };
      const t0 = performance.now();
      counts = await countTransactions(() =>
        run(benchAgent(store, n, undefined, timingSink(times)), benchRequest(`b${r}`, n)),
      );
      const runMs = performance.now() - t0;
      all.pair.push(...pair);
      all.action.push(...times.action);
      all.final.push(...times.final);
      perRound.push({
        stepMs: median(times.action),
        floorMs: median(pair),
        ratio: median(times.action) / median(pair),
        runPerStepMs: runMs / n,
        floorLoopMs: sum(pair) / n,
      });
    }
    floorDb.close();
    // The same workload on InMemoryStore: the kernel's own share of a step in this page.
    const memory = { action: [] as number[], final: [] as number[] };
    for (let r = 0; r < 3; r++)
      await run(benchAgent(new InMemoryStore(), n, undefined, timingSink(memory)), benchRequest(`m${r}`, n));
    const big = new IndexedDBStore({ dbName: freshDbName('readlog') });
    await run(benchAgent(big, 1000), benchRequest('long', 1000));
    const reads: number[] = [];
    let records = 0;
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now();
      records = (await big.readLog('long')).length;
      reads.push(performance.now() - t0);
    }
    const report = {
      strictTransactionMs: median(all.single),
      twoStrictTransactionsMs: median(all.pair),
      twoStrictCommittedMs: median(all.committed),
      actionStepMs: median(all.action),
      finalStepMs: median(all.final),
      actionStepPerTwoStrict: median(all.action) / median(all.pair),
      actionStepPerStrict: median(all.action) / median(all.single),
      actionStepPerTwoCommitted: median(all.action) / median(all.committed),
      perRound,
      inMemoryActionStepMs: median(memory.action),
      transactionsAndRequestsPerRun: counts,
      strictPerStep: (counts['strict'] ?? 0) / n,
      rowBytes: [JSON.stringify(first).length, JSON.stringify(second).length],
      readLog1000StepsMs: median(reads),
      readLogRecords: records,
    };
    console.log(`IDB BENCH ${JSON.stringify(report)}`);
    expect(records).toBeGreaterThan(3000);
    await Promise.all([store.close(), big.close()]);
  }, 600_000);
});
