/**
 * The crash law as a harness: run an agent once without a crash, then crash it after every one
 * of its writes (the failing write lost, and landed), resume it as a new process would, answer
 * every input request it raises with the same scripted replies, and report every case whose
 * end differs from the uninterrupted run, or that ran a `never` action twice. A sub-agent's child
 * run on the same store is part of the run: its writes are crash points too, and its log must end
 * as the uninterrupted child's (docs/design/laws.md#sub-agents). Users run it over
 * their own agents to prove their approval flows survive a crash at every write point — and,
 * with `upgrade`, that a run their next deploy upgrades mid-way does too (docs/recovery.md).
 * @module
 */
import { childRunsOf, encodeRecord, InMemoryStore, readRunLog } from '../core/index.ts';
import { checkOptionKeys } from '../core/internal-entry.ts';
import type {
  LogRecord,
  RunEndedRecord,
  RunRequestInput,
  RunResult,
  RunStore,
  StepRecord,
  StepWriteRecord,
  UpgradeRecord,
} from '../core/index.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import { misplacedMark } from './crash-marks.ts';
import { driveStory, stepRecords } from './crash-story.ts';
import type { CaseMemory, Story, StoryReply, StorySetup, UpgradePoint } from './crash-story.ts';
import { faultyStore } from './faulty-store.ts';

/** What {@link crashAtEveryWrite} needs. */
export type CrashLawOptions = {
  /**
   * A fresh agent and request over `store` — the same definition every time, as a restarted
   * process would build it (a fresh scripted model, the same tools).
   */
  readonly setup: StorySetup<RunRequestInput>;
  /**
   * The reply a person gives to an open request — the same reply every time it is asked. For a
   * `settle` request, answer from the outside world: `executed` (with the observation) when the
   * action did happen, `retry` when it did not. Without it, a run that asks for input fails the law.
   */
  readonly reply?: StoryReply;
  /** A fresh, empty store for one case (default: `new InMemoryStore()`). */
  readonly store?: () => RunStore;
  /** Also crash with the failing write landed before its promise failed (default true). */
  readonly landed?: boolean;
  /** Upgrade the run mid-way: `setup` is the old code, this the deploy that replaces it. */
  readonly upgrade?: CrashLawUpgrade;
};

/**
 * The new code of a run upgraded mid-way, and the point where it takes over. Past that point
 * every process calls `resume(agent, request, { upgrade: { reason } })` — the first writes the
 * `upgrade` record; one whose record a crash lost asks again and writes it; one after the record
 * landed finds the identity in force and writes none.
 */
export type CrashLawUpgrade = {
  /** Agent B and its request, or the run's id to resume by id (then B's `defaults` give tools and executor). */
  readonly setup: StorySetup<RunRequestInput | string>;
  /** The upgrade's reason (kept in its record). */
  readonly reason: string;
  /**
   * When B takes over. `'input'`: once the run waits for a person's approval or answer (a
   * settlement, which only a crash raises, does not count). A function: asked of the run's log
   * before each write of the old code (true stops the old process there, that write unmade) and
   * after each of its calls returns — `(v) => v.steps === 2` is a step boundary (a deploy drains
   * the old process between steps), `(v) => v.inFlight?.actionIntent?.stepIndex === 1` an action
   * in flight (the old process died after the action ran, before its result was written).
   */
  readonly at: UpgradePoint;
};

/** One crashed-and-resumed case. */
export type CrashCase = { readonly crashAfterWrites: number; readonly landed: boolean; readonly result: RunResult };

/** What {@link crashAtEveryWrite} found: the reference, every case, and what differed (empty when the law holds). */
export type CrashLawReport = {
  readonly reference: RunResult;
  /** The reference's `upgrade` record; null without the `upgrade` option. */
  readonly upgrade: UpgradeRecord | null;
  readonly writes: number;
  readonly cases: readonly CrashCase[];
  readonly failures: readonly string[];
};

const KNOWN: OptionKeys<CrashLawOptions> = { setup: true, reply: true, store: true, landed: true, upgrade: true };
const KNOWN_UPGRADE: OptionKeys<CrashLawUpgrade> = { setup: true, reason: true, at: true };

/** A story's end with the log it left, its child runs' logs by run id, and what its case remembered. */
type Outcome = {
  readonly result: RunResult;
  readonly log: readonly LogRecord[];
  readonly children: ReadonlyMap<string, readonly LogRecord[]>;
  readonly memory: CaseMemory;
};

/**
 * Check the crash law over one agent: every case ends like the uninterrupted run (stop reason,
 * final answer, counters, and the trajectory field by field, timestamps aside), and every `never`
 * action ran as many times as in the uninterrupted run, never twice. The sub-agents' child runs the
 * logs name (on `store`, nested ones too) are the uninterrupted run's: the same runs, each with its
 * step records (timestamps aside) and its end. Their executors are the child agents' own, out of
 * the harness's reach: count a child's `never` effects in the test's world. With `upgrade`, also: the
 * run holds one `upgrade` record, the uninterrupted run's (its time aside), and the step records
 * before its `stepIndex` are byte for byte the ones the log held when B took over — and the
 * uninterrupted run's, timestamps aside. And every driver marks where it took the run over: one
 * `resumed` record, first, at the step it carries on and with `readRunLog`'s resolution, from each
 * that carries the run on, none from one that carries nothing on — so a crash and resume adds one
 * mark unless the resume continued nothing, and the trajectory is the same as without them; a
 * child run's marks, written by drivers its parent's actions start, each say what its log before
 * them does.
 *
 * @example
 * const report = await crashAtEveryWrite({
 *   setup: (store) => build(store),
 *   reply: (p) => ({ kind: 'approve', resultId: p.resultId }),
 * });
 * expect(report.failures).toEqual([]);
 */
export async function crashAtEveryWrite(opts: CrashLawOptions): Promise<CrashLawReport> {
  checkOptionKeys(opts, KNOWN, 'crashAtEveryWrite');
  if (opts.upgrade !== undefined) checkOptionKeys(opts.upgrade, KNOWN_UPGRADE, 'crashAtEveryWrite: upgrade');
  const fresh = opts.store ?? (() => new InMemoryStore());
  const counting = faultyStore(fresh(), { crashAfterWrites: Number.POSITIVE_INFINITY });
  const { setup, reply, upgrade: newCode } = opts;
  const story: Story = { runId: setup(counting).request.runId, setup, reply, upgrade: newCode };
  const reference = await play(story, counting, null);
  if (!('result' in reference)) throw new Error(`the uninterrupted run failed: ${String(reference.error)}`);
  const upgrade = upgradesOf(reference.log)[0] ?? null;
  if (newCode && upgrade === null) {
    throw new Error(
      "the uninterrupted run wrote no upgrade record: the new code's agent and request are the old one's",
    );
  }
  const writes = counting.writes.length;
  const cases: CrashCase[] = [];
  const failures: string[] = [];
  const upgrading = newCode !== undefined;
  const own = lawProblem(reference, reference, upgrading);
  if (own) failures.push(`the uninterrupted run: ${own}`);
  for (const landed of opts.landed === false ? [false] : [false, true]) {
    for (let k = 0; k < writes; k++) {
      const label = `crash after ${k} writes${landed ? ' (the next one landed)' : ''}`;
      const end = await play(story, fresh(), { crashAfterWrites: k, landsBeforeThrow: landed });
      if (!('result' in end)) {
        failures.push(`${label}: the resume failed: ${String(end.error)}`);
        continue;
      }
      cases.push({ crashAfterWrites: k, landed, result: end.result });
      const problem = lawProblem(reference, end, upgrading);
      if (problem) failures.push(`${label}: ${problem}`);
    }
  }
  return { reference: reference.result, upgrade, writes, cases, failures };
}

/**
 * One case over a fresh store: the story until the crash, then — if it crashed — again as a
 * restarted process on what the crash left (`crash` null: the uninterrupted run, on `store` as is).
 */
async function play(
  story: Story,
  store: RunStore,
  crash: { crashAfterWrites: number; landsBeforeThrow: boolean } | null,
): Promise<Outcome | { readonly error: unknown }> {
  const memory: CaseMemory = { executions: new Map(), stepsAtTakeover: null, takeovers: [] };
  let end = await driveStory(story, crash === null ? store : faultyStore(store, crash), memory, false);
  if (!end.ok && crash !== null) end = await driveStory(story, store, memory, true);
  if (!end.ok) return { error: end.error };
  try {
    const log = await store.readLog(story.runId);
    return { result: end.result, log, children: await childLogs(store, log), memory };
  } catch (error) {
    return { error };
  }
}

/** The logs of the child runs `log` names, and of theirs, by run id (none for a run without sub-agents). */
async function childLogs(store: RunStore, log: readonly LogRecord[]): Promise<Map<string, readonly LogRecord[]>> {
  const logs = new Map<string, readonly LogRecord[]>();
  const named = (records: readonly LogRecord[]): string[] =>
    records.length === 0 ? [] : childRunsOf(readRunLog(records)).map((c) => c.runId);
  const todo = named(log);
  for (let id = todo.shift(); id !== undefined; id = todo.shift()) {
    if (logs.has(id)) continue;
    const child = await store.readLog(id);
    logs.set(id, child);
    todo.push(...named(child));
  }
  return logs;
}

/** What breaks the law in `got` against the reference, or null. */
function lawProblem(ref: Outcome, got: Outcome, upgrading: boolean): string | null {
  return (
    difference(ref.result, got.result) ??
    neverProblem(ref, got) ??
    childProblem(ref, got) ??
    (upgrading ? upgradeProblem(ref, got) : null) ??
    got.memory.takeovers[0] ??
    null
  );
}

/** How a run ended, its time and event deliveries aside; null while it has not. */
const endOf = (log: readonly LogRecord[]): string | null => {
  const e = log.find((r): r is RunEndedRecord => r.kind === 'run_ended');
  return e ? JSON.stringify([e.stopReason, e.finalAnswer, e.steps, e.validActions, e.usage ?? null]) : null;
};

/** How the child runs differ from the uninterrupted run's: other runs, other steps (timestamps aside), another end. */
function childProblem(ref: Outcome, got: Outcome): string | null {
  const want = [...ref.children.keys()].sort();
  const have = [...got.children.keys()].sort();
  if (JSON.stringify(want) !== JSON.stringify(have))
    return `the child runs are ${JSON.stringify(have)}, not ${JSON.stringify(want)}`;
  for (const id of want) {
    const a = stepRecords(ref.children.get(id) ?? []).map((r) => r.step);
    const b = stepRecords(got.children.get(id) ?? []).map((r) => r.step);
    if (untimed(a) !== untimed(b)) return `the child run ${id}'s steps differ from the uninterrupted one's`;
    const end = endOf(got.children.get(id) ?? []);
    if (end !== endOf(ref.children.get(id) ?? [])) return `the child run ${id} ended ${end ?? 'not at all'}`;
    const marks = misplacedMark(got.children.get(id) ?? []);
    if (marks !== null) return `the child run ${id}'s ${marks}`;
  }
  return null;
}

const untimed = (steps: readonly StepRecord[]): string =>
  JSON.stringify(steps.map((s) => ({ ...s, startedAt: '', endedAt: '' })));

function difference(ref: RunResult, got: RunResult): string | null {
  if (got.stopReason !== ref.stopReason) return `ended ${got.stopReason}, not ${ref.stopReason}`;
  if (got.finalAnswer !== ref.finalAnswer)
    return `final answer ${JSON.stringify(got.finalAnswer)}, not ${JSON.stringify(ref.finalAnswer)}`;
  if (got.steps !== ref.steps || got.validActions !== ref.validActions)
    return `${got.steps} steps / ${got.validActions} valid actions, not ${ref.steps} / ${ref.validActions}`;
  const a = untimed(ref.trajectory);
  const b = untimed(got.trajectory);
  if (a !== b) {
    const i = ref.trajectory.findIndex((s, n) => untimed([s]) !== untimed(got.trajectory.slice(n, n + 1)));
    return `the trajectory differs from the uninterrupted one at step ${i}`;
  }
  return null;
}

/** How many times each `never` action of the log ran (by result id; the policy as its intent recorded it). */
function neverRuns(o: Outcome): Map<string, number> {
  const runs = new Map<string, number>();
  const count = (resultId: string): void => void runs.set(resultId, o.memory.executions.get(resultId) ?? 0);
  for (const r of o.log) {
    if (r.kind !== 'intent') continue;
    if (r.intent === 'action' && r.replayPolicy === 'never') count(r.resultId);
    // A step with several calls: each call by its own resultId and policy.
    if (r.intent === 'actions') for (const c of r.calls) if (c.replayPolicy === 'never') count(c.resultId);
  }
  return runs;
}

function neverProblem(ref: Outcome, got: Outcome): string | null {
  const want = neverRuns(ref);
  const ran = neverRuns(got);
  for (const id of new Set([...want.keys(), ...ran.keys()])) {
    const n = ran.get(id) ?? 0;
    const m = want.get(id) ?? 0;
    if (n > 1) return `the never action ${id} ran ${n} times`;
    if (n !== m) return `the never action ${id} ran ${n} times, ${m} in the uninterrupted run`;
  }
  return null;
}

const upgradesOf = (log: readonly LogRecord[]): UpgradeRecord[] =>
  log.filter((r): r is UpgradeRecord => r.kind === 'upgrade');
const encodeUntimed = (rec: StepWriteRecord): string =>
  encodeRecord({ ...rec, step: { ...rec.step, startedAt: '', endedAt: '' } });

/**
 * One upgrade record, the reference's (its time aside); the step records before its `stepIndex`
 * as they were when B took over (byte for byte), and as the reference's (timestamps aside).
 */
function upgradeProblem(ref: Outcome, got: Outcome): string | null {
  const ups = upgradesOf(got.log);
  const [u] = ups;
  if (ups.length !== 1 || u === undefined) return `the log holds ${ups.length} upgrade records, not one`;
  const want = upgradesOf(ref.log)[0] as UpgradeRecord;
  if (encodeRecord({ ...u, at: '' }) !== encodeRecord({ ...want, at: '' })) {
    return `the upgrade record differs from the uninterrupted run's: ${encodeRecord(u)}`;
  }
  const before = (log: readonly StepWriteRecord[]): StepWriteRecord[] =>
    log.filter((r) => r.step.stepIndex < u.stepIndex);
  const steps = `the step records before the upgrade (steps 0–${u.stepIndex - 1})`;
  const now = before(stepRecords(got.log));
  const then = before(got.memory.stepsAtTakeover ?? []);
  if (now.map(encodeRecord).join('\n') !== then.map(encodeRecord).join('\n')) {
    return `${steps} are not the bytes they were when the new code took over`;
  }
  if (now.map(encodeUntimed).join('\n') !== before(stepRecords(ref.log)).map(encodeUntimed).join('\n')) {
    return `${steps} differ from the uninterrupted run's, timestamps aside`;
  }
  return null;
}
