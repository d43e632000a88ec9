/**
 * The fault trial of the worker pool (examples/node-workers): a real Postgres, the example's HTTP
 * server and N worker processes; runs posted over HTTP; workers SIGKILLed at random moments and
 * started again (and, optionally, the database restarted mid-run); then every run checked
 * against its uninterrupted reference, and the world's table against the logs. Used by
 * test/node/platform-postgres/workers.test.ts (a small real version) and `npm run fuzz:pg`.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import pg from 'pg';
import { InMemoryStore, readRunLog, run } from '../../src/core/index.ts';
import type { RunResult, StepRecord } from '../../src/core/index.ts';
import { PostgresStore } from '../../src/platform-postgres/index.ts';
import type { PgPoolLike, PgQuery } from '../../src/platform-postgres/index.ts';
import { weatherAgent, weatherGoal } from '../../examples/node-workers/agent.ts';
import type { RunJob } from '../../examples/node-workers/agent.ts';
import { startPostgres } from './server.ts';
import { random } from '../support/random.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const CITIES = ['Paris', 'Oslo', 'Lima', 'Cairo'];

/** Options of {@link workerTrial}. */
export type TrialOptions = {
  readonly runs: number;
  readonly workers: number;
  /** SIGKILL a random worker every this many ms (uniform in the range) while runs are open; [] for none. */
  readonly killEveryMs: readonly [number, number] | [];
  /** Kill only during this long after the runs were posted (default: until every run ended). */
  readonly killForMs?: number;
  /** Restart the database once, this many ms after the runs were posted. */
  readonly restartDatabaseAfterMs?: number;
  readonly seed: number;
  /** Give up after this long (ms). */
  readonly timeoutMs: number;
  readonly modelDelayMs?: number;
  /** Runs each worker drives at once (default 4). */
  readonly concurrency?: number;
  readonly log?: (line: string) => void;
};

/** What a trial found. */
export type TrialReport = {
  readonly runs: number;
  readonly ended: number;
  readonly kills: number;
  readonly restarts: number;
  /** Runs whose log holds a settle reply (a notify was in doubt after a kill). */
  readonly settled: number;
  /** Jobs pg-boss retried (a worker died with it, or an attempt failed). */
  readonly retriedJobs: number;
  readonly notifications: number;
  readonly seconds: number;
  /** Every broken property, one line each; empty when the trial holds. */
  readonly problems: readonly string[];
};

const timeless = (steps: readonly StepRecord[]): unknown[] =>
  steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);

/** The uninterrupted run of a job on InMemoryStore, its world in memory (it asks nothing). */
async function reference(job: RunJob): Promise<RunResult> {
  const world: PgPoolLike = {
    query: async (_q: PgQuery) => ({ rows: [], rowCount: 1 }),
    connect: () => Promise.reject(new Error('unused')),
  };
  return run(weatherAgent(new InMemoryStore(), world, { delayMs: 0 }), job);
}

function start(script: string, env: Record<string, string>, log: (l: string) => void): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'examples/node-workers', script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => log(`[${script} ${child.pid}] ${d.toString().trimEnd()}`));
  child.stderr?.on('data', (d: Buffer) => log(`[${script} ${child.pid}] ${d.toString().trimEnd()}`));
  return child;
}

function waitForLine(child: ChildProcess, pattern: RegExp, ms: number): Promise<RegExpExecArray> {
  return new Promise((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${String(pattern)} within ${ms} ms`)), ms);
    const onData = (d: Buffer): void => {
      const m = pattern.exec(d.toString());
      if (!m) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      resolveLine(m);
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${String(code)} before ${String(pattern)}`)));
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Run one trial; resolves with its report (problems listed, never thrown). */
export async function workerTrial(opts: TrialOptions): Promise<TrialReport> {
  const log = opts.log ?? (() => undefined);
  const rnd = random(opts.seed);
  const db = await startPostgres();
  const env = {
    DATABASE_URL: db.url,
    LEASE_MS: '2000',
    MODEL_DELAY_MS: String(opts.modelDelayMs ?? 150),
    WORKER_CONCURRENCY: String(opts.concurrency ?? 4),
  };
  const children = new Set<ChildProcess>();
  const spawnKnown = (script: string, extra: Record<string, string> = {}): ChildProcess => {
    const c = start(script, { ...env, ...extra }, log);
    children.add(c);
    c.once('exit', () => children.delete(c));
    return c;
  };
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  pool.on('error', () => undefined);
  const t0 = Date.now();
  let kills = 0;
  let restarts = 0;
  try {
    const server = spawnKnown('server.ts', { PORT: '0' });
    const port = Number((await waitForLine(server, /listening on (\d+)/, 60_000))[1]);
    const workers: ChildProcess[] = [];
    for (let i = 0; i < opts.workers; i++) workers.push(spawnKnown('worker.ts'));
    await Promise.all(workers.map((w) => waitForLine(w, /ready/, 60_000)));
    const jobs: RunJob[] = Array.from({ length: opts.runs }, (_, i) => ({
      runId: `run-${i}`,
      goal: weatherGoal(CITIES[i % CITIES.length] as string),
    }));
    for (const job of jobs) {
      const res = await fetch(`http://127.0.0.1:${port}/runs`, { method: 'POST', body: JSON.stringify(job) });
      if (res.status !== 202) throw new Error(`POST /runs answered ${res.status}: ${await res.text()}`);
    }
    const posted = Date.now();
    const endedCount = async (): Promise<number> => {
      const r = await pool
        .query(`SELECT count(*)::int AS n FROM polyloop.records WHERE kind = 'run_ended'`)
        .catch(() => null);
      return r ? Number(r.rows[0].n) : -1;
    };
    let nextKill =
      opts.killEveryMs.length === 2
        ? Date.now() + opts.killEveryMs[0] + rnd() * (opts.killEveryMs[1] - opts.killEveryMs[0])
        : Infinity;
    let restartAt = opts.restartDatabaseAfterMs === undefined ? Infinity : posted + opts.restartDatabaseAfterMs;
    while ((await endedCount()) < opts.runs) {
      if (Date.now() - t0 > opts.timeoutMs) break;
      if (Date.now() >= restartAt) {
        restartAt = Infinity;
        log(`restarting the database`);
        await db.restart();
        restarts++;
      }
      if (Date.now() >= nextKill && Date.now() - posted < (opts.killForMs ?? Infinity)) {
        const i = Math.floor(rnd() * workers.length);
        const victim = workers[i] as ChildProcess;
        victim.kill('SIGKILL');
        kills++;
        log(`SIGKILL worker ${victim.pid}`);
        workers[i] = spawnKnown('worker.ts');
        const [lo, hi] = opts.killEveryMs as [number, number];
        nextKill = Date.now() + lo + rnd() * (hi - lo);
      }
      await sleep(50);
    }
    const report = await check(pool, jobs, opts);
    return { ...report, kills, restarts, seconds: (Date.now() - t0) / 1000 };
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await pool.end();
    await db.stop();
  }
}

/** Every run ended as its reference; each notify ran at most once, exactly once where the log says it did. */
async function check(
  pool: pg.Pool,
  jobs: readonly RunJob[],
  _opts: TrialOptions,
): Promise<Omit<TrialReport, 'kills' | 'restarts' | 'seconds'>> {
  const store = new PostgresStore({ pool });
  const problems: string[] = [];
  let ended = 0;
  let settled = 0;
  const sent = await pool.query(`SELECT run_id, count(*)::int AS n FROM notifications GROUP BY run_id`);
  const notified = new Map<string, number>(sent.rows.map((r: { run_id: string; n: number }) => [r.run_id, r.n]));
  const refs = new Map<string, unknown>();
  for (const job of jobs) {
    const log = await store.readLog(job.runId);
    const view = readRunLog(log);
    if (view.state !== 'ended') {
      problems.push(`${job.runId}: ${view.state} after the trial`);
      continue;
    }
    ended++;
    if (log.some((r) => r.kind === 'input')) settled++;
    let ref = refs.get(job.goal);
    if (!ref) refs.set(job.goal, (ref = timeless((await reference({ runId: 'ref', goal: job.goal })).trajectory)));
    const mine = JSON.stringify(timeless(view.trajectory)).replaceAll(job.runId, 'ref');
    if (mine !== JSON.stringify(ref)) problems.push(`${job.runId}: trajectory differs from the reference: ${mine}`);
    const executed = view.trajectory.filter(
      (s) => (s.actionRepr ?? '').startsWith('notify') && s.actionStatus === 'executed',
    ).length;
    const n = notified.get(job.runId) ?? 0;
    if (n > 1) problems.push(`${job.runId}: notify ran ${n} times`);
    if (n !== executed)
      problems.push(`${job.runId}: the log says notify executed ${executed} times, the world saw ${n}`);
  }
  const retried = await pool
    .query(`SELECT count(*)::int AS n FROM pgboss.job WHERE retry_count > 0`)
    .catch(() => ({ rows: [{ n: -1 }] }));
  return {
    runs: jobs.length,
    ended,
    settled,
    retriedJobs: Number(retried.rows[0]?.n ?? -1),
    notifications: [...notified.values()].reduce((a, b) => a + b, 0),
    problems,
  };
}
