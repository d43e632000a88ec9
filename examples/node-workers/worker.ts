/**
 * One worker process: takes run jobs from the queue and drives each run to its end — `run(agent,
 * { runId, goal })` for a new one, `resume(agent, runId)` for one another worker started (and died
 * in): the run's log holds its request, the agent its tools. A notification left in doubt is
 * answered from the world's table. Start as many as you like, on as many machines:
 *
 *   DATABASE_URL=postgres://… npx tsx examples/node-workers/worker.ts
 *
 * Environment: DATABASE_URL (required), WORKER_CONCURRENCY (runs at once, default 4),
 * LEASE_MS (the run lease, default 5000), MODEL_DELAY_MS (the stand-in model's latency, default 20).
 */
import pg from 'pg';
import { PostgresStore } from '../../src/platform-postgres/index.ts';
import { QUEUE, weatherAgent } from './agent.ts';
import type { RunJob } from './agent.ts';
import { driveJob } from './jobs.ts';
import { startBoss } from './queue.ts';

const url = process.env['DATABASE_URL'];
if (!url) throw new Error('worker: set DATABASE_URL');
const concurrency = Number(process.env['WORKER_CONCURRENCY'] ?? 4);
const leaseMs = Number(process.env['LEASE_MS'] ?? 5_000);
const delayMs = Number(process.env['MODEL_DELAY_MS'] ?? 20);

const pool = new pg.Pool({ connectionString: url, max: concurrency + 2 });
// A database restart drops idle connections; the next query opens a new one.
pool.on('error', (e) => console.error(`worker ${process.pid}: idle connection lost: ${e.message}`));
// 'wait': a run whose previous worker died is taken as soon as that worker's lease expires.
const store = new PostgresStore({ pool, leaseMs, lease: 'wait', owner: `worker pid ${process.pid}` });
// One agent for every run: what they share is its defaults; each run's own request is in its log.
const agent = weatherAgent(store, pool, { delayMs });

const boss = await startBoss(url);
await boss.work<RunJob>(QUEUE, { localConcurrency: concurrency, pollingIntervalSeconds: 0.5 }, async ([job]) => {
  if (!job) return;
  // A throw fails the job, and pg-boss retries it.
  const outcome = await driveJob(agent, pool, job.data);
  const { runId } = job.data;
  if ('left' in outcome) console.error(`worker ${process.pid}: ${runId} left for an operator: ${outcome.left}`);
  else console.log(`worker ${process.pid}: ${runId} ${outcome.result.stopReason}`);
});
console.log(`worker ${process.pid}: ready`);

const stop = async (): Promise<void> => {
  await boss.stop({ graceful: true, timeout: 5_000 });
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
