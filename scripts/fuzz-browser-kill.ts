/**
 * `npm run fuzz:browser-kill -- [trials=50] [--seed N] [--skip-barrier]`: SIGKILL Debian's Chromium
 * (its whole process group) at seeded random moments of a run on IndexedDBStore, relaunch it on
 * the same profile, let the page resume (settling a `never` action in flight from the server's
 * record of side effects), and check every trial (test/node/browser-kill/). Prints
 * the figures for docs/reliability.md; exits 1 if any trial broke a property.
 * `--skip-barrier` runs a deliberately broken page (action intents resolve before they are
 * durable), killed as each `never` action reaches the server: the suite must report violations.
 */
import { cleanUpProfiles, startKillServer } from '../test/node/browser-kill/kill-harness.ts';
import { planDelays, referenceRun, runTrial } from '../test/node/browser-kill/kill-trials.ts';
import type { Phase, Trigger, TrialOutcome } from '../test/node/browser-kill/kill-trials.ts';

const PHASES: readonly Phase[] = [
  'not started',
  'step boundary',
  'model call in flight',
  'model reply stored',
  'safe action in flight',
  'never action in flight',
  'ended',
];

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--seed');
const trials = Number(positional[0] ?? 50);
const seed = Number(flag('--seed') ?? Date.now() % 1_000_000);
const skipBarrier = process.argv.includes('--skip-barrier');
if (!Number.isInteger(trials) || trials < 1 || !Number.isInteger(seed)) {
  process.stderr.write('usage: npm run fuzz:browser-kill -- [trials] [--seed N] [--skip-barrier]\n');
  process.exit(2);
}

const median = (xs: readonly number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? '-' : `${Math.round(s[Math.floor((s.length - 1) / 2)] as number)} ms`;
};

function line(o: TrialOutcome, i: number): string {
  const mark = o.problems.length > 0 ? 'FAIL' : 'ok';
  const ran =
    o.inFlightNeverRan === null
      ? ''
      : ` (the never action had ${o.inFlightNeverRan ? '' : 'not '}run; settled ${o.settledAs ?? 'never'})`;
  const head = `${String(i + 1).padStart(4)} ${mark.padEnd(4)} kill ${o.trigger.padEnd(22)} left: ${o.phase.padEnd(22)} -> ${o.stopReason ?? 'no end'}${ran}, relaunch->resume ${o.relaunchToDrivingMs === null ? '-' : Math.round(o.relaunchToDrivingMs)} ms`;
  return o.problems.length > 0 ? `${head}\n       ${o.problems.join('\n       ')}` : head;
}

function summary(outcomes: readonly TrialOutcome[]): string {
  const count = (p: (o: TrialOutcome) => boolean): number => outcomes.filter(p).length;
  const rows: [string, number | string][] = [
    ['trials', outcomes.length],
    ...PHASES.map((p): [string, number] => [`  kill left: ${p}`, count((o) => o.phase === p)]),
    ['resumed to final_answer', count((o) => o.stopReason === 'final_answer')],
    ['  ... after a settle: executed', count((o) => o.settledAs === 'executed')],
    ['  ... after a settle: retry', count((o) => o.settledAs === 'retry')],
    ['resumed to another end', count((o) => o.stopReason !== null && o.stopReason !== 'final_answer')],
    ['did not end', count((o) => o.stopReason === null)],
    ['acknowledged non-barriers lost (allowed)', outcomes.reduce((n, o) => n + o.nonBarrierLost, 0)],
    ['processes left after group kill', outcomes.reduce((n, o) => n + o.stragglers, 0)],
    ['trials with violations', count((o) => o.problems.length > 0)],
    [
      'median relaunch -> page read log',
      median(outcomes.flatMap((o) => (o.relaunchToBootMs === null ? [] : [o.relaunchToBootMs]))),
    ],
    [
      'median relaunch -> run driving',
      median(outcomes.flatMap((o) => (o.relaunchToDrivingMs === null ? [] : [o.relaunchToDrivingMs]))),
    ],
    [
      'median relaunch -> run ended',
      median(outcomes.flatMap((o) => (o.relaunchToEndMs === null ? [] : [o.relaunchToEndMs]))),
    ],
  ];
  return rows.map(([k, v]) => `  ${k.padEnd(34)} ${v}`).join('\n');
}

const server = await startKillServer();
try {
  const ref = await referenceRun(server, 'reference');
  process.stdout.write(
    `fuzz:browser-kill — ${trials} trials, seed ${seed}${skipBarrier ? ', BROKEN PAGE (--skip-barrier)' : ''}; reference: ${ref.steps.length} steps, ${ref.writes} acknowledged writes, ${ref.effects.length} side effects, ${Math.round(ref.durationMs)} ms\n`,
  );
  const delays = planDelays(trials, seed, ref.durationMs);
  const started = performance.now();
  const outcomes: TrialOutcome[] = [];
  for (let i = 0; i < trials; i++) {
    const trigger: Trigger = skipBarrier
      ? { kind: 'effect', tool: 'charge', nth: (i % 3) + 1 }
      : { kind: 'delay', ms: delays[i] as number };
    const outcome = await runTrial(server, ref, `trial-${seed}-${i}`, trigger, skipBarrier ? 'barrier=skip' : '').catch(
      (e: unknown): TrialOutcome => ({
        runId: `trial-${seed}-${i}`,
        trigger: JSON.stringify(trigger),
        killedAfterMs: 0,
        phase: 'not started',
        stopReason: null,
        inFlightNeverRan: null,
        settledAs: null,
        nonBarrierLost: 0,
        effectCounts: {},
        stragglers: 0,
        relaunchToBootMs: null,
        relaunchToDrivingMs: null,
        relaunchToEndMs: null,
        problems: [`harness: ${e instanceof Error ? e.message : String(e)}`],
      }),
    );
    outcomes.push(outcome);
    process.stdout.write(`${line(outcome, i)}\n`);
  }
  process.stdout.write(
    `\nseed ${seed}, ${((performance.now() - started) / 1000).toFixed(1)} s\n${summary(outcomes)}\n`,
  );
  process.exitCode = outcomes.some((o) => o.problems.length > 0) ? 1 : 0;
} finally {
  await cleanUpProfiles();
  await server.close();
}
