/**
 * `npm run fuzz:pg -- [runs=200] [--workers 4] [--seed N] [--kill-every 300-1500|none] [--restart-db-after MS]`:
 * the worker-pool fault trial at full size — a real Postgres, the example's server and worker
 * processes, random SIGKILLs of workers (each started again), optionally a database restart;
 * then every run checked against its uninterrupted reference and the world's table. Prints the
 * figures for docs/postgres.md; exits 1 if any property broke.
 */
import { workerTrial } from '../test/postgres/worker-trials.ts';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const positional = process.argv
  .slice(2)
  .filter((a, i, all) => !a.startsWith('--') && !(all[i - 1] ?? '').startsWith('--'));
const runs = Number(positional[0] ?? 200);
const workers = Number(flag('--workers') ?? 4);
const seed = Number(flag('--seed') ?? Date.now() % 1_000_000);
const killArg = flag('--kill-every') ?? '300-1500';
const [lo, hi] = (killArg === 'none' ? '1-1' : killArg).split('-').map(Number) as [number, number];
const restart = flag('--restart-db-after');
const verbose = process.argv.includes('--verbose');
if (![runs, workers, seed, lo, hi].every(Number.isInteger) || runs < 1 || workers < 1 || lo < 1 || hi < lo) {
  process.stderr.write(
    'usage: npm run fuzz:pg -- [runs] [--workers N] [--seed N] [--kill-every LO-HI|none] [--restart-db-after MS] [--verbose]\n',
  );
  process.exit(2);
}
process.stdout.write(
  `fuzz:pg — ${runs} runs, ${workers} workers, seed ${seed}, SIGKILL every ${killArg === 'none' ? '(never)' : `${lo}-${hi}`} ms${restart ? `, database restart after ${restart} ms` : ''}\n`,
);
const report = await workerTrial({
  runs,
  workers,
  seed,
  killEveryMs: killArg === 'none' ? [] : [lo, hi],
  timeoutMs: 15 * 60_000,
  ...(restart ? { restartDatabaseAfterMs: Number(restart) } : {}),
  log: verbose
    ? (l) => process.stdout.write(`${l}\n`)
    : (l) => {
        if (l.startsWith('SIGKILL') || l.startsWith('restarting')) process.stdout.write(`${l}\n`);
      },
});
for (const [k, v] of Object.entries(report))
  if (k !== 'problems') process.stdout.write(`  ${k.padEnd(14)} ${String(v)}\n`);
for (const p of report.problems) process.stdout.write(`  FAIL ${p}\n`);
process.exitCode = report.problems.length === 0 && report.ended === runs ? 0 : 1;
