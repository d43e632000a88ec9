/**
 * The worker pool of examples/node-workers on a real Postgres: runs posted over HTTP to the
 * example's server, driven by 4 worker processes that are SIGKILLed at random and started again;
 * and the database restarted mid-run (writes in flight fail with StoreError; their jobs' retries
 * resume them). Every run ends as its uninterrupted reference, and each
 * `never` notify ran exactly once (the world's table against the logs). The full 200-run trial
 * is `npm run fuzz:pg`.
 */
import { describe, expect, it } from 'vitest';
import { workerTrial } from '../../postgres/worker-trials.ts';

describe('a pool of worker processes on PostgresStore and pg-boss', () => {
  it('finishes every run as its reference, each notify exactly once, while workers are SIGKILLed at random and restarted and the database restarts mid-run', async () => {
    const report = await workerTrial({
      runs: 24,
      workers: 4,
      concurrency: 2,
      modelDelayMs: 250,
      killEveryMs: [300, 900],
      killForMs: 4_000,
      restartDatabaseAfterMs: 800,
      seed: 17,
      timeoutMs: 150_000,
    });
    expect(report.problems).toEqual([]);
    expect(report.ended).toBe(24);
    expect(report.notifications).toBe(24);
    expect(report.restarts).toBe(1);
    // Not vacuous: workers died while holding runs, and other workers took those runs over.
    expect(report.kills).toBeGreaterThan(3);
    expect(report.retriedJobs).toBeGreaterThan(0);
  }, 180_000);
});
