/**
 * One call's record in a step with several (docs/design/step.md#several-calls-a-step): from its
 * plan, the reply of the person who approved, answered or settled it, or its outcome.
 * @module
 */
import { toolOf } from './action-policy.ts';
import { editedArguments, editedObservation } from './edits.ts';
import { approvedDecision, callDecision } from './internal/step-calls.ts';
import type { CallState } from './internal/step-calls.ts';
import type { RunRequest } from './request.ts';
import { plainOutcome } from './seam-values.ts';
import type {
  ActionDecision,
  ActionOutcome,
  ActionsIntentRecord,
  CallPlan,
  CallRecord,
  CallResultRecord,
} from './types.ts';

/** Call `j`'s record; a call a person approved with other arguments says so first in its observation. */
export function callRecord(
  req: RunRequest,
  intent: ActionsIntentRecord,
  plan: CallPlan,
  j: number,
  c: CallState,
): CallRecord {
  const d: ActionDecision = approvedDecision(callDecision(intent.decision, j), c.gateReply);
  const record = (status: CallRecord['status'], o: ActionOutcome, toolCompletedRun: boolean): CallRecord => ({
    resultId: plan.resultId,
    toolCallId: d.action.kind === 'tool_call' ? (d.action.id ?? null) : null,
    actionRepr: d.trajectoryRepr,
    status,
    observation: o.observation,
    observationIsSynthetic: o.observationIsSynthetic,
    envReportedCompletion: o.envReportedCompletion,
    observationTruncatedChars: o.observationTruncatedChars,
    toolCompletedRun,
  });
  const gate = c.gateReply?.reply;
  const edit = editedArguments(gate);
  // A call that ran with the person's arguments says so, whether its outcome was written or a settlement gave it.
  const told = (o: ActionOutcome): ActionOutcome =>
    edit === null ? o : { ...o, observation: editedObservation(o.observation, edit) };
  const byPerson = (text: string): CallRecord =>
    record('executed', told(plainOutcome('executed', text)), toolOf(req, d)?.completesRun === true);
  const denied = (reason: string): CallRecord => record('denied', plainOutcome('executed', reason), false);
  if (plan.skip !== null) return record('not_executed', plainOutcome('not_executed', plan.skip, true), false);
  if (gate?.kind === 'deny') return denied(gate.reason);
  if (gate?.kind === 'answer') return byPerson(gate.text);
  const settle = c.settleReply?.reply;
  if (settle?.kind === 'executed' && c.result === null) return byPerson(settle.observation);
  if (settle?.kind === 'deny' && c.result === null) return denied(settle.reason);
  const result = c.result as CallResultRecord;
  const ran = record(result.outcome.status, told(result.outcome), result.completedRun);
  return result.childRunId === undefined ? ran : { ...ran, childRunId: result.childRunId };
}
