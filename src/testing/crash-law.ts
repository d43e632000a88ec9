/**
 * The crash law as a harness: run an agent once without a crash, then crash it after every one
 * of its writes (the failing write lost, and landed), resume it as a new process would, answer
 * every input request it raises with the same scripted replies, and report every case whose
 * end differs from the uninterrupted run. Users run it over their own agents to prove their
 * approval flows survive a crash at every write point (SPEC §5, §9).
 * @module
 */
import { checkOptionKeys, InMemoryStore, resume, run } from '../core/index.ts';
import type { AgentDefinition, InputReply, InputRequest, OptionKeys, RunRequest, RunResult, RunStore, StepRecord } from '../core/index.ts';
import { faultyStore } from './faulty-store.ts';

/** What {@link crashAtEveryWrite} needs. */
export type CrashLawOptions = {
  /**
   * A fresh agent and request over `store` — the same definition every time, as a restarted
   * process would build it (a fresh scripted model, the same tools).
   */
  readonly setup: (store: RunStore) => { readonly agent: AgentDefinition; readonly request: RunRequest };
  /**
   * The reply a person gives to an open request — the same reply every time it is asked. For a
   * `settle` request, answer from the outside world: `executed` (with the observation) when the
   * action did happen, `retry` when it did not. Without it, a run that asks for input fails the law.
   */
  readonly reply?: (pending: InputRequest) => InputReply;
  /** A fresh, empty store for one case (default: `new InMemoryStore()`). */
  readonly store?: () => RunStore;
  /** Also crash with the failing write landed before its promise failed (default true). */
  readonly landed?: boolean;
};

/** One crashed-and-resumed case. */
export type CrashCase = { readonly crashAfterWrites: number; readonly landed: boolean; readonly result: RunResult };

/** What {@link crashAtEveryWrite} found: the reference, every case, and what differed (empty when the law holds). */
export type CrashLawReport = {
  readonly reference: RunResult;
  readonly writes: number;
  readonly cases: readonly CrashCase[];
  readonly failures: readonly string[];
};

const MAX_REPLIES = 1_000;
const KNOWN: OptionKeys<CrashLawOptions> = { setup: true, reply: true, store: true, landed: true };

/**
 * Check the crash law over one agent: every case ends like the uninterrupted run (stop reason,
 * final answer, counters, and the trajectory field by field, timestamps aside).
 *
 * @example
 * const report = await crashAtEveryWrite({ setup: (store) => build(store), reply: (p) => ({ kind: 'approve', resultId: p.resultId }) });
 * expect(report.failures).toEqual([]);
 */
export async function crashAtEveryWrite(opts: CrashLawOptions): Promise<CrashLawReport> {
  checkOptionKeys(opts, KNOWN, 'crashAtEveryWrite');
  const fresh = opts.store ?? (() => new InMemoryStore());
  const counting = faultyStore(fresh(), { crashAfterWrites: Number.POSITIVE_INFINITY });
  const reference = await driveToEnd(opts, counting, false);
  if (!isResult(reference)) throw new Error(`the uninterrupted run failed: ${String(reference)}`);
  const writes = counting.writes.length;
  const cases: CrashCase[] = [];
  const failures: string[] = [];
  for (const landed of opts.landed === false ? [false] : [false, true]) {
    for (let k = 0; k < writes; k++) {
      const label = `crash after ${k} writes${landed ? ' (the next one landed)' : ''}`;
      const inner = fresh();
      const first = await driveToEnd(opts, faultyStore(inner, { crashAfterWrites: k, landsBeforeThrow: landed }), false);
      const result = isResult(first) ? first : await driveToEnd(opts, inner, true);
      if (!isResult(result)) {
        failures.push(`${label}: the resume failed: ${String(result)}`);
        continue;
      }
      cases.push({ crashAfterWrites: k, landed, result });
      const problem = difference(reference, result);
      if (problem) failures.push(`${label}: ${problem}`);
    }
  }
  return { reference, writes, cases, failures };
}

/** Start (or resume) and answer every request until the run ends; a failure is returned, not thrown. */
async function driveToEnd(opts: CrashLawOptions, store: RunStore, resuming: boolean): Promise<RunResult | unknown> {
  try {
    const first = opts.setup(store);
    // A crash before the first write left no log: the restarted process starts the run again.
    const started = resuming && (await store.readLog(first.request.runId)).length > 0;
    let result = started ? await resume(first.agent, first.request) : await run(first.agent, first.request);
    for (let n = 0; result.pending !== null; n++) {
      if (!opts.reply) throw new Error(`the run asks for input (${result.pending.kind} ${result.pending.resultId}) and no reply was scripted`);
      if (n >= MAX_REPLIES) throw new Error(`more than ${MAX_REPLIES} input requests`);
      const next = opts.setup(store);
      result = await resume(next.agent, next.request, { input: opts.reply(result.pending) });
    }
    return result;
  } catch (e) {
    return e;
  }
}

function isResult(v: unknown): v is RunResult {
  return typeof v === 'object' && v !== null && 'stopReason' in v && 'trajectory' in v;
}

const untimed = (steps: readonly StepRecord[]): string => JSON.stringify(steps.map((s) => ({ ...s, startedAt: '', endedAt: '' })));

function difference(ref: RunResult, got: RunResult): string | null {
  if (got.stopReason !== ref.stopReason) return `ended ${got.stopReason}, not ${ref.stopReason}`;
  if (got.finalAnswer !== ref.finalAnswer) return `final answer ${JSON.stringify(got.finalAnswer)}, not ${JSON.stringify(ref.finalAnswer)}`;
  if (got.steps !== ref.steps || got.validActions !== ref.validActions) return `${got.steps} steps / ${got.validActions} valid actions, not ${ref.steps} / ${ref.validActions}`;
  const a = untimed(ref.trajectory);
  const b = untimed(got.trajectory);
  if (a !== b) {
    const i = ref.trajectory.findIndex((s, n) => untimed([s]) !== untimed(got.trajectory.slice(n, n + 1)));
    return `the trajectory differs from the uninterrupted one at step ${i}`;
  }
  return null;
}
