/**
 * The example worker pool's queue (examples/node-workers/queue.ts) on a real Postgres: a run is
 * one job, so posting the same run again while its job waits, retries or runs queues nothing; a
 * job carries the run's id and goal, nothing else of its request.
 */
import { describe, expect, it } from 'vitest';
import { enqueueRun, startBoss } from '../../../examples/node-workers/queue.ts';
import { QUEUE, weatherGoal } from '../../../examples/node-workers/agent.ts';
import { usePostgres } from '../../postgres/fixture.ts';

const db = usePostgres();

describe('the example worker pool queue', () => {
  it('queues a run posted twice once while its job is waiting or running, and another run apart', async () => {
    const boss = await startBoss(db.server().url);
    try {
      const r1 = { runId: 'r1', goal: weatherGoal('Paris') };
      const first = await enqueueRun(boss, r1);
      expect(first).not.toBeNull();
      expect(await enqueueRun(boss, r1)).toBeNull();
      // A worker took it: still one job for the run, which carries the run's id and goal alone.
      const [taken] = await boss.fetch(QUEUE);
      expect(taken?.id).toBe(first);
      expect(taken?.data).toEqual({ runId: 'r1', goal: 'What is the weather in Paris? Tell ops.' });
      expect(await enqueueRun(boss, r1)).toBeNull();
      expect(await enqueueRun(boss, { runId: 'r2', goal: weatherGoal('Oslo') })).not.toBeNull();
      const jobs = await db
        .pool()
        .query(`SELECT singleton_key AS run, count(*)::int AS n FROM pgboss.job GROUP BY 1 ORDER BY 1`);
      expect(jobs.rows).toEqual([
        { run: 'r1', n: 1 },
        { run: 'r2', n: 1 },
      ]);
    } finally {
      await boss.stop({ graceful: false });
    }
  }, 60_000);
});
