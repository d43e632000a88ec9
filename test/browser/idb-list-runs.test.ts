/**
 * What `listRuns` costs now that it reads every log through `readRunLog` instead of a flag kept
 * beside it (decision 0021): 100 runs of 50 records in real Chromium. The figure is printed for
 * the decision note, not asserted (two shared cores make timings noisy).
 */
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { encodeRecord } from '../../src/core/index.ts';
import type { LogRecord } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { actionIntent, ended, modelIntent, modelResult, started, stepWrite } from '../contract/run-store.contract.ts';
import { freshDbName } from './idb-store.cases.ts';

const RUNS = 100;
const STEPS = 12; // run_started + 12 × 4 + run_ended = 50 records

function fiftyRecords(runId: string): LogRecord[] {
  const steps = Array.from({ length: STEPS }, (_, i) => [
    modelIntent(i),
    modelResult(i),
    actionIntent(i),
    stepWrite(i),
  ]).flat();
  return [started(runId), ...steps, ended(STEPS)];
}

/** Seed rows in the store's own layout in one transaction: the seeding is not what is measured. */
async function seed(dbName: string): Promise<void> {
  const db = await openDB(dbName);
  const tx = db.transaction(['records', 'runs'], 'readwrite');
  const puts: Promise<unknown>[] = [];
  for (let r = 0; r < RUNS; r++) {
    const runId = `run-${String(r).padStart(3, '0')}`;
    const log = fiftyRecords(runId);
    log.forEach((rec, seq) => puts.push(tx.objectStore('records').put({ runId, seq, text: encodeRecord(rec) })));
    puts.push(tx.objectStore('runs').put({ runId, nextSeq: log.length }));
  }
  await Promise.all([...puts, tx.done]);
  db.close();
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

describe('IndexedDBStore.listRuns over 100 runs of 50 records (Chromium)', () => {
  it('reads every log through readRunLog and lists each run as ended after its 12 steps', async () => {
    const dbName = freshDbName('list-cost');
    const store = new IndexedDBStore({ dbName });
    await store.readLog('warm-up'); // creates the schema
    await seed(dbName);
    const times: number[] = [];
    let runs = await store.listRuns();
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now();
      runs = await store.listRuns();
      times.push(performance.now() - t0);
    }
    const perRun: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      for (const r of runs) await store.readLog(r.runId);
      perRun.push(performance.now() - t0);
    }
    expect(runs).toHaveLength(RUNS);
    expect(
      runs.every((r) => r.state === 'ended' && r.ended && r.steps === STEPS && r.records === 50 && r.error === null),
    ).toBe(true);
    console.log(
      `listRuns, ${RUNS} runs × 50 records: median ${median(times).toFixed(1)} ms (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}); ${RUNS} readLog calls in sequence: median ${median(perRun).toFixed(1)} ms`,
    );
    await store.close();
  });
});
