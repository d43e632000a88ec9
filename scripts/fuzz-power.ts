/**
 * `npm run fuzz:power -- [--steps N] [--model-policy safe|never|both] [--concurrency N] [--lazy]`:
 * trace an uninterrupted FileStore run of N steps under strace, build every on-disk state a power
 * cut could leave (docs/decisions/0016-power-loss-model.md), resume each distinct one and check
 * the recovery properties. Prints the figures for docs/reliability.md; exits 1 on any violation.
 * `--lazy` runs the negative control (barriers without fsync), which must report violations.
 */
import { explore, straceWorks, tally } from '../test/node/platform-node/power-loss/explore.ts';
import type { PowerModelPolicy } from '../test/node/platform-node/power-loss/power-agent.ts';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

const steps = Number(flag('--steps') ?? 10);
const concurrency = Number(flag('--concurrency') ?? 4);
const policyArg = flag('--model-policy') ?? 'both';
const lazy = process.argv.includes('--lazy');
const policies: PowerModelPolicy[] =
  policyArg === 'both' ? ['safe', 'never'] : policyArg === 'safe' || policyArg === 'never' ? [policyArg] : [];
if (
  !Number.isInteger(steps) ||
  steps < 1 ||
  !Number.isInteger(concurrency) ||
  concurrency < 1 ||
  policies.length === 0
) {
  process.stderr.write(
    'usage: npm run fuzz:power -- [--steps N] [--model-policy safe|never|both] [--concurrency N] [--lazy]\n',
  );
  process.exit(2);
}
if (!straceWorks()) {
  process.stderr.write('fuzz:power needs strace (and ptrace allowed): apt-get install strace\n');
  process.exit(2);
}

let failed = 0;
for (const modelPolicy of policies) {
  const started = Date.now();
  process.stdout.write(
    `fuzz:power — ${steps} steps, modelReplayPolicy ${modelPolicy}${lazy ? ', LAZY (negative control: barriers without fsync)' : ''}\n`,
  );
  const report = await explore({ steps, modelPolicy, lazy, concurrency }, (o, i, total) => {
    if (o.problems.length > 0)
      process.stdout.write(
        `  FAIL state ${i + 1}/${total} (cut ${o.cut}, ${o.acked} acked, ${o.survived} survived): ${o.problems.join('; ')}\n`,
      );
    else if ((i + 1) % 500 === 0) process.stdout.write(`  … ${i + 1}/${total}\n`);
  });
  const t = tally(report);
  process.stdout.write(
    `  ${report.reference.log.length} records, ${report.reference.world.length} world effects in the uninterrupted run; ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  for (const [k, v] of Object.entries(t)) process.stdout.write(`  ${k.padEnd(42)} ${v}\n`);
  failed += t['states with violations'] ?? 0;
}
process.exit(failed > 0 ? 1 : 0);
