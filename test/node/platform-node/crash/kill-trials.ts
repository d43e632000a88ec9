/**
 * SIGKILL trials: run the crash agent in a real child process, kill it at a chosen write,
 * resume it in a fresh process, and check the recovery properties against an uninterrupted
 * reference run. Shared by the test (`kill.test.ts`) and `npm run fuzz:kill`.
 */
import { spawn } from 'node:child_process';
import { build } from 'esbuild';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { canonicalJson } from '../../../../src/core/internal-entry.ts';
import type { RunResult, StepRecord } from '../../../../src/core/index.ts';
import { random as prng } from '../../../support/random.ts';

const AGENT_SOURCE = resolve(import.meta.dirname, 'crash-agent.ts');

/** How a trial kills the agent: itself before/after write k, mid-write (torn line), or the parent on seeing write k. */
export type KillHow = 'before' | 'after' | 'torn' | 'parent';
export const KILL_HOWS: readonly KillHow[] = ['before', 'after', 'torn', 'parent'];

type ChildRun = {
  readonly code: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly killedByParent: boolean;
};

/**
 * Bundle the crash agent into one plain .mjs (esbuild), so each trial starts `node <bundle>`:
 * the pid that gets SIGKILLed is the agent's own process (no runner shim that could survive as
 * an orphan), and a start costs ~0.1 s of CPU instead of a TypeScript transform.
 */
export async function bundleAgent(): Promise<{ readonly path: string; readonly cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-agent-'));
  const path = join(dir, 'crash-agent.mjs');
  await build({
    entryPoints: [AGENT_SOURCE],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: path,
    logLevel: 'warning',
  });
  return { path, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The agent's variant: `safe` or `never` is its `modelReplayPolicy` (with `never`, a model call in
 * flight at the kill is settled by a person: retried); `approval` makes its `record` tool need
 * approval (approved, the step-6 one denied); `calls` is one step of three calls (`add`, `record`,
 * `add`) at once, then the answer. FileStore has the input methods, so a `never` operation in flight
 * is settled, never ended `in_flight_unknown`.
 */
export type ModelPolicy = 'safe' | 'never' | 'approval' | 'calls';

function runAgent(
  agent: string,
  policy: ModelPolicy,
  args: readonly string[],
  killOnWrite: number | null = null,
): Promise<ChildRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [agent, ...args], {
      stdio: 'pipe',
      env: { ...process.env, CRASH_VARIANT: policy },
    });
    let stdout = '';
    let stderr = '';
    let killedByParent = false;
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
      if (killOnWrite !== null && !killedByParent && new RegExp(`^W ${killOnWrite} `, 'm').test(stdout)) {
        killedByParent = child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr, killedByParent }));
  });
}

/**
 * What an uninterrupted run produced. `writes` lists the store method of each write, in order:
 * the reference run is the counting run every write index (0 … writes.length-1) is taken from.
 */
export type Reference = {
  readonly agent: string;
  readonly modelPolicy: ModelPolicy;
  readonly result: RunResult;
  readonly side: readonly string[];
  readonly calls: ReadonlyMap<number, string>;
  readonly writes: readonly string[];
  /** The replies the reference run gave (`<resultId> <kind>`), in order. */
  readonly inputs: readonly string[];
};

/** A step without its timestamps (the only fields allowed to differ). */
export function stripTimes(step: StepRecord): Omit<StepRecord, 'startedAt' | 'endedAt'> {
  const { startedAt: _s, endedAt: _e, ...rest } = step;
  return rest;
}

function parseResult(out: string): RunResult | null {
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  return line ? (JSON.parse(line.slice('RESULT '.length)) as RunResult) : null;
}

/** The store methods of the writes a process reported as landed (`W <n> <method>`), checked dense from 0. */
function parseWrites(out: string): string[] {
  const writes = [...out.matchAll(/^W (\d+) (\w+)$/gm)];
  writes.forEach((m, i) => {
    if (Number(m[1]) !== i) throw new Error(`write ${m[1]} reported at position ${i}`);
  });
  return writes.map((m) => m[2] as string);
}

/**
 * The index of a write of step `stepIndex` of the reference run, found from its write list (an
 * action step writes intent, resultAndIntent, step — its `model_result` and `action_intent` are
 * the one write; another step writes intent, result, step).
 * For runs without input requests (the `safe` and `never` variants); see {@link nthWrite}.
 */
export function writeOfStep(
  ref: Reference,
  stepIndex: number,
  which: 'model_intent' | 'model_result' | 'action_intent' | 'step',
): number {
  const steps = ref.writes.flatMap((m, i) => (m === 'step' ? [i] : []));
  const at = steps[stepIndex];
  if (at === undefined) throw new Error(`the reference run has no step ${stepIndex}`);
  const hasAction = ref.writes[at - 1] === 'resultAndIntent';
  const offset = { step: 0, action_intent: 1, model_result: 1, model_intent: 2 }[which];
  if (which === 'action_intent' && !hasAction) throw new Error(`step ${stepIndex} of the reference run has no action`);
  return at - offset;
}

/** The replies a process gave (`INPUT <resultId> <kind>`), as `<resultId> <kind>`. */
function parseInputs(out: string): string[] {
  return [...out.matchAll(/^INPUT (\S+) (\w+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
}

/** The index of the `n`-th write (from 0) by store method `method` in the reference run. */
export function nthWrite(ref: Reference, method: string, n: number): number {
  const at = ref.writes.flatMap((m, i) => (m === method ? [i] : []))[n];
  if (at === undefined) throw new Error(`the reference run has no ${method} write #${n}`);
  return at;
}

function parseCalls(out: string): Map<number, string> {
  const calls = new Map<number, string>();
  for (const m of out.matchAll(/^CALL (\d+) ([0-9a-f]+)$/gm)) calls.set(Number(m[1]), m[2] as string);
  return calls;
}

async function sideLines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((l) => l !== '');
}

/** Run the agent once without a crash. */
export async function referenceRun(agent: string, modelPolicy: ModelPolicy = 'safe'): Promise<Reference> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-ref-'));
  try {
    const r = await runAgent(agent, modelPolicy, [dir, 'reference', join(dir, 'side.txt'), 'run']);
    const result = parseResult(r.stdout);
    if (r.code !== 0 || !result) throw new Error(`reference run failed (${r.code}): ${r.stderr}`);
    return {
      agent,
      modelPolicy,
      result,
      side: await sideLines(join(dir, 'side.txt')),
      calls: parseCalls(r.stdout),
      writes: parseWrites(r.stdout),
      inputs: parseInputs(r.stdout),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One trial's plan and what happened. */
export type TrialOutcome = {
  readonly killAt: number;
  readonly how: KillHow;
  readonly modelPolicy: ModelPolicy;
  /** The crashed process died by SIGKILL (false: it finished before the kill landed). */
  readonly killed: boolean;
  /** Last write the crashed process reported as landed (-1: none). */
  readonly lastLandedWrite: number;
  /** Stop reason of the resumed run, or null when resume failed. */
  readonly resumedStopReason: string | null;
  /** The resume found an empty log and started the run. */
  readonly startedFresh: boolean;
  /** The `callSeq`s of the model calls the resuming process made. */
  readonly resumedCallSeqs: readonly number[];
  /** What the resuming process's first resume (without input) returned: a stop reason or `awaiting <resultId>`; null when it started fresh or failed. */
  readonly firstResume: string | null;
  /** The replies the resuming process gave (`<resultId> <kind>`): approvals it was asked again, and settlements. */
  readonly resumedInputs: readonly string[];
  /** Lines of the side-effect file (one per `record` call) after both processes. */
  readonly side: readonly string[];
  /** Lines of the side-effect file when the crashed process was gone, before the resume. */
  readonly sideAtKill: readonly string[];
  /** FileStore warnings (torn tails) the resuming process reported. */
  readonly repairs: number;
  /** Property violations; empty when the trial passed. */
  readonly problems: readonly string[];
};

/** Kill the agent at write `killAt` by `how`, resume in a fresh process, check every property. */
export async function runTrial(ref: Reference, killAt: number, how: KillHow): Promise<TrialOutcome> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-kill-'));
  const side = join(dir, 'side.txt');
  const problems: string[] = [];
  try {
    const crashed =
      how === 'parent'
        ? await runAgent(ref.agent, ref.modelPolicy, [dir, 'trial', side, 'run'], killAt)
        : await runAgent(ref.agent, ref.modelPolicy, [dir, 'trial', side, 'run', String(killAt), how]);
    const killed = crashed.signal === 'SIGKILL';
    if (!killed && crashed.code !== 0)
      problems.push(`crashed process failed on its own (${crashed.code}): ${crashed.stderr.slice(0, 500)}`);
    const landed = [...crashed.stdout.matchAll(/^W (\d+) /gm)].map((m) => Number(m[1]));
    const sideAtKill = await sideLines(side);
    const resumed = await runAgent(ref.agent, ref.modelPolicy, [dir, 'trial', side, 'auto']);
    const result = parseResult(resumed.stdout);
    if (resumed.code !== 0 || !result)
      problems.push(`resume failed (${resumed.code ?? resumed.signal}): ${resumed.stderr.slice(0, 500)}`);
    const lines = await sideLines(side);
    if (new Set(lines).size !== lines.length)
      problems.push(`a never-replay action ran twice: ${JSON.stringify(lines)}`);
    const resumedInputs = parseInputs(resumed.stdout);
    if (ref.modelPolicy === 'never') {
      // One model call per step here, so call `seq` is step `seq`'s: issued again only when a person said retry.
      const again = [...parseCalls(resumed.stdout).keys()].filter(
        (seq) => parseCalls(crashed.stdout).has(seq) && !resumedInputs.includes(`s${seq}.settle retry`),
      );
      if (again.length > 0)
        problems.push(
          `model call(s) ${again.join(', ')} issued again under modelReplayPolicy never, without a settle retry`,
        );
    }
    for (const reply of [...parseInputs(crashed.stdout), ...resumedInputs]) {
      if (!reply.includes('.settle ') && !ref.inputs.includes(reply))
        problems.push(`reply ${reply} was not given in the reference run`);
    }
    for (const [seq, hash] of [...parseCalls(crashed.stdout), ...parseCalls(resumed.stdout)]) {
      if (ref.calls.get(seq) !== hash)
        problems.push(`model call ${seq} saw different messages than in the reference run`);
    }
    if (result) problems.push(...checkResult(ref, result, lines));
    return {
      killAt,
      how,
      modelPolicy: ref.modelPolicy,
      killed,
      lastLandedWrite: landed.at(-1) ?? -1,
      resumedStopReason: result?.stopReason ?? null,
      startedFresh: resumed.stdout.includes('NOTE log empty'),
      resumedCallSeqs: [...parseCalls(resumed.stdout).keys()],
      firstResume: /^FIRST (.+)$/m.exec(resumed.stdout)?.[1] ?? null,
      resumedInputs,
      side: lines,
      sideAtKill,
      repairs: (resumed.stderr.match(/^WARN /gm) ?? []).length,
      problems,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * With the input methods, every trial must end as the uninterrupted run
 * (docs/design/laws.md#human-input-across-crashes): the same stop reason, answer and trajectory,
 * and every `record` line exactly as often as in the reference — once each, the denied one never —
 * whatever was in flight at the kill.
 */
function checkResult(ref: Reference, result: RunResult, side: readonly string[]): string[] {
  const problems: string[] = [];
  // Key order differs between a step built live and one decoded from the log; compare canonically.
  const got = result.trajectory.map((s) => canonicalJson(stripTimes(s)));
  const want = ref.result.trajectory.map((s) => canonicalJson(stripTimes(s)));
  if (result.stopReason !== ref.result.stopReason || result.finalAnswer !== ref.result.finalAnswer)
    problems.push(
      `ended ${result.stopReason} / ${result.finalAnswer}, reference ${ref.result.stopReason} / ${ref.result.finalAnswer}`,
    );
  const at = want.findIndex((step, i) => step !== got[i]);
  if (at !== -1 || got.length !== want.length)
    problems.push(
      `the resumed trajectory differs from the uninterrupted one${at === -1 ? ` (${got.length} steps, not ${want.length})` : ` at step ${at}`}`,
    );
  if (JSON.stringify(side) !== JSON.stringify(ref.side))
    problems.push(
      `side effects ${JSON.stringify(side)} differ from the reference ${JSON.stringify(ref.side)} (each never action exactly once)`,
    );
  return problems;
}

/**
 * `count` trial plans: every (write index, kill method) pair once in a shuffled order, then
 * again, so that any 128 consecutive plans hit every point of the write protocol by every method.
 */
export function planTrials(
  count: number,
  seed: number,
  writes: number,
): Array<{ readonly killAt: number; readonly how: KillHow }> {
  const rand = prng(seed);
  const plans: Array<{ killAt: number; how: KillHow }> = [];
  while (plans.length < count) {
    const round = KILL_HOWS.flatMap((how) => Array.from({ length: writes }, (_, killAt) => ({ killAt, how })));
    for (let i = round.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [round[i], round[j]] = [round[j] as (typeof round)[number], round[i] as (typeof round)[number]];
    }
    plans.push(...round);
  }
  return plans.slice(0, count);
}

/**
 * Plans for the references run by {@link runTrials} (plan i against reference i mod their
 * number): each reference gets its own seeded rotation of every (write index, kill method) pair
 * over the writes its own counting run made.
 */
export function planInterleaved(
  count: number,
  seed: number,
  refs: readonly Reference[],
): Array<{ readonly killAt: number; readonly how: KillHow }> {
  const n = refs.length;
  const per = refs.map((ref, j) => planTrials(Math.ceil(count / n), seed + j, ref.writes.length));
  return Array.from({ length: count }, (_, i) => per[i % n]?.[Math.floor(i / n)] as { killAt: number; how: KillHow });
}

/**
 * Run plans with `concurrency` trials at a time, plan i against `refs[i % refs.length]` (one
 * reference per model replay policy); `onTrial` sees each outcome as it lands.
 */
export async function runTrials(
  refs: readonly Reference[],
  plans: ReturnType<typeof planTrials>,
  opts: { readonly concurrency: number; readonly onTrial?: (o: TrialOutcome, i: number) => void },
): Promise<TrialOutcome[]> {
  const outcomes: TrialOutcome[] = new Array<TrialOutcome>(plans.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < plans.length) {
      const i = next++;
      const plan = plans[i] as (typeof plans)[number];
      const o = await runTrial(refs[i % refs.length] as Reference, plan.killAt, plan.how);
      outcomes[i] = o;
      opts.onTrial?.(o, i);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return outcomes;
}

/** Counts for a report. */
export function tally(outcomes: readonly TrialOutcome[]): Record<string, number> {
  const count = (f: (o: TrialOutcome) => boolean): number => outcomes.filter(f).length;
  return {
    trials: outcomes.length,
    killedBySigkill: count((o) => o.killed),
    finishedBeforeKill: count((o) => !o.killed),
    resumedToFinalAnswer: count((o) => o.resumedStopReason === 'final_answer'),
    resumedInFlightUnknown: count((o) => o.resumedStopReason === 'in_flight_unknown'),
    settledExecuted: count((o) => o.resumedInputs.some((r) => r.endsWith('.settle executed'))),
    settledRetry: count((o) => o.resumedInputs.some((r) => r.endsWith('.settle retry'))),
    firstResumeStoppedAtRequest: count((o) => o.firstResume?.startsWith('awaiting') === true),
    resumeStartedFresh: count((o) => o.startedFresh),
    tornTailsRepaired: count((o) => o.repairs > 0),
    failed: count((o) => o.problems.length > 0),
  };
}
