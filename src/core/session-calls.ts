/**
 * A step with several calls (docs/design/step.md#several-calls-a-step): every call's plan in one
 * `actions` intent (a barrier, before any call runs), one input request per call a person must
 * approve or answer (nothing runs until all are answered), then the calls, at most
 * `parallelToolCalls` at a time, each outcome written as it lands, and one step record listing them.
 * On resume a call is judged by its own records: an outcome that landed stands; one that may have
 * run is run again when its policy is `safe`, else settled by a person.
 * @module
 */
import { gateFor, refusalOf, replayPolicyOf } from './action-policy.ts';
import type { Cancellation } from './cancellation.ts';
import { callRecord } from './call-record.ts';
import {
  blankCall,
  blockingRequestsOf,
  approvedDecision,
  callDecision,
  callRuns,
  childIndexOf,
  childReplyDue,
  openRequestOf,
  openRequestsOf,
} from './internal/step-calls.ts';
import type { CallState } from './internal/step-calls.ts';
import { addUsage, NO_USAGE } from './internal/stopping.ts';
import type { Counters } from './internal/stopping.ts';
import type { ChildAnswer } from './child-runs.ts';
import type { RunRequest, UpgradeOptions } from './request.ts';
import { seal } from './sealed-records.ts';
import { freezeDeep } from './seam-values.ts';
import { askForChild } from './session-input.ts';
import type { Pause } from './session-input.ts';
import { childOfAction, executeAction } from './session-seams.ts';
import type { RunWrites } from './session-writes.ts';
import { now } from './step-record.ts';
import type { StepDraft } from './step-record.ts';
import { RECORD_VERSION } from './types.ts';
import type {
  ActionsDecision,
  ActionsIntentRecord,
  CallPlan,
  CallResultRecord,
  Decision,
  InFlightStep,
  InputRecord,
  InputReply,
  InputRequest,
  InputRequestRecord,
  RunEvent,
  StepRecord,
} from './types.ts';

/** What a step with several calls needs of its run. */
export type CallsRun = {
  readonly req: RunRequest;
  readonly writes: RunWrites;
  readonly cancel: Cancellation;
  readonly counters: Counters;
  /** The run was resumed with an upgrade: its sub-agents' runs go on under theirs too. */
  readonly childUpgrade: UpgradeOptions | null;
};

/**
 * How the run reads a decision before acting on it: an `actions` decision of one call is that call's
 * `action` decision (the model sees what it saw before), and one of several calls is an invalid reply
 * when the run takes one call a turn.
 */
export function normalizeDecision(decision: Decision, parallelToolCalls: number): Decision {
  if (decision.kind !== 'actions') return decision;
  const history = {
    historyText: decision.historyText,
    ...(decision.historyContent === undefined ? {} : { historyContent: decision.historyContent }),
  };
  const [only] = decision.calls;
  if (decision.calls.length === 1 && only)
    return { kind: 'action', action: only.action, trajectoryRepr: only.trajectoryRepr, ...history };
  if (parallelToolCalls > 1) return decision;
  const names = decision.calls.map((c) => (c.action.kind === 'tool_call' ? `"${c.action.name}"` : 'code')).join(', ');
  const explanation =
    `You called ${decision.calls.length} tools at once (${names}), but exactly one tool call per turn is allowed. ` +
    'None of them ran. Call the one you need first; you will see its result before your next call.';
  return { kind: 'invalid', explanation, ...history };
}

/** Write a person's reply to one of the step's open requests (a barrier) before the step carries it out. */
export async function receiveCallReply(writes: RunWrites, f: InFlightStep, reply: InputReply): Promise<InFlightStep> {
  const { stepIndex } = f;
  const { resultId } = reply;
  const rec: InputRecord = { kind: 'input', v: RECORD_VERSION, stepIndex, resultId, reply, receivedAt: now() };
  await writes.out.write(rec);
  await writes.out.emit({ type: 'input_received', runId: writes.runId, stepIndex, resultId, kind: reply.kind });
  const calls = (f.calls?.calls ?? []).map((c) => {
    if (c.gate?.resultId === resultId) return { ...c, gateReply: rec };
    if (c.settle?.resultId === resultId) return { ...c, settleReply: rec };
    if (c.child?.resultId === resultId) return { ...c, childReply: rec };
    return c;
  });
  const intent = f.calls?.intent as ActionsIntentRecord;
  return {
    ...f,
    resolution: 'apply_input',
    input: rec,
    calls: { intent, calls, mayHaveRun: f.calls?.mayHaveRun === true },
  };
}

/** The plan of each call: skipped (refused, or past the step's valid actions), gated, and its replay policy. */
function planCalls(run: CallsRun, stepIndex: number, decision: ActionsDecision): CallPlan[] {
  const { req, counters } = run;
  let left = req.budget.maxValidActions - counters.validActions;
  return decision.calls.map((_, j) => {
    const d = callDecision(decision, j);
    const resultId = `s${stepIndex}.a${j}`;
    const refusal = refusalOf(req, d);
    let skip = refusal?.outcome.observation ?? null;
    const { action } = d;
    const validates = action.kind !== 'tool_call' || req.tools.names().length === 0 || req.tools.validate(action).ok;
    if (skip === null && validates) {
      if (left <= 0) skip = 'Not executed: the run reached its limit of valid actions (budget.maxValidActions).';
      else left--;
    }
    if (skip !== null) return { resultId, replayPolicy: 'safe', gate: null, skip };
    return { resultId, replayPolicy: replayPolicyOf(req, d), gate: gateFor(req, d), skip };
  });
}

/**
 * The calls half of a step whose decision holds several: plan and announce them (fresh), ask what a
 * person must answer, settle what may have run, run the rest, and write the step.
 */
export async function runCalls(
  run: CallsRun,
  step: StepDraft,
  decision: ActionsDecision,
  inFlight: InFlightStep | null,
): Promise<StepRecord | Pause> {
  const { writes } = run;
  const { stepIndex } = step;
  let intent = inFlight?.calls?.intent ?? null;
  if (intent === null) {
    const calls = planCalls(run, stepIndex, decision);
    const resultId = `s${stepIndex}.actions`;
    intent = { kind: 'intent', v: RECORD_VERSION, intent: 'actions', stepIndex, resultId, decision, calls };
    await writes.land(seal(intent));
  }
  const state: CallState[] = inFlight?.calls?.calls.map((c) => ({ ...c })) ?? intent.calls.map(blankCall);
  const mayHaveRun = inFlight?.calls?.mayHaveRun === true;
  step.decision = 'action';
  step.actionRepr = decision.calls.map((c) => c.trajectoryRepr).join('\n');
  // A person cancelled (a gate, a settlement or a sub-agent's request; now, or before a crash): nothing
  // more runs, every child of the step still out hears it, then the run ends.
  if (state.some(cancelled)) {
    await cancelChildren(run, intent, state);
    return { pause: 'cancelled' };
  }
  // Every gate the plans ask for, asked; the run waits while any is open.
  for (const [j, plan] of intent.calls.entries()) {
    const c = state[j] as CallState;
    if (plan.gate !== null && plan.skip === null && c.gate === null)
      c.gate = await ask(writes, intent, j, plan.gate, `${plan.resultId}.input`);
  }
  if (blockingRequestsOf(state).length > 0) return pause(writes, openRequestsOf(state));
  // What may have run without an outcome: run again if safe, else a person settles it. A call whose
  // sub-agent waits for a person stays where it is; one whose sub-agent got its reply goes on.
  const toRun: number[] = [];
  let settled = false;
  for (const j of intent.calls.keys()) {
    const c = state[j] as CallState;
    if (!callRuns(intent, state, j) || c.result !== null) continue;
    if (c.child !== null && c.childReply === null) continue;
    if (childReplyDue(c)) {
      toRun.push(j);
      continue;
    }
    const settle = c.settleReply?.reply;
    if (settle && settle.kind !== 'retry') continue;
    if (!settle && mayHaveRun && mustSettle(run.req, intent, state, j)) {
      c.settle = await ask(writes, intent, j, 'settle', `${intent.calls[j]?.resultId}.settle`, c.gateReply);
      settled = true;
    } else toRun.push(j);
  }
  if (settled) return pause(writes, openRequestsOf(state));
  const replayed = (j: number): boolean =>
    mayHaveRun || state[j]?.settleReply?.reply.kind === 'retry' || childReplyDue(state[j] as CallState);
  await runAll(run, intent, toRun, replayed, state);
  const open = openRequestsOf(state);
  if (open.length > 0) return pause(writes, open);
  return finish(run, step, intent, state);
}

/** Whether a person's reply to one of the call's requests is a cancel. */
function cancelled(c: CallState): boolean {
  return [c.gateReply, c.settleReply, c.childReply].some((r) => r?.reply.kind === 'cancel');
}

/** The reply a call's sub-agent is to hear, with the request the person was shown; or null. */
function childAnswerOf(c: CallState): ChildAnswer | null {
  const asked = c.child?.request.child;
  if (!childReplyDue(c) || !asked || !c.childReply) return null;
  return { reply: c.childReply.reply, asked };
}

/** Carry a cancel to every sub-agent of the step that still waits or was answered: each ends `cancelled`. */
async function cancelChildren(run: CallsRun, intent: ActionsIntentRecord, state: readonly CallState[]): Promise<void> {
  const { stepIndex } = intent;
  await Promise.all(
    state.map(async (c, j) => {
      const asked = c.child?.request.child;
      if (!asked || c.result !== null) return;
      const plan = intent.calls[j] as CallPlan;
      const answer = { reply: { kind: 'cancel' as const, resultId: c.child?.resultId ?? '' }, asked };
      const call = { answer, upgrade: run.childUpgrade };
      await executeAction(run.req, run.cancel, callDecision(intent.decision, j), stepIndex, plan.resultId, call);
    }),
  );
}

/**
 * A call that may have run goes again only when the run's own tools allow it: a `safe` policy, and no
 * gate left unapproved. Otherwise a person settles it.
 */
function mustSettle(req: RunRequest, intent: ActionsIntentRecord, state: readonly CallState[], j: number): boolean {
  const d = callDecision(intent.decision, j);
  const plan = intent.calls[j] as CallPlan;
  if (refusalOf(req, d) !== null) return false;
  const approved = state[j]?.gateReply?.reply.kind === 'approve';
  if (plan.replayPolicy === 'never' || replayPolicyOf(req, d) === 'never') return true;
  return gateFor(req, d) !== null && !approved;
}

/** Write one call's input request (a barrier) and announce it. */
async function ask(
  writes: RunWrites,
  intent: ActionsIntentRecord,
  j: number,
  kind: 'approval' | 'answer' | 'settle',
  resultId: string,
  approval: InputRecord | null = null,
): Promise<InputRequestRecord> {
  const { stepIndex } = intent;
  const request = {
    kind,
    target: 'action' as const,
    decision: approvedDecision(callDecision(intent.decision, j), approval),
  };
  const rec: InputRequestRecord = {
    kind: 'input_request',
    v: RECORD_VERSION,
    stepIndex,
    resultId,
    request,
    requestedAt: now(),
  };
  await writes.out.write(rec);
  const pending = freezeDeep(openRequestOf(rec));
  await writes.out.emit({ type: 'input_requested', runId: writes.runId, stepIndex, resultId, request: pending });
  return rec;
}

/** The run waits on the step's open requests: the lease is freed; `pending` is the first in call order. */
async function pause(writes: RunWrites, open: readonly InputRequestRecord[]): Promise<Pause> {
  await writes.pause();
  const pending: InputRequest = freezeDeep(openRequestOf(open[0] as InputRequestRecord));
  return { pause: 'awaiting', pending };
}

/**
 * Run `calls` at most `parallelToolCalls` at a time, each outcome written as it lands. Writes and
 * events go out one at a time, in the order outcomes land. An abort starts nothing more; the calls
 * running are abandoned by their seam, and the abort is rethrown once all have settled.
 */
async function runAll(
  run: CallsRun,
  intent: ActionsIntentRecord,
  calls: readonly number[],
  replayed: (j: number) => boolean,
  state: CallState[],
): Promise<void> {
  const { req, writes, cancel } = run;
  const { out, runId } = writes;
  const { stepIndex } = intent;
  let queue: Promise<unknown> = Promise.resolve();
  const inOrder = <T>(task: () => Promise<T>): Promise<T> => {
    const next = queue.then(task);
    queue = next.catch(() => undefined);
    return next;
  };
  let nextIndex = 0;
  const worker = async (): Promise<void> => {
    while (nextIndex < calls.length) {
      cancel.signal.throwIfAborted();
      const j = calls[nextIndex++] as number;
      const c = state[j] as CallState;
      // What runs is what the person approved: the arguments they edited, if they did.
      const d = approvedDecision(callDecision(intent.decision, j), c.gateReply);
      const { resultId, replayPolicy } = intent.calls[j] as CallPlan;
      const { action } = d;
      const again = replayed(j);
      const childRunId = childOfAction(req, d, resultId);
      const named = childRunId === null ? {} : { childRunId };
      const started: RunEvent = {
        type: 'action_started',
        runId,
        stepIndex,
        resultId,
        action,
        replayed: again,
        replayPolicy,
        ...named,
      };
      await inOrder(() => out.emit(started));
      const call = { answer: childAnswerOf(c), upgrade: run.childUpgrade };
      const executed = await executeAction(req, cancel, d, stepIndex, resultId, call);
      const { child } = executed;
      if (child?.kind === 'paused') {
        // Its sub-agent waits for a person: the call's request is written; the step's other calls go on.
        const id = `${resultId}.c${childIndexOf(c.child) + 1}`;
        await inOrder(async () => {
          c.child = (await askForChild(writes, stepIndex, id, d, child.child)).rec;
          c.childReply = null;
        });
        continue;
      }
      const { outcome, completedRun } = executed;
      // The child as it ran: none when its request was refused before it started.
      const ran = child?.runId == null ? {} : { childRunId: child.runId };
      const usage = child?.runId == null ? {} : { usage: child.usage };
      const rec: CallResultRecord = {
        kind: 'call_result',
        v: RECORD_VERSION,
        stepIndex,
        resultId,
        outcome,
        completedRun,
        ...ran,
        ...usage,
      };
      await inOrder(async () => {
        await out.write(rec);
        c.result = rec;
        await out.emit({ type: 'action_finished', runId, stepIndex, resultId, outcome, ...ran });
      });
    }
  };
  const width = Math.max(1, Math.min(req.parallelToolCalls ?? 1, calls.length));
  const settled = await Promise.allSettled(Array.from({ length: width }, worker));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Each call's record, from its plan, its person's reply or its outcome; the step's fields from all of them. */
async function finish(
  run: CallsRun,
  step: StepDraft,
  intent: ActionsIntentRecord,
  state: readonly CallState[],
): Promise<StepRecord> {
  const calls = intent.calls.map((plan, j) => callRecord(run.req, intent, plan, j, state[j] as CallState));
  const failed = calls.find((c) => c.status === 'env_error');
  step.actionStatus = failed
    ? 'env_error'
    : calls.some((c) => c.status === 'executed')
      ? 'executed'
      : calls.every((c) => c.status === 'denied')
        ? 'denied'
        : 'not_executed';
  // The observation a failed run reports (`RunResult.error`): its first failed call's.
  step.observation = failed?.observation ?? null;
  step.envReportedCompletion = calls.some((c) => c.envReportedCompletion);
  step.toolCompletedRun = calls.some((c) => c.toolCompletedRun);
  step.calls = Object.freeze(calls.map((c) => Object.freeze(c)));
  // The tokens of the step's sub-agents count in the step, as its own model call's do.
  for (const c of state) if (c.result?.usage) step.usage = addUsage(step.usage ?? NO_USAGE, c.result.usage);
  return run.writes.finishStep(step, null);
}
