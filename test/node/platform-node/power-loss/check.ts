/**
 * One crash state of the power-loss explorer, resumed and judged: no acknowledged barrier lost,
 * nothing in the log but a prefix of the uninterrupted run's records, no `CorruptLogError` or
 * other failure, no `never` effect twice, and the uninterrupted trajectory. FileStore has the
 * input methods, so a `never` operation in flight is settled, answered from the world
 * file: a `record` that happened is `executed` (with its observation), one that did not is
 * retried; a model call (under `modelReplayPolicy: 'never'`) the world did not see is retried,
 * and one it saw can only be cancelled (a model call settles with retry or cancel, and a retry
 * would make it twice) — the one case that ends `cancelled`, with the uninterrupted prefix.
 */
import { readFile } from 'node:fs/promises';
import { isPolyLoopError, resume, run } from '../../../../src/core/index.ts';
import { canonicalJson } from '../../../../src/core/internal-entry.ts';
import type { InputReply, InputRequest, LogRecord, RunResult, StepRecord } from '../../../../src/core/index.ts';
import { FileStore } from '../../../../src/platform-node/index.ts';
import type { Reference } from './explore.ts';
import { POWER_RUN_ID, powerAgent, recordedObservation } from './power-agent.ts';

/** What resuming one state did. */
export type StateOutcome = {
  readonly cut: number;
  /** Records the acks before the cut promised durable (through the last acknowledged barrier). */
  readonly acked: number;
  /** Records `readLog` returned from the state, before the resume. */
  readonly survived: number;
  /** Stop reason of the resumed run; null when it failed. */
  readonly stopReason: string | null;
  /** No `run_started` survived: the run was started again. */
  readonly startedFresh: boolean;
  /** FileStore reported a torn tail it ignored or cut off. */
  readonly repaired: boolean;
  /** The settle replies given from the world file (`executed`, `retry`, `cancel`), in order. */
  readonly settled: readonly InputReply['kind'][];
  /** Property violations; empty when the state passed. */
  readonly problems: readonly string[];
};

/** Where a materialised state is, and what it is held to. */
export type CheckInput = {
  readonly storeDir: string;
  readonly world: string;
  readonly reference: Reference;
  readonly acked: number;
  readonly cut: number;
};

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

function stripTimes(step: StepRecord): string {
  const { startedAt: _s, endedAt: _e, ...rest } = step;
  return canonicalJson(rest);
}

async function worldLines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
}

/** The log before the resume: every acknowledged barrier there, and nothing but the reference's records. */
function checkSurvivors(before: readonly LogRecord[], input: CheckInput): string[] {
  const problems: string[] = [];
  if (before.length < input.acked)
    problems.push(
      `lost an acknowledged barrier: ${input.acked} records were acknowledged durable, ${before.length} survived`,
    );
  before.forEach((r, i) => {
    const want = input.reference.log[i];
    if (!want || canonicalJson(r) !== canonicalJson(want))
      problems.push(`surviving record ${i} (${r.kind}) is not the one the run wrote`);
  });
  return problems;
}

/** The resumed result and world against the uninterrupted run. */
function checkResult(
  ref: Reference,
  result: RunResult,
  world: readonly string[],
  settled: readonly InputReply['kind'][],
): string[] {
  const problems: string[] = [];
  if (new Set(world).size !== world.length)
    problems.push(`a never-replay effect happened twice: ${JSON.stringify(world)}`);
  if (result.stopReason === 'in_flight_unknown')
    problems.push('ended in_flight_unknown, although FileStore can settle a never operation in flight');
  const got = result.trajectory.map(stripTimes);
  const want = ref.result.trajectory.map(stripTimes);
  if (result.stopReason === 'cancelled' && settled.at(-1) === 'cancel') {
    // Only a model call the world saw ends so: the uninterrupted prefix, every effect at most once.
    got.forEach((s, i) => {
      if (s !== want[i]) problems.push(`step ${i} differs from the uninterrupted run`);
    });
    if (ref.modelPolicy !== 'never')
      problems.push('a settle request was cancelled, but only a model call under modelReplayPolicy never may be');
    if (JSON.stringify(world) !== JSON.stringify(ref.world.slice(0, world.length)))
      problems.push(`world ${JSON.stringify(world)} is not a prefix of the uninterrupted ${JSON.stringify(ref.world)}`);
    return problems;
  }
  if (JSON.stringify(got) !== JSON.stringify(want))
    problems.push('the resumed trajectory differs from the uninterrupted one');
  if (result.stopReason !== ref.result.stopReason || result.finalAnswer !== ref.result.finalAnswer)
    problems.push(
      `ended ${result.stopReason} / ${result.finalAnswer}, uninterrupted ${ref.result.stopReason} / ${ref.result.finalAnswer}`,
    );
  if (JSON.stringify(world) !== JSON.stringify(ref.world))
    problems.push(`world ${JSON.stringify(world)} differs from the uninterrupted ${JSON.stringify(ref.world)}`);
  return problems;
}

/** A person who looks at the world file: did the action (or the model call) in flight happen? */
async function settleFromWorld(p: InputRequest, worldFile: string): Promise<InputReply> {
  if (p.kind !== 'settle') throw new Error(`the power agent asks no ${p.kind}`);
  const world = await worldLines(worldFile);
  if (p.target === 'model_call')
    return world.includes(`call ${p.stepIndex}`)
      ? { kind: 'cancel', resultId: p.resultId }
      : { kind: 'retry', resultId: p.resultId };
  const action = p.decision?.action;
  const line = action?.kind === 'tool_call' ? String((action.arguments as { line?: unknown }).line) : '';
  return world.includes(`tool ${line}`)
    ? { kind: 'executed', resultId: p.resultId, observation: recordedObservation(line) }
    : { kind: 'retry', resultId: p.resultId };
}

/** Resume `run` (or start it, when no `run_started` survived) on a fresh FileStore over the state, settling what it asks. */
async function resumeOrStart(
  input: CheckInput,
  store: FileStore,
  calls: Map<number, string>,
): Promise<{ result: RunResult; startedFresh: boolean; settled: InputReply['kind'][] }> {
  const build = (): ReturnType<typeof powerAgent> =>
    powerAgent({
      store,
      world: input.world,
      steps: input.reference.steps,
      modelPolicy: input.reference.modelPolicy,
      onCall: (seq, hash) => calls.set(seq, hash),
    });
  const { agent, request } = build();
  let result: RunResult;
  let startedFresh = false;
  try {
    result = await resume(agent, request);
  } catch (e) {
    if (!isPolyLoopError(e, 'run_not_found')) throw e;
    result = await run(agent, request);
    startedFresh = true;
  }
  const settled: InputReply['kind'][] = [];
  for (let n = 0; result.pending !== null; n++) {
    if (n > 10) throw new Error('more than 10 input requests');
    const reply = await settleFromWorld(result.pending, input.world);
    settled.push(reply.kind);
    const next = build();
    result = await resume(next.agent, next.request, { input: reply });
  }
  return { result, startedFresh, settled };
}

/** Resume one materialised state and check every property. Never throws: failures are problems. */
export async function checkState(input: CheckInput): Promise<StateOutcome> {
  const problems: string[] = [];
  const warnings: string[] = [];
  const store = new FileStore({ dir: input.storeDir, onWarning: (w) => warnings.push(w.code) });
  let before: readonly LogRecord[] = [];
  try {
    before = await store.readLog(POWER_RUN_ID);
    problems.push(...checkSurvivors(before, input));
  } catch (e) {
    problems.push(`readLog of the state failed: ${describe(e)}`);
  }
  const calls = new Map<number, string>();
  let outcome: Awaited<ReturnType<typeof resumeOrStart>> | null = null;
  try {
    outcome = await resumeOrStart(input, store, calls);
    problems.push(...checkResult(input.reference, outcome.result, await worldLines(input.world), outcome.settled));
    const after = await store.readLog(POWER_RUN_ID);
    if (after.at(-1)?.kind !== 'run_ended')
      problems.push(`the resumed log ends with ${after.at(-1)?.kind ?? 'nothing'}, not run_ended`);
  } catch (e) {
    problems.push(`resume failed: ${describe(e)}`);
  }
  for (const [seq, hash] of calls) {
    if (input.reference.calls.get(seq) !== hash)
      problems.push(`model call ${seq} saw other messages than in the uninterrupted run`);
  }
  return {
    cut: input.cut,
    acked: input.acked,
    survived: before.length,
    stopReason: outcome?.result.stopReason ?? null,
    startedFresh: outcome?.startedFresh ?? false,
    repaired: warnings.length > 0,
    settled: outcome?.settled ?? [],
    problems,
  };
}
