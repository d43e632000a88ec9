/**
 * Recovery (pure, sync): classify a run log (docs/design/records-and-recovery.md#log-states) and
 * compare parameter snapshots.
 * @module
 */
import { childReplyDue, openRequestOf } from './step-calls.ts';
import type { CallsTrack } from './step-calls.ts';
import {
  acceptActionIntent,
  acceptActionsIntent,
  acceptModelIntent,
  acceptRequest,
  acceptStep,
  corrupt,
  StepTrack,
} from './step-track.ts';
import type {
  InFlightResolution,
  InFlightStep,
  InputRequest,
  LogRecord,
  ModelCallIntentRecord,
  ResumedRecord,
  RunEndedRecord,
  RunLogState,
  RunStartedRecord,
  StepRecord,
  UpgradeRecord,
} from '../types.ts';

/** What a log says about its run, before counting (see `readRunLog` in `run-log.ts`). */
export type LogClass = {
  readonly state: RunLogState;
  readonly started: RunStartedRecord | null;
  readonly steps: readonly StepRecord[];
  readonly inFlight: InFlightStep | null;
  readonly pending: InputRequest | null;
  readonly openRequests: readonly InputRequest[];
  readonly upgrades: readonly UpgradeRecord[];
  readonly resumes: readonly ResumedRecord[];
  readonly ended: RunEndedRecord | null;
};

/** The 1-based line of the first record `pred` accepts among those a reading kept, or 0 when none. */
export type FindLine = (pred: (rec: LogRecord) => boolean) => number;

const NO_RESUMES: readonly ResumedRecord[] = Object.freeze([]);

/**
 * Classify a decoded log and decide how an interrupted step goes on
 * (docs/design/records-and-recovery.md#the-interrupted-step): a model-call intent without its
 * result is re-issued (`safe`) or settled by a person (`never`); a result without an action intent
 * is re-interpreted (nothing ran yet); an action intent without its step is executed again (`safe`)
 * or settled (`never`); an unanswered input request awaits input; a reply with nothing after it is
 * carried out. Throws `CorruptLogError` (record number, 1-based) when the records do not follow the
 * write protocol.
 */
export function classifyLog(log: readonly LogRecord[]): LogClass {
  const c = new LogClassifier();
  for (let i = 0; i < log.length; i++) c.accept(log[i] as LogRecord, i);
  return c.end();
}

/**
 * {@link classifyLog} one record at a time, for a reader that does not hold the whole log: feed it
 * every record in order (`index` 0-based, as in the log), then `end()`.
 */
export class LogClassifier {
  #first: RunStartedRecord | null = null;
  #ended: RunEndedRecord | null = null;
  readonly #steps: StepRecord[] = [];
  readonly #upgrades: UpgradeRecord[] = [];
  readonly #resumes: ResumedRecord[] = [];
  #t: StepTrack | null = null;

  /** Whether the next record starts a step: the run has started, not ended, and no step is open. */
  get atBoundary(): boolean {
    return this.#t !== null && this.#ended === null && this.#t.modelIntent === null;
  }

  /** The index of the next step (how many steps the log holds so far). */
  get nextStep(): number {
    return this.#steps.length;
  }

  /**
   * A whole action step whose records (model-call intent, result, action intent, step) a reader has
   * already checked against each other: the model-call intent and result of `s{i}.model`, an action
   * intent, and a step whose action result is its action's. Only {@link atBoundary}, and only with
   * `step.stepIndex` = {@link nextStep}. Throws otherwise: the caller reads the records one by one.
   */
  acceptCheckedStep(step: StepRecord): void {
    if (!this.atBoundary || step.stepIndex !== this.#steps.length || step.calls !== undefined)
      throw new Error('acceptCheckedStep: not at the boundary of that step');
    this.#steps.push(step);
  }

  accept(rec: LogRecord, i: number): void {
    if (this.#ended) throw corrupt(i, 'records after run_ended');
    const first = this.#first;
    if (!first) {
      if (rec.kind !== 'run_started') throw corrupt(0, `first record is ${rec.kind}, not run_started`);
      this.#first = rec;
      this.#t = new StepTrack(rec.runId);
      return;
    }
    const steps = this.#steps;
    const t = this.#t as StepTrack;
    if (rec.kind === 'run_started') throw corrupt(i, 'a second run_started record');
    if (rec.kind === 'run_ended') {
      this.#ended = rec;
      return;
    }
    const next = steps.length;
    const index = rec.kind === 'step' ? rec.step.stepIndex : rec.stepIndex;
    if (index !== next) throw corrupt(i, `${rec.kind} for step ${index} while step ${next} is next`);
    // An upgrade may come between any two records of a step: resume writes it wherever the run stopped.
    if (rec.kind === 'upgrade') {
      this.#upgrades.push(rec);
      return;
    }
    // So may a driver's `resumed` mark: it says where the driver took over, and changes nothing.
    if (rec.kind === 'resumed') {
      // Its driver wrote it right after the log it read: its resolution is that log's (O(1) per mark).
      const fits = finish(first, steps, this.#upgrades, t).inFlight?.resolution ?? null;
      if (rec.resolution !== fits) throw corrupt(i, `a resumed mark says ${rec.resolution}, its log ${fits}`);
      this.#resumes.push(rec);
      return;
    }
    if (rec.kind !== 'intent' || rec.intent !== 'model_call') {
      if (!t.modelIntent) throw corrupt(i, `${rec.kind} of step ${next} without its model-call intent`);
    }
    const open = t.open();
    if (t.calls && (rec.kind === 'input_request' || rec.kind === 'input' || rec.kind === 'call_result')) {
      const problem = t.calls.accept(rec);
      if (problem !== null) throw corrupt(i, problem);
      return;
    }
    switch (rec.kind) {
      case 'intent':
        if (open) throw corrupt(i, `an intent while input request ${open.request.resultId} is open`);
        if (t.calls) throw corrupt(i, `an intent after the actions intent of step ${next}`);
        if (rec.intent === 'model_call') acceptModelIntent(t, rec, i);
        else if (rec.intent === 'action') acceptActionIntent(t, rec, i);
        else acceptActionsIntent(t, rec, i);
        break;
      case 'call_result':
        throw corrupt(i, `call_result ${rec.resultId} without the actions intent of its step`);
      case 'result':
        if (rec.resultId !== t.modelIntent?.resultId)
          throw corrupt(i, `result ${rec.resultId} without its model-call intent`);
        if (t.result) throw corrupt(i, `a second result for ${rec.resultId}`);
        if (open || t.settlement) throw corrupt(i, `result ${rec.resultId} while its settlement is unresolved`);
        t.result = rec;
        break;
      case 'input_request':
        if (open) throw corrupt(i, `input request ${rec.resultId} while ${open.request.resultId} is open`);
        acceptRequest(t, rec, i);
        break;
      case 'input':
        if (!open || open.request.resultId !== rec.resultId)
          throw corrupt(i, `input for ${rec.resultId}, which is not the open request`);
        open.input = rec;
        break;
      case 'step':
        acceptStep(t, rec, next, i);
        steps.push(rec.step);
        this.#t = new StepTrack(first.runId);
        break;
    }
  }

  /** What the records fed so far say (see {@link classifyLog}). */
  end(): LogClass {
    const first = this.#first;
    if (!first) {
      const none = { inFlight: null, pending: null, openRequests: [], upgrades: [], resumes: [], ended: null };
      return { state: 'not_started', started: null, steps: [], ...none };
    }
    const [steps, upgrades, resumes] = [this.#steps, this.#upgrades, this.#resumes];
    if (this.#ended) {
      const none = { inFlight: null, pending: null, openRequests: [] };
      return { state: 'ended', started: first, steps, ...none, upgrades, resumes, ended: this.#ended };
    }
    const found = finish(first, steps, upgrades, this.#t as StepTrack);
    return resumes.length === 0 ? found : { ...found, resumes };
  }
}

function finish(
  started: RunStartedRecord,
  steps: readonly StepRecord[],
  upgrades: readonly UpgradeRecord[],
  t: StepTrack,
): LogClass {
  const { modelIntent, result, actionIntent } = t;
  if (!modelIntent)
    return {
      state: 'at_boundary',
      started,
      steps,
      inFlight: null,
      pending: null,
      openRequests: [],
      upgrades,
      resumes: NO_RESUMES,
      ended: null,
    };
  if (t.calls) return finishCalls(started, steps, upgrades, t, t.calls);
  const open = t.open();
  const answered = t.settlement?.input
    ? t.settlement
    : t.child?.input
      ? t.child
      : t.gate?.input && !actionIntent
        ? t.gate
        : null;
  const exchange = open ?? answered;
  let resolution: InFlightResolution;
  if (open) resolution = 'await_input';
  else if (answered) resolution = 'apply_input';
  else if (!result) resolution = modelIntent.replayPolicy === 'never' ? 'settle' : 'reissue_model';
  else if (!actionIntent) resolution = 'reinterpret';
  else resolution = actionIntent.replayPolicy === 'never' ? 'settle' : 'replay_action';
  const target = actionIntent || (result && exchange?.request.request.target === 'action') ? 'action' : 'model_call';
  const inFlight: InFlightStep = {
    stepIndex: modelIntent.stepIndex,
    resolution,
    target: exchange ? exchange.request.request.target : target,
    modelIntent,
    result,
    actionIntent,
    request: exchange?.request ?? null,
    input: exchange?.input ?? null,
    approval: t.gate?.input ?? null,
    calls: null,
  };
  // Known keys only: unknown keys a request record keeps must not stand in for the record's own.
  const pending: InputRequest | null = open ? openRequestOf(open.request) : null;
  const openRequests = pending ? [pending] : [];
  const state = open ? 'awaiting_input' : 'in_flight';
  return { state, started, steps, inFlight, pending, openRequests, upgrades, resumes: NO_RESUMES, ended: null };
}

/** An interrupted step with several calls: awaiting its open requests, else running its calls. */
function finishCalls(
  started: RunStartedRecord,
  steps: readonly StepRecord[],
  upgrades: readonly UpgradeRecord[],
  t: StepTrack,
  calls: CallsTrack,
): LogClass {
  const open = calls.open();
  // A reply to a sub-agent's request that has not reached its child yet is work to do, whatever else
  // waits; only gates and settlements hold the whole step.
  const due = calls.blocking().length === 0 && calls.calls.some(childReplyDue);
  const waits = open.length > 0 && !due;
  const inFlight: InFlightStep = {
    stepIndex: calls.intent.stepIndex,
    resolution: waits ? 'await_input' : 'run_calls',
    target: 'action',
    modelIntent: t.modelIntent as ModelCallIntentRecord,
    result: t.result,
    actionIntent: null,
    request: open[0] ?? null,
    input: null,
    approval: null,
    calls: { intent: calls.intent, calls: calls.calls.map((c) => ({ ...c })), mayHaveRun: calls.gatesAnswered() },
  };
  const openRequests = open.map(openRequestOf);
  const state = waits ? 'awaiting_input' : 'in_flight';
  const pending = waits ? (openRequests[0] ?? null) : null;
  return { state, started, steps, inFlight, pending, openRequests, upgrades, resumes: NO_RESUMES, ended: null };
}
