/**
 * The worker pool of examples/node-workers on a real Postgres: runs posted over HTTP to the
 * example's server, driven by 4 worker processes that are SIGKILLed at random and started again;
 * and a database restarted mid-run. Every run ends as its uninterrupted reference, and each
 * `never` notify ran exactly once (the world's table against the logs). The full 200-run trial
 * is `npm run fuzz:pg`.
 */
import { describe, expect, it } from 'vitest';
import { workerTrial } from '../../postgres/worker-trials.ts';

describe('a pool of worker processes on PostgresStore and pg-boss', () => {
  it('finishes every run as its reference, each notify exactly once, while workers are SIGKILLed at random and restarted', async () => {
    const report = await workerTrial({ runs: 24, workers: 4, killEveryMs: [400, 1200], seed: 17, timeoutMs: 150_000 });
    expect(report.problems).toEqual([]);
    expect(report.ended).toBe(24);
    expect(report.notifications).toBe(24);
    // Not vacuous: workers died while holding runs, and other workers took those runs over.
    expect(report.kills).toBeGreaterThan(3);
    expect(report.retriedJobs).toBeGreaterThan(0);
  }, 180_000);

  it('finishes every run as its reference when the database restarts mid-run: runs carry on, or fail with StoreError and are resumed by a retry of their job', async () => {
    const report = await workerTrial({ runs: 16, workers: 2, killEveryMs: [], restartDatabaseAfterMs: 700, seed: 3, timeoutMs: 150_000 });
    expect(report.problems).toEqual([]);
    expect(report.restarts).toBe(1);
    expect(report.ended).toBe(16);
    expect(report.notifications).toBe(16);
  }, 180_000);
});
