/**
 * `npm run fuzz:kill -- [trials=200] [--seed N] [--concurrency N] [--model-policy safe|never|approval|all]`: SIGKILL the
 * FileStore crash agent at every write index by every kill method (shuffled, seeded), resume
 * each in a fresh process (answering settle requests from the outside world, approvals as the
 * reference did), and check that it ends as the uninterrupted run with each never action
 * exactly once. Prints the counts for docs/reliability.md; exits 1 if any trial broke a property.
 */
import { availableParallelism } from 'node:os';
import {
  bundleAgent,
  KILL_HOWS,
  planInterleaved,
  referenceRun,
  runTrials,
  tally,
} from '../test/node/platform-node/crash/kill-trials.ts';
import type { ModelPolicy } from '../test/node/platform-node/crash/kill-trials.ts';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

const positional = process.argv
  .slice(2)
  .filter((a, i, all) => !a.startsWith('--') && !(all[i - 1] ?? '').startsWith('--'));
const trials = Number(positional[0] ?? 200);
const seed = Number(flag('--seed') ?? Date.now() % 1_000_000);
const concurrency = Number(flag('--concurrency') ?? Math.max(1, Math.min(4, availableParallelism())));
const policyArg = flag('--model-policy') ?? 'all';
const policies: ModelPolicy[] =
  policyArg === 'all'
    ? ['safe', 'never', 'approval']
    : policyArg === 'safe' || policyArg === 'never' || policyArg === 'approval'
      ? [policyArg]
      : [];
if (
  !Number.isInteger(trials) ||
  trials < 1 ||
  !Number.isInteger(seed) ||
  !Number.isInteger(concurrency) ||
  concurrency < 1 ||
  policies.length === 0
) {
  process.stderr.write(
    'usage: npm run fuzz:kill -- [trials] [--seed N] [--concurrency N] [--model-policy safe|never|approval|all]\n',
  );
  process.exit(2);
}

const agent = await bundleAgent();
try {
  const refs = [];
  for (const p of policies) refs.push(await referenceRun(agent.path, p));
  // Write counts come from the reference (counting) runs, never from a constant.
  const writes = Math.max(...refs.map((r) => r.writes.length));
  process.stdout.write(
    `fuzz:kill — ${trials} trials, seed ${seed}, concurrency ${concurrency}, variants ${policies.join(' / ')} (alternating), up to ${writes} writes per uninterrupted run\n`,
  );
  const started = Date.now();
  const outcomes = await runTrials(refs, planInterleaved(trials, seed, refs), {
    concurrency,
    onTrial: (o, i) => {
      const mark = o.problems.length > 0 ? 'FAIL' : 'ok';
      const settled = o.resumedInputs.filter((r) => r.includes('.settle '));
      process.stdout.write(
        `${String(i + 1).padStart(4)} ${mark.padEnd(4)} ${o.modelPolicy.padEnd(8)} kill ${o.how.padEnd(6)} at write ${String(o.killAt).padStart(2)} -> ${o.killed ? 'killed' : 'finished first'}, resumed: ${o.resumedStopReason ?? 'failed'}${settled.length > 0 ? ` (settled ${settled.join(', ')})` : ''}${o.problems.length > 0 ? `\n       ${o.problems.join('\n       ')}` : ''}\n`,
      );
    },
  });
  const t = tally(outcomes);
  const hit = new Set(outcomes.filter((o) => o.killed && o.how !== 'parent').map((o) => `${o.how}:${o.killAt}`));
  process.stdout.write(`\nseed ${seed}, ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  for (const [k, v] of Object.entries(t)) process.stdout.write(`  ${k.padEnd(24)} ${v}\n`);
  for (const how of KILL_HOWS) {
    const mine = outcomes.filter((o) => o.how === how);
    process.stdout.write(
      `  by ${how.padEnd(21)} ${mine.length} trials, ${mine.filter((o) => o.killed).length} killed, ${mine.filter((o) => o.resumedInputs.some((r) => r.includes('.settle '))).length} settled\n`,
    );
  }
  for (const p of policies) {
    const mine = outcomes.filter((o) => o.modelPolicy === p);
    process.stdout.write(
      `  variant ${p.padEnd(17)} ${mine.length} trials, ${mine.filter((o) => o.resumedInputs.some((r) => r.includes('.settle '))).length} settled, ${mine.filter((o) => o.firstResume?.startsWith('awaiting') === true).length} first resume stopped at a request, ${mine.filter((o) => o.problems.length > 0).length} failed\n`,
    );
  }
  process.stdout.write(`  self-kill points hit      ${hit.size} of ${writes * 3} (write index x before/after/torn)\n`);
  process.exitCode = t['failed'] === 0 ? 0 : 1;
} finally {
  await agent.cleanup();
}
