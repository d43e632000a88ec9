/**
 * The job queue of the example: pg-boss on the same database. A run is one job; a worker that
 * dies stops the job's heartbeat, and pg-boss hands it to another worker within
 * `heartbeatSeconds` (+ its monitor interval), which resumes the run. Decision 0037.
 */
import { PgBoss } from 'pg-boss';
import { QUEUE } from './agent.ts';
import type { RunJob } from './agent.ts';

/** How long a job's worker may go without a heartbeat before pg-boss retries it elsewhere (pg-boss's minimum). */
export const JOB_HEARTBEAT_SECONDS = 10;

/** A started pg-boss on `url` with the runs queue created. */
export async function startBoss(url: string): Promise<PgBoss> {
  // A dead worker is noticed by the monitor: check every second, not every minute.
  const boss = new PgBoss({
    connectionString: url,
    schema: 'pgboss',
    monitorIntervalSeconds: 1,
    superviseIntervalSeconds: 1,
    max: 4,
  });
  boss.on('error', (e: unknown) => console.error(`pg-boss: ${e instanceof Error ? e.message : String(e)}`));
  await boss.start();
  // Retried until the run ends: a failed attempt (the database restarting) is resumed by the next.
  // `exclusive`: at most one job per run id (singletonKey) waiting, retrying or running; the
  // default policy ignores singletonKey, and a run posted twice would be driven by two jobs.
  await boss
    .createQueue(QUEUE, {
      policy: 'exclusive',
      heartbeatSeconds: JOB_HEARTBEAT_SECONDS,
      retryLimit: 1_000,
      retryDelay: 1,
      expireInSeconds: 3_600,
    })
    .catch((e: unknown) => {
      if (!/already exists/i.test(String(e))) throw e;
    });
  return boss;
}

/**
 * Queue a run: its job, or null when the run already has one waiting, retrying or running (the
 * queue's `exclusive` policy keys jobs by run id, so a run posted twice is driven by one job).
 */
export async function enqueueRun(boss: PgBoss, job: RunJob): Promise<string | null> {
  return boss.send(QUEUE, { runId: job.runId, goal: job.goal }, { singletonKey: job.runId });
}
