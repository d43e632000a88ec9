/**
 * The run's exchange with a person (docs/design/human-input.md): a step asks (an input request
 * written as a barrier, the lease freed, the run paused on it), and a later `resume` brings the
 * reply, written before the step carries it out. What the reply does to the step is `session.ts`.
 * @module
 */
import { freezeDeep } from './seam-values.ts';
import type { RunWrites } from './session-writes.ts';
import { now } from './step-record.ts';
import { RECORD_VERSION } from './types.ts';
import type {
  ActionDecision,
  ChildRequest,
  InFlightStep,
  InputRecord,
  InputReply,
  InputRequest,
  InputRequestRecord,
} from './types.ts';

/**
 * What a step may end in besides a step record: it waits for a person, a person cancelled the
 * run, or (a store without input methods) a `never` operation in flight ends it: such a store
 * cannot hold a person's settlement.
 */
export type Pause =
  | { readonly pause: 'awaiting'; readonly pending: InputRequest }
  | { readonly pause: 'cancelled' }
  | { readonly pause: 'in_flight_unknown' };

/**
 * Write an input request (a barrier) and pause the run on it: step `stepIndex` asks a person to
 * approve or answer its action, or to settle an operation in flight.
 */
export async function askPerson(
  writes: RunWrites,
  stepIndex: number,
  kind: InputRequest['kind'],
  target: InputRequest['target'],
  decision: InputRequest['decision'],
): Promise<Pause> {
  const { out, runId } = writes;
  // A store without input methods cannot hold a settlement: the run ends `in_flight_unknown`.
  if (!writes.store.inputRequest && kind === 'settle') return { pause: 'in_flight_unknown' };
  const resultId = `s${stepIndex}.${kind === 'settle' ? 'settle' : 'input'}`;
  const request = { kind, target, decision };
  if (writes.holding) await writes.land(null);
  await out.write({ kind: 'input_request', v: RECORD_VERSION, stepIndex, resultId, request, requestedAt: now() });
  // The run's last write for now: free it before the last event.
  await writes.pause();
  const pending: InputRequest = freezeDeep({ resultId, stepIndex, ...request });
  await out.emit({ type: 'input_requested', runId, stepIndex, resultId, request: pending });
  return { pause: 'awaiting', pending };
}

/**
 * Write a sub-agent's request (a barrier) and pause the run on it: the call `resultId` of step
 * `stepIndex` ran a child that waits for a person (docs/design/sub-agents.md). `requestId` is
 * `{resultId-prefix}.c{n}`, the n-th pause of a child in the step.
 */
export async function askForChild(
  writes: RunWrites,
  stepIndex: number,
  requestId: string,
  decision: ActionDecision,
  child: ChildRequest,
): Promise<{ readonly rec: InputRequestRecord; readonly pending: InputRequest }> {
  const { out, runId } = writes;
  const request = { kind: 'child' as const, target: 'action' as const, decision, child };
  const rec: InputRequestRecord = {
    kind: 'input_request',
    v: RECORD_VERSION,
    stepIndex,
    resultId: requestId,
    request,
    requestedAt: now(),
  };
  await out.write(rec);
  const pending: InputRequest = freezeDeep({ resultId: requestId, stepIndex, ...request });
  await out.emit({ type: 'input_requested', runId, stepIndex, resultId: requestId, request: pending });
  return { rec, pending };
}

/** Whether `resultId` names a sub-agent's request (`….c{n}`). */
export function isChildRequestId(resultId: string): boolean {
  return /\.c\d+$/.test(resultId);
}

/**
 * Write a person's reply (a barrier; `reply` is the plain copy `checkReply` made) before carrying
 * it out; the step then applies it.
 */
export async function receiveReply(
  writes: RunWrites,
  inFlight: InFlightStep,
  reply: InputReply,
): Promise<InFlightStep> {
  const { out, runId } = writes;
  const request = inFlight.request as InputRequestRecord;
  const { stepIndex } = inFlight;
  const { resultId } = request;
  const rec: InputRecord = { kind: 'input', v: RECORD_VERSION, stepIndex, resultId, reply, receivedAt: now() };
  await out.write(rec);
  await out.emit({ type: 'input_received', runId, stepIndex, resultId, kind: reply.kind });
  const gate = request.request.kind === 'approval' || request.request.kind === 'answer';
  return { ...inFlight, resolution: 'apply_input', input: rec, approval: gate ? rec : inFlight.approval };
}
