/**
 * One worker process: takes run jobs from the queue and drives each run to its end — `run` for a
 * new one, `resume` for one another worker started (and died in), answering a notification left
 * in doubt from the world's table. Start as many as you like, on as many machines:
 *
 *   DATABASE_URL=postgres://… npx tsx examples/node-workers/worker.ts
 *
 * Environment: DATABASE_URL (required), WORKER_CONCURRENCY (runs at once, default 4),
 * LEASE_MS (the run lease, default 5000), MODEL_DELAY_MS (the stand-in model's latency, default 20).
 */
import pg from 'pg';
import { isPolyLoopError, resume, run } from '../../src/core/index.ts';
import type { RunResult } from '../../src/core/index.ts';
import { PostgresStore } from '../../src/platform-postgres/index.ts';
import { agentFor, QUEUE, settleFromWorld } from './agent.ts';
import type { RunJob } from './agent.ts';
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

/** Drive one run to its end, whoever started it; a throw fails the job, and pg-boss retries it. */
async function drive(job: RunJob): Promise<RunResult> {
  const build = () => agentFor(store, pool, job, delayMs);
  let result: RunResult;
  try {
    const { agent, request } = build();
    result = await run(agent, request);
  } catch (e) {
    if (!isPolyLoopError(e, 'run_exists')) throw e;
    const { agent, request } = build();
    result = await resume(agent, request);
  }
  for (let asked = 0; result.pending !== null; asked++) {
    if (asked > 3) throw new Error(`run ${job.runId} keeps asking`);
    const reply = await settleFromWorld(pool, job.runId, result.pending);
    const { agent, request } = build();
    result = await resume(agent, request, { input: reply });
  }
  return result;
}

const boss = await startBoss(url);
await boss.work<RunJob>(QUEUE, { localConcurrency: concurrency, pollingIntervalSeconds: 0.5 }, async ([job]) => {
  if (!job) return;
  const result = await drive(job.data);
  console.log(`worker ${process.pid}: ${job.data.runId} ${result.stopReason}`);
});
console.log(`worker ${process.pid}: ready`);

const stop = async (): Promise<void> => {
  await boss.stop({ graceful: true, timeout: 5_000 });
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
