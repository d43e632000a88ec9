/**
 * A step with several calls, the pure part (docs/design/step.md#several-calls-a-step): each call's own
 * decision, and what a log's records say of each call — the protocol recovery checks them against.
 * @module
 */
import { sameJson } from './json-compare.ts';
import type {
  ActionDecision,
  ActionsDecision,
  ActionsIntentRecord,
  CallInFlight,
  CallPlan,
  CallResultRecord,
  InputRecord,
  InputRequest,
  InputRequestRecord,
} from '../types.ts';

/**
 * Call `j`'s own action decision: what a person approves, answers or settles, and what its executor
 * runs. Its history is its own one-line form; the step's history is the `actions` decision's.
 */
export function callDecision(decision: ActionsDecision, j: number): ActionDecision {
  const call = decision.calls[j] as ActionsDecision['calls'][number];
  return { kind: 'action', action: call.action, trajectoryRepr: call.trajectoryRepr, historyText: call.trajectoryRepr };
}

/**
 * The decision that runs once a person approved it (docs/human-input.md#edit-on-approval): with
 * the arguments the approval edited, if it did; the decision's history keeps the proposal.
 */
export function approvedDecision(decision: ActionDecision, approval: InputRecord | null): ActionDecision {
  const reply = approval?.reply;
  const { action } = decision;
  if (reply?.kind !== 'approve' || reply.arguments === undefined || action.kind !== 'tool_call') return decision;
  const args = reply.arguments;
  return {
    ...decision,
    action: { ...action, arguments: args },
    trajectoryRepr: `${action.name}(${JSON.stringify(args)})`,
    historyText: decision.historyText ?? decision.trajectoryRepr,
  };
}

/**
 * The call (its index) and the kind of a per-call resultId of step `stepIndex`:
 * `s{i}.a{j}[.input|.settle|.c{n}]` (`.c{n}`: the n-th pause of the sub-agent the call runs).
 */
export function callOf(
  resultId: string,
  stepIndex: number,
): { readonly j: number; readonly what: 'result' | 'input' | 'settle' | 'child'; readonly n: number } | null {
  const m = /^s(\d+)\.a(\d+)(\.input|\.settle|\.c(\d+))?$/.exec(resultId);
  if (m === null || Number(m[1]) !== stepIndex) return null;
  const what = m[3] === '.input' ? 'input' : m[3] === '.settle' ? 'settle' : m[4] !== undefined ? 'child' : 'result';
  return { j: Number(m[2]), what, n: Number(m[4] ?? 0) };
}

/** The index of a sub-agent's request (`….c{n}`), or -1 for none. */
export function childIndexOf(rec: InputRequestRecord | null): number {
  const m = rec === null ? null : /\.c(\d+)$/.exec(rec.resultId);
  return m ? Number(m[1]) : -1;
}

/** A request record as the view shows it: known keys only. */
export function openRequestOf(rec: InputRequestRecord): InputRequest {
  const q = rec.request;
  const { resultId, stepIndex } = rec;
  const child = q.kind === 'child' && q.child ? { child: q.child } : {};
  return { resultId, stepIndex, kind: q.kind, target: q.target, decision: q.decision, ...child };
}

/** One call's records as they are gathered: recovery fills them from a log, the driver as it writes. */
export type CallState = { -readonly [K in keyof CallInFlight]: CallInFlight[K] };

/** A call no record speaks of yet. */
export function blankCall(): CallState {
  return { gate: null, gateReply: null, settle: null, settleReply: null, result: null, child: null, childReply: null };
}

/** The open requests of a step's calls, in call order (a call has at most one open at a time). */
export function openRequestsOf(calls: readonly CallInFlight[]): InputRequestRecord[] {
  const out: InputRequestRecord[] = [];
  for (const c of calls) {
    if (c.gate && !c.gateReply) out.push(c.gate);
    if (c.settle && !c.settleReply) out.push(c.settle);
    if (c.child && !c.childReply) out.push(c.child);
  }
  return out;
}

/**
 * The open requests that hold the whole step: gates (nothing runs until all are answered) and
 * settlements. A sub-agent's request holds only its own call; the step's other calls go on.
 */
export function blockingRequestsOf(calls: readonly CallInFlight[]): InputRequestRecord[] {
  return openRequestsOf(calls).filter((r) => r.request.kind !== 'child');
}

/** Whether a call's sub-agent has a reply to carry out: answered, and the call not yet run again. */
export function childReplyDue(c: CallInFlight): boolean {
  return c.childReply !== null && c.result === null;
}

/**
 * Whether call `j` runs (or ran): not skipped, and not behind a gate a person answered otherwise than
 * with an approval. Meaningful once every gate of the step is answered.
 */
export function callRuns(intent: ActionsIntentRecord, calls: readonly CallInFlight[], j: number): boolean {
  const plan = intent.calls[j];
  if (plan === undefined || plan.skip !== null) return false;
  return plan.gate === null || calls[j]?.gateReply?.reply.kind === 'approve';
}

/**
 * The records of one step with several calls, as a log brings them: each one checked against the
 * protocol, so what recovery goes on from is what a driver could have written. A record that does
 * not fit gets a sentence saying why (the caller makes it a `CorruptLogError`).
 */
export class CallsTrack {
  readonly intent: ActionsIntentRecord;
  readonly calls: CallState[];
  /** The run's id: a call's sub-agent's id follows from it. */
  readonly #runId: string;

  constructor(intent: ActionsIntentRecord, runId: string) {
    this.intent = intent;
    this.calls = intent.calls.map(blankCall);
    this.#runId = runId;
  }

  /** The open requests, in call order. */
  open(): InputRequestRecord[] {
    return openRequestsOf(this.calls);
  }

  /** The open gates and settlements: what holds the whole step. */
  blocking(): InputRequestRecord[] {
    return blockingRequestsOf(this.calls);
  }

  /** Every gate the plans ask for has its reply: the step's calls may run. */
  gatesAnswered(): boolean {
    return this.intent.calls.every((p, j) => p.skip !== null || p.gate === null || this.calls[j]?.gateReply);
  }

  /** Take an input request, a reply or a call's outcome of this step; a sentence when it does not fit. */
  accept(rec: InputRequestRecord | InputRecord | CallResultRecord): string | null {
    const at = callOf(rec.resultId, this.intent.stepIndex);
    const c = at === null ? undefined : this.calls[at.j];
    if (at === null || c === undefined)
      return `${rec.kind} ${rec.resultId} names no call of step ${this.intent.stepIndex}`;
    if (rec.kind === 'input_request')
      return at.what === 'child' ? this.#childRequest(rec, at.j, at.n, c) : this.#request(rec, at.j, at.what, c);
    if (rec.kind === 'input') {
      const open =
        at.what === 'input'
          ? c.gateReply
            ? null
            : c.gate
          : at.what === 'settle'
            ? c.settleReply
              ? null
              : c.settle
            : c.childReply
              ? null
              : c.child;
      if (open === null || open.resultId !== rec.resultId)
        return `input for ${rec.resultId}, which is not an open request`;
      if (at.what === 'input') c.gateReply = rec;
      else if (at.what === 'settle') c.settleReply = rec;
      else c.childReply = rec;
      return null;
    }
    if (at.what !== 'result') return `call_result ${rec.resultId} is not a call's resultId`;
    if (!this.gatesAnswered() || this.blocking().length > 0)
      return `call_result ${rec.resultId} while a request of its step is open`;
    if (c.child !== null && c.childReply === null)
      return `call_result ${rec.resultId} while its sub-agent's request ${c.child.resultId} is open`;
    if (!callRuns(this.intent, this.calls, at.j)) return `call_result ${rec.resultId} of a call that does not run`;
    if (c.result !== null && c.settleReply?.reply.kind !== 'retry') return `a second call_result for ${rec.resultId}`;
    if (c.settleReply && c.settleReply.reply.kind !== 'retry')
      return `call_result ${rec.resultId} after a person settled the call`;
    c.result = rec;
    c.settle = null;
    c.settleReply = null;
    return null;
  }

  /** A sub-agent's request of call `j`: the call runs without an outcome yet, its child named, its pauses in order. */
  #childRequest(rec: InputRequestRecord, j: number, n: number, c: CallState): string | null {
    const plan = this.intent.calls[j] as CallPlan;
    const { decision, target } = rec.request;
    if (target !== 'action' || decision === null || !sameCall(decision, callDecision(this.intent.decision, j)))
      return `${rec.resultId} does not show the call it asks about`;
    if (!this.gatesAnswered() || this.blocking().length > 0)
      return `${rec.resultId}: a sub-agent's request while a request of its step is open`;
    if (!callRuns(this.intent, this.calls, j) || c.result !== null)
      return `${rec.resultId}: a sub-agent's request of a call that is not in flight`;
    if (c.child !== null && c.childReply === null) return `${rec.resultId} while ${c.child.resultId} is open`;
    if (n !== childIndexOf(c.child) + 1) return `${rec.resultId} out of order (after ${c.child?.resultId ?? 'none'})`;
    const expected = `${this.#runId}.${plan.resultId}`;
    if (rec.request.child?.runId !== expected)
      return `${rec.resultId} names a sub-agent other than ${JSON.stringify(expected)}`;
    c.child = rec;
    c.childReply = null;
    return null;
  }

  #request(rec: InputRequestRecord, j: number, what: string, c: CallState): string | null {
    const plan = this.intent.calls[j];
    const { kind, target, decision } = rec.request;
    // A settlement shows the call as it ran: with the arguments its approval edited, if it did.
    const proposed = callDecision(this.intent.decision, j);
    const shown = what === 'settle' ? approvedDecision(proposed, c.gateReply) : proposed;
    if (target !== 'action' || decision === null || !sameCall(decision, shown))
      return `${rec.resultId} does not show the call it asks about`;
    if (what === 'input') {
      if (plan?.gate !== kind || plan.skip !== null || c.gate !== null)
        return `${rec.resultId}: a ${kind} request the call's plan does not ask for`;
      c.gate = rec;
      return null;
    }
    if (what !== 'settle' || kind !== 'settle') return `${rec.resultId} is not a request's resultId`;
    // Every call in doubt is asked about at once: other settlements may be open, nothing else.
    const open = this.blocking().some((r) => r.request.kind !== 'settle');
    if (!this.gatesAnswered() || open || (c.child !== null && c.childReply === null))
      return `${rec.resultId}: a settlement while a request of its step is open`;
    if (!callRuns(this.intent, this.calls, j) || c.result !== null)
      return `${rec.resultId}: a settlement of a call that is not in flight`;
    if (c.settle !== null && c.settleReply?.reply.kind !== 'retry')
      return `${rec.resultId}: a second settlement of a settled call`;
    c.settle = rec;
    c.settleReply = null;
    return null;
  }
}

/** Two action decisions read from a log are the same call: the same action and one-line form. */
function sameCall(a: ActionDecision, b: ActionDecision): boolean {
  return a.kind === 'action' && a.trajectoryRepr === b.trajectoryRepr && sameJson(a.action, b.action);
}
