/**
 * The job queue of the example: pg-boss on the same database. A run is one job; a worker that
 * dies stops the job's heartbeat, and pg-boss hands it to another worker within
 * `heartbeatSeconds` (+ its monitor interval), which resumes the run. Decision 0037.
 */
import { PgBoss } from 'pg-boss';
import { QUEUE } from './agent.ts';

/** How long a job's worker may go without a heartbeat before pg-boss retries it elsewhere (pg-boss's minimum). */
export const JOB_HEARTBEAT_SECONDS = 10;

/** A started pg-boss on `url` with the runs queue created. */
export async function startBoss(url: string): Promise<PgBoss> {
  // A dead worker is noticed by the monitor: check every second, not every minute.
  const boss = new PgBoss({ connectionString: url, schema: 'pgboss', monitorIntervalSeconds: 1, superviseIntervalSeconds: 1, max: 4 });
  boss.on('error', (e: unknown) => console.error(`pg-boss: ${e instanceof Error ? e.message : String(e)}`));
  await boss.start();
  // Retried until the run ends: a failed attempt (the database restarting) is resumed by the next.
  await boss.createQueue(QUEUE, { heartbeatSeconds: JOB_HEARTBEAT_SECONDS, retryLimit: 1_000, retryDelay: 1, expireInSeconds: 3_600 }).catch((e: unknown) => {
    if (!/already exists/i.test(String(e))) throw e;
  });
  return boss;
}
