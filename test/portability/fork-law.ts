/**
 * The portability law's forks (docs/design/laws.md#forks), in Web APIs only so every runtime runs
 * it: the reference run (test/portability/reference.ts) forked with `forkRun` at every step of its
 * finished run, and at the approval it awaits, into the store it lives in and into another; each
 * fork's log is `run_started` naming its origin followed by the source's own lines before the fork
 * point, byte for byte; resumed (and approved, where it awaits), it ends as the uninterrupted run
 * with no tool of a step before the fork point run again and the model asked first at the fork
 * point; a fork exported from one store and imported into the other ends the same; and the
 * source's export is the same bytes before and after every fork.
 */
import {
  decodeLog,
  exportRun,
  forkRun,
  importRun,
  InMemoryStore,
  readRunLog,
  resume,
  run,
} from '../../src/core/index.ts';
import type { InputReply, RunResult, RunStore } from '../../src/core/index.ts';
import type { ScriptedModel } from '../../src/testing/index.ts';
import { outcomeOf, reference, RUN_ID, uninterrupted, worldReply } from './reference.ts';
import type { Outcome, Variant } from './reference.ts';

/** A fresh, empty store of one kind (a Durable Object's or Postgres' may take a moment). */
export type MakeStore = () => RunStore | Promise<RunStore>;

/** What a resumed fork did: its end, every tool execution, the model call it began with. */
type ForkEnd = { readonly outcome: Outcome; readonly effects: string[]; readonly firstModelCall: number | null };

/**
 * Resume run `runId` on `store` (the reference agent, rebuilt per call as a restarted process
 * would), answering every request from the outside world — or with `first` for the one it awaits.
 */
async function finish(store: RunStore, runId: string, variant: Variant, first?: InputReply): Promise<ForkEnd> {
  const effects: string[] = [];
  let firstModelCall: number | null = null;
  const call = (input?: InputReply): Promise<RunResult> => {
    const r = reference(store, effects, variant);
    const model = r.agent.model as ScriptedModel;
    const request = { ...r.request, runId };
    return (input === undefined ? resume(r.agent, request) : resume(r.agent, request, { input })).finally(() => {
      firstModelCall ??= model.calls[0]?.callSeq ?? null;
    });
  };
  let result = await call(first);
  for (let n = 0; result.pending !== null; n++) {
    if (n > 10) throw new Error(`the fork ${runId} asked more than ten times`);
    result = await call(worldReply(result.pending, effects));
  }
  return { outcome: outcomeOf(result), effects, firstModelCall };
}

/** The step a log line belongs to (none for run_started and run_ended). */
function stepOfLine(line: string): number | null {
  const [r] = decodeLog(`${line}\n`).records;
  if (r === undefined || r.kind === 'run_started' || r.kind === 'run_ended') return null;
  return r.kind === 'step' ? r.step.stepIndex : r.stepIndex;
}

/** JSON with every object's keys in order: the same record whatever order its fields were written in. */
const sorted = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );

const lines = (ndjson: string): string[] => ndjson.split('\n').filter((l) => l !== '');

/**
 * What the fork's log must be: `run_started` of `newRunId` naming the source and the fork point,
 * the rest of the source's `run_started` unchanged, then the source's lines of the steps before
 * `atStep` — and, `awaiting`, those of step `atStep` too — in the source's order and bytes.
 */
function forkLogProblem(
  source: string,
  fork: string,
  newRunId: string,
  atStep: number,
  awaiting: boolean,
): string | null {
  const [head, ...rest] = lines(fork);
  const [sourceHead, ...sourceRest] = lines(source);
  const started = decodeLog(`${head}\n`).records[0];
  const origin = decodeLog(`${sourceHead}\n`).records[0];
  if (started?.kind !== 'run_started' || origin?.kind !== 'run_started')
    return 'the fork does not begin with run_started';
  const want = { ...origin, runId: newRunId, forkedFrom: { runId: RUN_ID, atStep } };
  if (sorted(started) !== sorted(want))
    return `the fork's run_started is not the source's naming ${newRunId} forked at step ${atStep}`;
  const kept = sourceRest.filter((l) => {
    const step = stepOfLine(l);
    return step !== null && (step < atStep || (awaiting && step === atStep));
  });
  if (rest.join('\n') !== kept.join('\n')) return `the fork's records are not the source's before step ${atStep}`;
  return null;
}

/** The tool executions of the uninterrupted run that belong to the steps from `atStep` on. */
function effectsFrom(full: { outcome: Outcome; effects: readonly string[] }, atStep: number): string[] {
  const before = full.outcome.trajectory.slice(0, atStep).filter((s) => s.actionStatus === 'executed').length;
  return full.effects.slice(before);
}

/** One fork: made, checked, resumed; its problems under `label`. */
async function checkFork(
  problems: string[],
  label: string,
  fork: {
    readonly source: RunStore;
    readonly into: RunStore;
    readonly newRunId: string;
    readonly atStep: number;
    readonly variant: Variant;
    readonly awaiting: boolean;
    readonly want: { outcome: Outcome; effects: readonly string[] };
    readonly first?: InputReply;
    readonly fork: Fork;
  },
): Promise<string> {
  const { source, into, newRunId, atStep, variant, awaiting, want } = fork;
  const sourceBytes = await exportRun(source, RUN_ID);
  const refused = await fork.fork(source, RUN_ID, { atStep, newRunId, ...(into === source ? {} : { into }) }).then(
    () => null,
    (e: unknown) => e as Error,
  );
  if (refused) {
    problems.push(`${label}: the fork was refused: ${refused.message}`);
    return '';
  }
  const forkBytes = await exportRun(into, newRunId);
  const logProblem = forkLogProblem(sourceBytes, forkBytes, newRunId, atStep, awaiting);
  if (logProblem) problems.push(`${label}: ${logProblem}`);
  if (awaiting) {
    const [forkPending, sourcePending] = [forkBytes, sourceBytes].map((n) => readRunLog(decodeLog(n).records).pending);
    if (JSON.stringify(forkPending) !== JSON.stringify(sourcePending))
      problems.push(
        `${label}: the fork awaits ${JSON.stringify(forkPending)}, the source ${JSON.stringify(sourcePending)}`,
      );
  }
  await resumedProblem(problems, label, { store: into, runId: newRunId, variant, atStep, awaiting, want }, fork.first);
  return forkBytes;
}

/**
 * Resume a fork and compare: the uninterrupted end, only the effects from the fork point on, the
 * model asked first at the fork point (past it when the fork holds that step's reply, awaiting).
 */
async function resumedProblem(
  problems: string[],
  label: string,
  fork: {
    readonly store: RunStore;
    readonly runId: string;
    readonly variant: Variant;
    readonly atStep: number;
    readonly awaiting: boolean;
    readonly want: { outcome: Outcome; effects: readonly string[] };
  },
  first?: InputReply,
): Promise<void> {
  const { atStep, want } = fork;
  const end = await finish(fork.store, fork.runId, fork.variant, first).catch((e: unknown) => e as Error);
  if (end instanceof Error) {
    problems.push(`${label}: resuming the fork failed: ${end.message}`);
    return;
  }
  if (JSON.stringify(end.outcome) !== JSON.stringify(want.outcome))
    problems.push(`${label}: the fork ended ${JSON.stringify(end.outcome)}, not as the uninterrupted run`);
  const due = effectsFrom(want, atStep);
  if (JSON.stringify(end.effects) !== JSON.stringify(due))
    problems.push(
      `${label}: the fork ran ${JSON.stringify(end.effects)}, not the steps from ${atStep}: ${JSON.stringify(due)}`,
    );
  const asked = fork.awaiting ? atStep + 1 : atStep;
  if (end.firstModelCall !== asked)
    problems.push(`${label}: the fork first asked the model at call ${end.firstModelCall}, not ${asked}`);
}

/** What the law forks with: `forkRun`, or (to show the law can fail) a broken stand-in. */
export type Fork = typeof forkRun;

/** What {@link forkLaw} runs over. */
export type ForkLawOptions = {
  /** A fresh store of the kind the source run lives in. */
  readonly make: MakeStore;
  /** A fresh store of the kind forks are also made into, and exported to. */
  readonly other: MakeStore;
  /** Default `forkRun`. */
  readonly fork?: Fork;
};

/** The law over a store kind and another. Returns every problem (empty when it holds). */
export async function forkLaw(opts: ForkLawOptions): Promise<string[]> {
  const problems: string[] = [];
  const fork = opts.fork ?? forkRun;
  await finishedRunForks(problems, opts, fork);
  await awaitingRunForks(problems, opts, fork);
  return problems;
}

/** Forks at every step of the finished plain run, into its store and into another; each carried once more. */
async function finishedRunForks(problems: string[], { make, other }: ForkLawOptions, fork: Fork): Promise<void> {
  const source = await make();
  const full = await uninterrupted(source, 'plain');
  const before = await exportRun(source, RUN_ID);
  const steps = full.outcome.trajectory.length;
  if (steps < 4) problems.push(`the reference run has only ${steps} steps`);
  for (let atStep = 0; atStep < steps; atStep++) {
    const newRunId = `${RUN_ID}.fork-${atStep}`;
    const common = { source, newRunId, atStep, variant: 'plain', awaiting: false, want: full, fork } as const;
    const same = await checkFork(problems, `step ${atStep}, same store`, { ...common, into: source });
    const elsewhere = await checkFork(problems, `step ${atStep}, another store`, { ...common, into: await other() });
    if (same !== elsewhere) problems.push(`step ${atStep}: the two stores export the fork as different bytes`);
    // A fork exported from its store and imported into another finishes there as well.
    const carried = await other();
    await importRun(carried, newRunId, same);
    const imported = {
      store: carried,
      runId: newRunId,
      variant: 'plain',
      atStep,
      awaiting: false,
      want: full,
    } as const;
    await resumedProblem(problems, `step ${atStep}, exported and imported`, imported);
  }
  if ((await exportRun(source, RUN_ID)) !== before)
    problems.push('the finished source exports other bytes after its forks');
}

/**
 * Forks of a run awaiting approval: at the awaited step (the fork awaits the same request, approved
 * there) and at each step before it, into its store and into another; then the source is denied.
 */
async function awaitingRunForks(problems: string[], { make, other }: ForkLawOptions, fork: Fork): Promise<void> {
  const full = await uninterrupted(new InMemoryStore(), 'approval');
  const source = await make();
  const effects: string[] = [];
  const r = reference(source, effects, 'approval');
  const paused = await run(r.agent, r.request);
  const pending = paused.pending;
  if (pending?.kind !== 'approval') {
    problems.push(`the approval run ended ${paused.stopReason}, awaiting no approval`);
    return;
  }
  const before = await exportRun(source, RUN_ID);
  const approve: InputReply = { kind: 'approve', resultId: pending.resultId };
  for (let atStep = 0; atStep <= pending.stepIndex; atStep++) {
    const awaiting = atStep === pending.stepIndex;
    const newRunId = `${RUN_ID}.fork-${atStep}`;
    const common = { source, newRunId, atStep, variant: 'approval', awaiting, want: full, fork } as const;
    const first = awaiting ? { first: approve } : {};
    const same = await checkFork(problems, `awaiting, step ${atStep}, same store`, {
      ...common,
      into: source,
      ...first,
    });
    const label = `awaiting, step ${atStep}, another store`;
    const elsewhere = await checkFork(problems, label, { ...common, into: await other(), ...first });
    if (same !== elsewhere)
      problems.push(`awaiting, step ${atStep}: the two stores export the fork as different bytes`);
  }
  if ((await exportRun(source, RUN_ID)) !== before)
    problems.push('the awaiting source exports other bytes after its forks');
  // Approved in the forks, denied in the source: nothing of the notify ran here.
  const d = reference(source, effects, 'approval');
  const denied = await resume(d.agent, d.request, {
    input: { kind: 'deny', resultId: pending.resultId, reason: 'No.' },
  });
  const statuses = denied.trajectory.map((s) => s.actionStatus);
  if (
    denied.stopReason !== 'final_answer' ||
    statuses[pending.stepIndex] !== 'denied' ||
    effects.some((e) => e.startsWith('notify:'))
  )
    problems.push(`the source, denied after its forks, ended ${denied.stopReason} with ${JSON.stringify(statuses)}`);
}
