/**
 * The run log as a value (docs/design/run-log.md#one-reader): one reader that every consumer uses —
 * resume, the CLI, the Workers status and event stream, the stores — and export/import, so a run
 * started on one store (and runtime) finishes on another.
 * @module
 */
import { CorruptLogError, InvalidRequestError, RunExistsError, RunNotFoundError } from './errors.ts';
import { acceptedReplies } from './internal/input.ts';
import { classifyLog } from './internal/recovery.ts';
import type { LogClass } from './internal/recovery.ts';
import { inputReplyProblem } from './internal/values.ts';
import { countSteps } from './internal/stopping.ts';
import type { Counters } from './internal/stopping.ts';
import type { RunStore } from './ports.ts';
import { checkOptionKeys } from './options.ts';
import { decodeLog, encodeLog } from './serialization.ts';
import { callStore } from './store-write.ts';
import { checkRecordDepth, checkSnapshotHash } from './log-trust.ts';
import { checkUpgradeHashes } from './upgrade.ts';
import type { InputRequestRecord, LogRecord, RunEndedRecord, RunLogView, StepRecord, Usage } from './types.ts';

/**
 * Read a decoded log: its state, trajectory, counters, the interrupted step with its
 * resolution decided, and the `run_ended` record. Pure; throws `CorruptLogError` for a log that
 * breaks the write protocol.
 *
 * @example
 * const view = readRunLog(await store.readLog(runId));
 * if (view.state === 'in_flight') console.log(view.inFlight?.resolution);
 */
export function readRunLog(records: readonly LogRecord[]): RunLogView {
  const c = classifyLog(records);
  const replies = new ReplyCheck();
  for (let i = 0; i < records.length; i++) replies.accept(records[i] as LogRecord, i);
  return viewOf(c, records.length);
}

/** The view of a classified log of `length` records whose replies were checked: counted, its end checked. */
export function viewOf(c: LogClass, length: number): RunLogView {
  const { steps, validActions, usage } = countSteps(c.steps);
  if (c.ended) checkEnd(c.ended, c.steps, { steps, validActions, usage }, length);
  return {
    state: c.state,
    runId: c.started?.runId ?? null,
    started: c.started,
    trajectory: c.steps,
    steps,
    validActions,
    usage,
    inFlight: c.inFlight,
    pending: c.pending,
    openRequests: c.openRequests,
    upgrades: c.upgrades,
    resumes: c.resumes,
    ended: c.ended,
  };
}

/** A child run a parent's log names (docs/design/sub-agents.md): see {@link childRunsOf}. */
export type ChildRunRef = {
  readonly runId: string;
  readonly stepIndex: number;
  /** The parent's action that ran it: `s3.action`, or `s3.a1` for a call of a step with several. */
  readonly resultId: string;
  /** `finished`: the parent recorded the child's outcome; `awaiting_input`: the parent waits on its request. */
  readonly state: 'finished' | 'awaiting_input';
};

/**
 * The sub-agent runs a parent's log names, in step order: each step (or call of a step with
 * several) that ran a child, and each open request of kind `child`. Pure; reads only the view.
 *
 * @example
 * for (const c of childRunsOf(readRunLog(await store.readLog('p1')))) console.log(c.runId, c.state);
 */
export function childRunsOf(view: RunLogView): readonly ChildRunRef[] {
  const out: ChildRunRef[] = [];
  const seen = new Set<string>();
  const add = (runId: string, stepIndex: number, resultId: string, state: ChildRunRef['state']): void => {
    if (seen.has(runId)) return;
    seen.add(runId);
    out.push({ runId, stepIndex, resultId, state });
  };
  for (const step of view.trajectory) {
    const i = step.stepIndex;
    if (step.childRunId !== undefined) add(step.childRunId, i, `s${i}.action`, 'finished');
    for (const c of step.calls ?? []) if (c.childRunId !== undefined) add(c.childRunId, i, c.resultId, 'finished');
  }
  for (const r of view.openRequests) {
    if (r.kind !== 'child' || r.child === undefined) continue;
    add(r.child.runId, r.stepIndex, actionResultId(r.resultId), 'awaiting_input');
  }
  return out;
}

/** The parent's action a child request pauses: `s2.c1` → `s2.action`, `s2.a1.c0` → `s2.a1`. */
function actionResultId(requestId: string): string {
  const action = requestId.replace(/\.c\d+$/, '');
  return /^s\d+$/.test(action) ? `${action}.action` : action;
}

/** What {@link readReadablePrefix} read: the longest prefix of a log that {@link readRunLog} accepts. */
export type PrefixReading = {
  /** The records read: all of them, or those before the record refused. */
  readonly records: readonly LogRecord[];
  readonly view: RunLogView;
  /** Why the log was cut (the last refusal, naming its record), or null when it was read whole. */
  readonly refusal: CorruptLogError | null;
};

/**
 * Read as much of a log as {@link readRunLog} accepts, for showing how far a run with a refused
 * log got. A refusal names its record, so the reading cuts before it and reads again (usually
 * once; the empty log is always accepted). Other errors are thrown.
 */
export function readReadablePrefix(all: readonly LogRecord[]): PrefixReading {
  let records = all;
  let refusal: CorruptLogError | null = null;
  for (;;) {
    try {
      return { records, view: readRunLog(records), refusal };
    } catch (e) {
      if (!(e instanceof CorruptLogError)) throw e;
      refusal = e;
      records = records.slice(0, Math.max(0, Math.min(records.length - 1, e.line - 1)));
    }
  }
}

/**
 * The end record repeats what the trajectory says (counters, the final answer, usage totals): a
 * reader believes it, so one that disagrees with the steps before it is a forged or damaged log.
 */
function checkEnd(ended: RunEndedRecord, trajectory: readonly StepRecord[], counted: Counters, line: number): void {
  const last = trajectory.at(-1);
  const final = ended.stopReason === 'final_answer';
  const usage = ended.usage ?? { inputTokens: 0, outputTokens: 0 };
  const faults: readonly (string | false)[] = [
    ended.steps !== counted.steps && `run_ended says ${ended.steps} steps, the log holds ${counted.steps}`,
    ended.validActions !== counted.validActions &&
      `run_ended says ${ended.validActions} valid actions, the steps count ${counted.validActions}`,
    final && last?.decision !== 'final' && 'run_ended says final_answer, but the last step is no final answer',
    ended.finalAnswer !== (final ? (last?.finalAnswer ?? null) : null) &&
      'run_ended holds another final answer than its last step',
    (usage.inputTokens !== counted.usage.inputTokens ||
      usage.outputTokens !== counted.usage.outputTokens ||
      !sameOptional(usage, counted.usage)) &&
      'run_ended holds other token totals than its steps',
  ];
  const fault = faults.find((f) => f !== false);
  if (fault) throw new CorruptLogError(line, fault, { source: 'run log' });
}

/** The optional totals `run_ended` states (an older writer may state none) are the steps' sums. */
function sameOptional(stated: Usage, counted: Usage): boolean {
  const keys = ['cachedInputTokens', 'reasoningTokens'] as const;
  return keys.every((k) => stated[k] === undefined || stated[k] === (counted[k] ?? 0));
}

/**
 * Each stored reply is carried out as its kind says, so only a well-formed reply its request
 * accepts may stand in a log: else `CorruptLogError` naming the record. Fed after
 * `classifyLog` has seen each record, which ties every `input` to the latest `input_request` of
 * its resultId.
 */
export class ReplyCheck {
  readonly #requests = new Map<string, InputRequestRecord>();

  accept(rec: LogRecord, i: number): void {
    if (rec.kind === 'input_request') this.#requests.set(rec.resultId, rec);
    const request = rec.kind === 'input' ? this.#requests.get(rec.resultId)?.request : undefined;
    if (rec.kind !== 'input' || !request) return;
    const fault =
      inputReplyProblem(rec.reply) ??
      (acceptedReplies(request).includes(rec.reply.kind)
        ? null
        : `a ${request.kind} request does not accept ${rec.reply.kind}`);
    if (fault !== null) throw new CorruptLogError(i + 1, `input for ${rec.resultId}: ${fault}`, { source: 'run log' });
  }
}

/**
 * A run's log as NDJSON: one record per line, each line ending in `\n`, as `encodeLog` writes
 * them (the lean form of record version 1.2; records of 1.0 and 1.1 as they were written).
 * Every store exports the same run as the same bytes. A torn last line the store dropped is not
 * exported. Rejects with `RunNotFoundError` for an empty log.
 *
 * @example
 * const ndjson = await exportRun(new FileStore({ dir: './runs' }), 'run-1');
 */
export async function exportRun(store: RunStore, runId: string): Promise<string> {
  const records = await store.readLog(runId);
  if (records.length === 0) throw new RunNotFoundError(runId);
  readRunLog(records);
  return encodeLog(records);
}

const IMPORT_OPTIONS = { signal: true } as const;

/**
 * Write an exported log into `store` under `runId`, record by record through the store's own
 * methods (so its barriers and atomic step writes hold), holding the store's lease when it has
 * one. Refuses, writing nothing: a non-empty target (`RunExistsError`); a corrupt or torn log,
 * or one that breaks the write protocol (`CorruptLogError`); a foreign schema major
 * (`SchemaVersionError`); an empty log, or one whose `run_started` names another run
 * (`InvalidRequestError`). The imported run is then resumed like any other.
 *
 * @example
 * await importRun(new IndexedDBStore({ dbName: 'agent' }), 'run-1', ndjson);
 * await resume(agent, request);
 */
export async function importRun(
  store: RunStore,
  runId: string,
  ndjson: string,
  opts: { readonly signal?: AbortSignal } = {},
): Promise<void> {
  checkOptionKeys(opts, IMPORT_OPTIONS, 'importRun');
  if (typeof ndjson !== 'string') throw new InvalidRequestError('importRun: the log must be NDJSON text');
  const { records, tornLine } = decodeLog(ndjson, { source: 'imported log' });
  if (tornLine !== null)
    throw new CorruptLogError(tornLine, 'the last line is torn (incomplete JSON); export the run again', {
      source: 'imported log',
    });
  if (records.length === 0) throw new InvalidRequestError('importRun: the log is empty');
  // JSON.parse reads any depth, but JSON.stringify, structured clone and the other runtimes'
  // stacks do not: one fixed limit, checked before anything is written or compared.
  checkRecordDepth(records, 'imported log');
  const view = readRunLog(records);
  if (view.started) {
    await checkSnapshotHash(view.started, 'imported log');
    await checkUpgradeHashes(view.started, view.upgrades, (pred) => records.findIndex(pred) + 1, 'imported log');
  }
  if (view.runId !== runId)
    throw new InvalidRequestError(
      `importRun: the log is of run ${JSON.stringify(view.runId)}, not ${JSON.stringify(runId)}`,
    );
  if (records.some((r) => r.kind === 'input_request' || r.kind === 'input') && (!store.inputRequest || !store.input)) {
    throw new InvalidRequestError(
      'importRun: the log holds human input, and this store cannot write it (no inputRequest/input)',
    );
  }
  if (view.upgrades.length > 0 && !store.upgrade)
    throw new InvalidRequestError(
      'importRun: the log holds an upgrade, and this store cannot write it (no upgrade method)',
    );
  if (records.some((r) => r.kind === 'call_result') && !store.callResult)
    throw new InvalidRequestError(
      'importRun: the log holds the calls of a step with several, and this store cannot write them ' +
        '(no callResult method)',
    );
  if (view.resumes.length > 0 && !store.resumed)
    throw new InvalidRequestError(
      'importRun: the log marks where drivers took the run over, and this store cannot write those marks ' +
        '(no resumed method)',
    );
  const release = store.acquire
    ? await store.acquire(runId, { signal: opts.signal ?? new AbortController().signal })
    : null;
  try {
    if ((await store.readLog(runId)).length > 0) throw new RunExistsError(runId);
    // The optional methods were checked above, so each record has its store method.
    for (const rec of records) await callStore(store, runId, rec, undefined);
  } finally {
    await release?.();
  }
}
