/**
 * `node --expose-gc --import tsx bench/long-postgres.ts [--n=100000] [--fsync] [--lease-ms=30000]`: the long run
 * (bench/long-workload.ts) on PostgresStore, on a Postgres started here as `npm run bench:pg`
 * starts it (fsync off unless `--fsync`: the figures are the process's heap and the growth of the
 * step cost, not the disk's flush). Readings at every 10,000 steps: heap after a forced GC, µs/step
 * of the slice, bytes of the run's `record` texts (`octet_length`, what the store wrote); then one
 * resume of the crashed log beside its floor (the same `SELECT record … ORDER BY seq` and a
 * `JSON.parse` of every row), and the tables' size on disk.
 */
import pg from 'pg';
import { migrate, PostgresStore } from '../src/platform-postgres/index.ts';
import { startPostgres } from '../test/postgres/server.ts';
import { formatLong } from './long-report.ts';
import { crashedLongRun, LONG_SLICE, resumeLong } from './long-workload.ts';
import type { LongProbe } from './long-workload.ts';
import { heapAfterGc } from './stats.ts';

const arg = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const N = Number(arg('n') ?? 100_000);
const fsync = process.argv.includes('--fsync');
// The store's default (30 s) unless `--lease-ms=`: a 100,000-step run on a machine at load ~25
// lost its lease with the default (docs/performance.md, "Long runs").
const leaseMs = Number(arg('lease-ms') ?? 30_000);
const RUN = 'long';

const server = await startPostgres({ fsync });
const pool = new pg.Pool({ connectionString: server.url, max: 4 });
pool.on('error', (e) => console.warn('idle Postgres connection lost:', e.message));
try {
  await migrate(pool);
  let seen = -1;
  let readings = 0;
  const probe: LongProbe = {
    heap() {
      const used = heapAfterGc();
      // Progress on stderr: a 100,000-step run takes minutes, and its rate tells whether it will finish.
      console.error(`${new Date().toISOString()} reading ${++readings}: heap ${(used / 2 ** 20).toFixed(1)} MiB`);
      return Promise.resolve(used);
    },
    async storedSince() {
      const { rows } = await pool.query<{ bytes: string | null; last: number | null }>(
        'SELECT sum(octet_length(record)) AS bytes, max(seq) AS last FROM polyloop.records ' +
          'WHERE run_id = $1 AND seq > $2',
        [RUN, seen],
      );
      seen = rows[0]?.last ?? seen;
      return Number(rows[0]?.bytes ?? 0);
    },
  };
  const every = Math.min(LONG_SLICE, N / 10);
  const figures = await crashedLongRun({ store: new PostgresStore({ pool, leaseMs }), runId: RUN, n: N, probe, every });
  const floor = async (): Promise<{ ms: number; records: number }> => {
    const t0 = performance.now();
    const { rows } = await pool.query<{ record: string }>(
      'SELECT record FROM polyloop.records WHERE run_id = $1 ORDER BY seq',
      [RUN],
    );
    let parsed = 0;
    for (const r of rows) parsed += JSON.parse(r.record) === null ? 0 : 1;
    return { ms: performance.now() - t0, records: parsed };
  };
  const floors = [await floor(), await floor(), await floor()];
  const resumed = await resumeLong({ store: new PostgresStore({ pool, leaseMs }), runId: RUN, n: N, probe });
  const size = await pool.query<{ bytes: string }>("SELECT pg_total_relation_size('polyloop.records') AS bytes");
  console.log(
    formatLong(`PostgresStore (Node, Postgres fsync ${fsync ? 'on' : 'off'})`, figures, {
      resumeMs: [resumed.ms],
      floorMs: floors.map((f) => f.ms),
      records: floors[0]?.records ?? 0,
      heapAtResume: resumed.heapBytes,
    }),
  );
  console.log(`records table on disk (pg_total_relation_size, with its index): ${size.rows[0]?.bytes} bytes`);
  console.log(`LONG POSTGRES ${JSON.stringify({ figures, resumeMs: resumed.ms, floors })}`);
} finally {
  await pool.end();
  await server.stop();
}
