/**
 * Recovery (pure, sync): classify a run log (docs/design/records-and-recovery.md#log-states) and
 * compare parameter snapshots.
 * @module
 */
import { CorruptLogError } from '../errors.ts';
import { sameJson } from './json-compare.ts';
import { approvedDecision, CallsTrack, childReplyDue, openRequestOf } from './step-calls.ts';
import type {
  ActionIntentRecord,
  ActionsIntentRecord,
  InFlightResolution,
  InFlightStep,
  InputRecord,
  InputRequest,
  InputRequestRecord,
  LogRecord,
  ModelCallIntentRecord,
  ResultRecord,
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

const NO_RESUMES: readonly ResumedRecord[] = Object.freeze([]);

const corrupt = (index: number, reason: string): CorruptLogError =>
  new CorruptLogError(index + 1, reason, { source: 'run log' });

type Exchange = { request: InputRequestRecord; input: InputRecord | null };

/** The records of the step being written, as the protocol lets them arrive. */
class StepTrack {
  readonly runId: string;
  constructor(runId: string) {
    this.runId = runId;
  }
  modelIntent: ModelCallIntentRecord | null = null;
  result: ResultRecord | null = null;
  actionIntent: ActionIntentRecord | null = null;
  /** The approval or answer (`s{i}.input`) of this step. */
  gate: Exchange | null = null;
  /** The latest settlement (`s{i}.settle`); cleared when a retry writes its intent again. */
  settlement: Exchange | null = null;
  /** A step with several calls: its `actions` intent and each call's records. */
  calls: CallsTrack | null = null;
  /** The latest request of a sub-agent the action ran (`s{i}.c{n}`), and how many came before it. */
  child: Exchange | null = null;
  childCount = 0;

  open(): Exchange | null {
    if (this.settlement && !this.settlement.input) return this.settlement;
    if (this.gate && !this.gate.input) return this.gate;
    if (this.child && !this.child.input) return this.child;
    return null;
  }
}

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
  if (log.length === 0) {
    const none = { inFlight: null, pending: null, openRequests: [], upgrades: [], resumes: [], ended: null };
    return { state: 'not_started', started: null, steps: [], ...none };
  }
  const first = log[0] as LogRecord;
  if (first.kind !== 'run_started') throw corrupt(0, `first record is ${first.kind}, not run_started`);
  const steps: StepRecord[] = [];
  const upgrades: UpgradeRecord[] = [];
  const resumes: ResumedRecord[] = [];
  let t = new StepTrack(first.runId);
  for (let i = 1; i < log.length; i++) {
    const rec = log[i] as LogRecord;
    if (rec.kind === 'run_started') throw corrupt(i, 'a second run_started record');
    if (rec.kind === 'run_ended') {
      if (i !== log.length - 1) throw corrupt(i + 1, 'records after run_ended');
      return {
        state: 'ended',
        started: first,
        steps,
        inFlight: null,
        pending: null,
        openRequests: [],
        upgrades,
        resumes,
        ended: rec,
      };
    }
    const next = steps.length;
    const index = rec.kind === 'step' ? rec.step.stepIndex : rec.stepIndex;
    if (index !== next) throw corrupt(i, `${rec.kind} for step ${index} while step ${next} is next`);
    // An upgrade may come between any two records of a step: resume writes it wherever the run stopped.
    if (rec.kind === 'upgrade') {
      upgrades.push(rec);
      continue;
    }
    // So may a driver's `resumed` mark: it says where the driver took over, and changes nothing.
    if (rec.kind === 'resumed') {
      // Its driver wrote it right after the log it read: its resolution is that log's (O(1) per mark).
      const fits = finish(first, steps, upgrades, t).inFlight?.resolution ?? null;
      if (rec.resolution !== fits) throw corrupt(i, `a resumed mark says ${rec.resolution}, its log ${fits}`);
      resumes.push(rec);
      continue;
    }
    if (rec.kind !== 'intent' || rec.intent !== 'model_call') {
      if (!t.modelIntent) throw corrupt(i, `${rec.kind} of step ${next} without its model-call intent`);
    }
    const open = t.open();
    if (t.calls && (rec.kind === 'input_request' || rec.kind === 'input' || rec.kind === 'call_result')) {
      const problem = t.calls.accept(rec);
      if (problem !== null) throw corrupt(i, problem);
      continue;
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
        if (open) throw corrupt(i, `step ${next} while input request ${open.request.resultId} is open`);
        if (t.calls && t.calls.open().length > 0)
          throw corrupt(i, `step ${next} while input request ${t.calls.open()[0]?.resultId} is open`);
        if ((t.calls === null) !== (rec.step.calls === undefined))
          throw corrupt(
            i,
            `step ${next} ${t.calls ? 'lists no calls after an actions intent' : 'lists calls without one'}`,
          );
        if (t.calls && rec.step.calls?.length !== t.calls.intent.calls.length)
          throw corrupt(
            i,
            `step ${next} lists ${rec.step.calls?.length} calls, its actions intent ${t.calls.intent.calls.length}`,
          );
        if (rec.actionResult !== null && !t.actionIntent && t.gate?.input?.reply.kind !== 'answer') {
          throw corrupt(i, `step ${next} holds an action result without its action intent`);
        }
        if (statusProblem(rec) !== null) throw corrupt(i, `step ${next} ${statusProblem(rec)}`);
        steps.push(rec.step);
        t = new StepTrack(first.runId);
        break;
    }
  }
  const found = finish(first, steps, upgrades, t);
  return resumes.length === 0 ? found : { ...found, resumes };
}

/**
 * Readers count a step's `actionStatus` (valid actions, the viewer): it must be what its action
 * result says, and a step without one ran nothing (`denied`, or no action status).
 */
function statusProblem(rec: Extract<LogRecord, { kind: 'step' }>): string | null {
  const status = rec.step.actionStatus;
  // A step with several calls: each call's outcome is in `calls`, none in an action result.
  if (rec.step.calls !== undefined) return rec.actionResult === null ? null : 'lists calls and holds an action result';
  if (rec.actionResult === null)
    return status === null || status === 'denied' ? null : `says ${status} but holds no action result`;
  return status === rec.actionResult.outcome.status
    ? null
    : `says ${String(status)} but its action result is ${rec.actionResult.outcome.status}`;
}

function acceptModelIntent(t: StepTrack, rec: ModelCallIntentRecord, i: number): void {
  if (t.modelIntent) {
    // Written again only to retry a settled model call (the attempt's own barrier).
    if (
      t.result ||
      t.settlement?.request.request.target !== 'model_call' ||
      t.settlement.input?.reply.kind !== 'retry'
    ) {
      throw corrupt(i, `a second model-call intent for step ${rec.stepIndex}`);
    }
    t.settlement = null;
  }
  t.modelIntent = rec;
}

function acceptActionIntent(t: StepTrack, rec: ActionIntentRecord, i: number): void {
  if (!t.result) throw corrupt(i, 'an action intent without a model result before it');
  if (t.actionIntent) {
    if (t.settlement?.request.request.target !== 'action' || t.settlement.input?.reply.kind !== 'retry')
      throw corrupt(i, 'a second action intent for the same step');
    // A retry runs again what the person was shown: the action in flight, not another one.
    if (!sameJson(rec.decision, t.actionIntent.decision))
      throw corrupt(i, `the retried action of step ${rec.stepIndex} is not the action that was settled`);
    t.settlement = null;
  } else if (t.gate) {
    if (t.gate.input?.reply.kind !== 'approve')
      throw corrupt(i, `an action intent although ${t.gate.request.resultId} was not approved`);
    // What runs is what the person approved (with the arguments they edited, if they did): a log
    // that swaps the arguments after the approval is forged.
    const asked = t.gate.request.request.decision;
    if (!sameJson(rec.decision, asked && approvedDecision(asked, t.gate.input)))
      throw corrupt(
        i,
        `the action intent of step ${rec.stepIndex} is not the decision approved in ${t.gate.request.resultId}`,
      );
  }
  t.actionIntent = rec;
}

function acceptActionsIntent(t: StepTrack, rec: ActionsIntentRecord, i: number): void {
  if (!t.result) throw corrupt(i, 'an actions intent without a model result before it');
  if (t.actionIntent || t.gate || t.settlement)
    throw corrupt(i, `an actions intent out of place in step ${rec.stepIndex}`);
  if (rec.resultId !== `s${rec.stepIndex}.actions`) throw corrupt(i, `an actions intent with resultId ${rec.resultId}`);
  t.calls = new CallsTrack(rec, t.runId);
}

function acceptRequest(t: StepTrack, rec: InputRequestRecord, i: number): void {
  const { kind, target } = rec.request;
  if (kind === 'child') return acceptChildRequest(t, rec, i);
  if (kind === 'settle') {
    const due = target === 'model_call' ? !t.result : t.actionIntent !== null;
    if (!due)
      throw corrupt(
        i,
        `a settle request of the ${target === 'action' ? 'action' : 'model call'} of step ${rec.stepIndex}, ` +
          'which is not in flight',
      );
    // The person settles the action shown to them; it must be the one in flight.
    const shown = rec.request.decision;
    if (target === 'action' && !sameJson(shown, t.actionIntent?.decision ?? null))
      throw corrupt(i, `the settle request of step ${rec.stepIndex} shows another action than the one in flight`);
    if (target === 'model_call' && shown !== null)
      throw corrupt(i, `the settle request of the model call of step ${rec.stepIndex} holds a decision`);
    t.settlement = { request: rec, input: null };
  } else {
    const what = kind === 'approval' ? 'an approval' : 'an answer';
    if (!t.result || t.actionIntent || t.gate)
      throw corrupt(i, `${what} request out of place in step ${rec.stepIndex}`);
    // A person approves or answers the action shown to them: one that shows none is no approval of anything.
    if (target !== 'action' || rec.request.decision === null)
      throw corrupt(i, `${what} request of step ${rec.stepIndex} that shows no action`);
    t.gate = { request: rec, input: null };
  }
}

/**
 * A sub-agent's request: the action in flight ran a child that waits for a person. It shows that
 * action, names the child the action's call runs, and counts the step's child pauses in order.
 */
function acceptChildRequest(t: StepTrack, rec: InputRequestRecord, i: number): void {
  const { stepIndex, resultId } = rec;
  const intent = t.actionIntent;
  if (intent === null || t.settlement !== null)
    throw corrupt(i, `a sub-agent's request ${resultId} while no action of step ${stepIndex} is in flight`);
  if (resultId !== `s${stepIndex}.c${t.childCount}`)
    throw corrupt(i, `a sub-agent's request ${resultId} where s${stepIndex}.c${t.childCount} is next`);
  if (rec.request.target !== 'action' || !sameJson(rec.request.decision, intent.decision))
    throw corrupt(i, `the sub-agent's request ${resultId} shows another action than the one in flight`);
  // The child's id follows from the parent's: a log cannot point a reply at another run.
  const expected = `${t.runId}.${intent.resultId}`;
  if (rec.request.child?.runId !== expected)
    throw corrupt(i, `the sub-agent's request ${resultId} names a child other than ${JSON.stringify(expected)}`);
  t.child = { request: rec, input: null };
  t.childCount++;
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
