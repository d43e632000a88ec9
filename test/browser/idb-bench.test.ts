/**
 * IndexedDBStore step cost in Chromium, a benchmark, not a test: skipped by `npm test`
 * and run with `VITE_POLYLOOP_BENCH=1 npx vitest run --project browser test/browser/idb-bench.test.ts`.
 * Prints, in one page: the median of one strict transaction (one record, as a barrier writes it)
 * — the floor —, of an action step's two strict transactions as bare requests (a second floor), the median action and final-answer step of the bench workload on IndexedDBStore
 * (step_started → step_finished, once the step is durable), the strict transactions per step, and
 * `readLog` of a 1,000-step log. Figures go to docs/performance.md.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, run } from '../../src/core/index.ts';
import type { EventSink } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { benchAgent, benchRequest } from '../../bench/fixtures.ts';
import { freshDbName } from './idb-store.cases.ts';
import { openDB } from 'idb';

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

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

/** Count readwrite transactions by durability while `fn` runs. */
async function countTransactions(fn: () => Promise<unknown>): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  const original = IDBDatabase.prototype.transaction;
  IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
    const tx = original.apply(this, args);
    if (args[1] === 'readwrite') seen[tx.durability] = (seen[tx.durability] ?? 0) + 1;
    return tx;
  } as IDBDatabase['transaction'];
  try {
    await fn();
  } finally {
    IDBDatabase.prototype.transaction = original;
  }
  return seen;
}

describe.runIf(import.meta.env['VITE_POLYLOOP_BENCH'] === '1')('IndexedDBStore step cost (bench)', () => {
  it('measures a step next to one strict transaction, and readLog of a 1,000-step log', async () => {
    const floorDb = await openDB(freshDbName('floor'), 1, {
      upgrade: (db) => void db.createObjectStore('t', { autoIncrement: true }),
    });
    const line = JSON.stringify({ kind: 'step', text: 'x'.repeat(400) });
    const strict: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      const tx = floorDb.transaction('t', 'readwrite', { durability: 'strict' });
      await Promise.all([tx.store.add(line), tx.done]);
      strict.push(performance.now() - t0);
    }
    // A second floor: an action step's two strict transactions as bare requests — three adds and
    // a put (held model intent, result, action intent; the run's row), then an add and a put (step).
    const pair: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      for (const adds of [3, 1]) {
        const tx = floorDb.transaction('t', 'readwrite', { durability: 'strict' });
        await Promise.all([...Array.from({ length: adds }, () => tx.store.add(line)), tx.store.put(line, -1), tx.done]);
      }
      pair.push(performance.now() - t0);
    }
    floorDb.close();
    const store = new IndexedDBStore({ dbName: freshDbName('bench') });
    const times = { action: [] as number[], final: [] as number[] };
    const n = 100;
    const tx = await countTransactions(async () => {
      for (let r = 0; r < 3; r++)
        await run(benchAgent(store, n, undefined, timingSink(times)), benchRequest(`b${r}`, n));
    });
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
      strictTransactionMs: median(strict),
      actionStepMs: median(times.action),
      finalStepMs: median(times.final),
      actionStepPerStrict: median(times.action) / median(strict),
      inMemoryActionStepMs: median(memory.action),
      sameRequestsFloorMs: median(pair),
      actionStepPerSameRequests: median(times.action) / median(pair),
      transactionsPer3Runs: tx,
      strictPerStep: (tx['strict'] ?? 0) / (3 * n),
      readLog1000StepsMs: median(reads),
      readLogRecords: records,
    };
    console.log(`IDB BENCH ${JSON.stringify(report)}`);
    expect(records).toBeGreaterThan(3000);
    await Promise.all([store.close(), big.close()]);
  }, 600_000);
});
