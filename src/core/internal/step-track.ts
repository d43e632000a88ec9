/**
 * The write protocol within one step (docs/design/records-and-recovery.md#log-states): the records
 * a step may hold, in the order they may come, each checked against those before it as
 * `classifyLog` reads them. Throws `CorruptLogError` (record number, 1-based) for a record out of place.
 * @module
 */
import { CorruptLogError } from '../errors.ts';
import { sameJson } from './json-compare.ts';
import { approvedDecision, CallsTrack } from './step-calls.ts';
import type {
  ActionIntentRecord,
  ActionsIntentRecord,
  InputRecord,
  InputRequestRecord,
  LogRecord,
  ModelCallIntentRecord,
  ResultRecord,
} from '../types.ts';

export const corrupt = (index: number, reason: string): CorruptLogError =>
  new CorruptLogError(index + 1, reason, { source: 'run log' });

export type Exchange = { request: InputRequestRecord; input: InputRecord | null };

/** The records of the step being written, as the protocol lets them arrive. */
export class StepTrack {
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

/** The step record that closes the step `t` tracks: nothing left open, its calls and action result its own. */
export function acceptStep(t: StepTrack, rec: Extract<LogRecord, { kind: 'step' }>, next: number, i: number): void {
  const open = t.open();
  if (open) throw corrupt(i, `step ${next} while input request ${open.request.resultId} is open`);
  if (t.calls && t.calls.open().length > 0)
    throw corrupt(i, `step ${next} while input request ${t.calls.open()[0]?.resultId} is open`);
  if ((t.calls === null) !== (rec.step.calls === undefined))
    throw corrupt(i, `step ${next} ${t.calls ? 'lists no calls after an actions intent' : 'lists calls without one'}`);
  if (t.calls && rec.step.calls?.length !== t.calls.intent.calls.length)
    throw corrupt(
      i,
      `step ${next} lists ${rec.step.calls?.length} calls, its actions intent ${t.calls.intent.calls.length}`,
    );
  if (rec.actionResult !== null && !t.actionIntent && t.gate?.input?.reply.kind !== 'answer') {
    throw corrupt(i, `step ${next} holds an action result without its action intent`);
  }
  if (statusProblem(rec) !== null) throw corrupt(i, `step ${next} ${statusProblem(rec)}`);
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

export function acceptModelIntent(t: StepTrack, rec: ModelCallIntentRecord, i: number): void {
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

export function acceptActionIntent(t: StepTrack, rec: ActionIntentRecord, i: number): void {
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

export function acceptActionsIntent(t: StepTrack, rec: ActionsIntentRecord, i: number): void {
  if (!t.result) throw corrupt(i, 'an actions intent without a model result before it');
  if (t.actionIntent || t.gate || t.settlement)
    throw corrupt(i, `an actions intent out of place in step ${rec.stepIndex}`);
  if (rec.resultId !== `s${rec.stepIndex}.actions`) throw corrupt(i, `an actions intent with resultId ${rec.resultId}`);
  t.calls = new CallsTrack(rec, t.runId);
}

export function acceptRequest(t: StepTrack, rec: InputRequestRecord, i: number): void {
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
