/**
 * The lean records of an ordinary step, read by name (docs/design/run-log.md#reading-a-log-fast):
 * the model-call intent, the result, the action intent and the step record exactly as this library
 * writes them for a tool call that ran. Nine records in ten of a long run's log are one of these
 * four, and reading them through the general reader (`inflate`, then the decoder's checks, both
 * walking keys they do not know in advance) cost three times what `JSON.parse` did.
 *
 * This module only ever says "the record is this", or declines. It declines at the first thing it
 * does not expect, and the general reader then reads the record — so every refusal, and every
 * message, stays the general reader's. What it returns is the very record the general reader
 * returns, key order included; `test/node/core/log-lines.test.ts` holds the two to that.
 * @module
 */
import { inOrder, isExactly, REPLY_ORDER } from './record-order.ts';
import { checkOutcome, checkStepFields, isInt, isObj, isStrOrNull, isUsageOrNull } from './record-fields.ts';
import type { Obj } from './record-fields.ts';
import { derivedStep, fullOutcome, fullReply, OUTCOME_ORDER, reprOf, StepContext } from './lean-records.ts';
import type { ActionDecision, ResultRecord, StepRecord } from './types.ts';

const MODEL_INTENT = ['kind', 'v', 'intent', 'stepIndex', 'replayPolicy'];
const ACTION_INTENT = ['kind', 'v', 'intent', 'stepIndex', 'replayPolicy', 'decision'];
const DECISION = ['kind', 'action'];
const RESULT = ['kind', 'v', 'stepIndex', 'reply'];
const STEP = ['kind', 'v', 'step', 'actionResult'];
const LEAN_STEP = ['stepIndex', 'startedAt', 'endedAt'];
const ACTION_RESULT = ['outcome'];

const isPolicy = (v: unknown): boolean => v === 'safe' || v === 'never';

/**
 * The full record a 1.2 lean record `p` (just parsed) stands for at `ctx`, when it is one of the
 * common shapes and passes the decoder's checks; otherwise null, and the general reader decides.
 */
export function readCommon(p: Obj, ctx: StepContext): Obj | null {
  switch (p['kind']) {
    case 'intent':
      if (p['intent'] === 'model_call') return isModelIntent(p) ? modelIntent(p['stepIndex'] as number, p) : null;
      return p['intent'] === 'action' ? actionIntent(p, ctx) : null;
    case 'result': {
      const reply = replyOf(p);
      if (reply === null) return null;
      const n = p['stepIndex'] as number;
      return { kind: 'result', v: p['v'], resultId: `s${n}.model`, stepIndex: n, callSeq: n, reply };
    }
    case 'step': {
      const full = stepOf(p, ctx);
      if (full === null) return null;
      const actionResult = { resultId: `s${full['stepIndex'] as number}.action`, outcome: full['outcome'] };
      return { kind: 'step', v: p['v'], step: full['step'], actionResult };
    }
    default:
      return null;
  }
}

/**
 * The records of an ordinary action step as a reader holds them until its step record: the reply
 * and the decision the step's fields derive from (a {@link StepContext} of one step).
 */
export class HeldStep extends StepContext {
  #stepIndex = -1;
  #reply: Obj | null = null;
  #decision: Obj | null = null;

  /**
   * Hold the parsed lean model-call intent, result and action intent of step `i`: true when each
   * is the common shape and passes the decoder's checks (the records the general reader would
   * return), false when the general reader must read them.
   */
  hold(i: number, intent: Obj, result: Obj, action: Obj): boolean {
    this.#stepIndex = -1;
    if (!isModelIntent(intent) || intent['stepIndex'] !== i || result['stepIndex'] !== i) return false;
    const reply = replyOf(result);
    const decision = reply === null ? null : decisionOf(action, reply['text'] as string);
    if (decision === null || action['stepIndex'] !== i) return false;
    this.#stepIndex = i;
    this.#reply = reply;
    this.#decision = decision;
    return true;
  }

  override get complete(): boolean {
    return true;
  }

  override replyOf(stepIndex: unknown): ResultRecord['reply'] | null {
    return stepIndex === this.#stepIndex ? (this.#reply as ResultRecord['reply']) : null;
  }

  override decisionOf(stepIndex: unknown): ActionDecision | null {
    return stepIndex === this.#stepIndex ? (this.#decision as ActionDecision) : null;
  }
}

/** The step record `p` closes the held step with: its `step`, checked and filled in; or null. */
export function heldStep(p: Obj, held: HeldStep): StepRecord | null {
  const full = stepOf(p, held);
  return full === null ? null : (full['step'] as StepRecord);
}

function isModelIntent(p: Obj): boolean {
  return isExactly(p, MODEL_INTENT) && isInt(p['stepIndex']) && isPolicy(p['replayPolicy']);
}

function modelIntent(n: number, p: Obj): Obj {
  return {
    kind: 'intent',
    v: p['v'],
    intent: 'model_call',
    stepIndex: n,
    callSeq: n,
    resultId: `s${n}.model`,
    replayPolicy: p['replayPolicy'],
  };
}

function actionIntent(p: Obj, ctx: StepContext): Obj | null {
  const text = ctx.replyOf(p['stepIndex'])?.text;
  const decision = text === undefined ? null : decisionOf(p, text);
  if (decision === null) return null;
  return {
    kind: 'intent',
    v: p['v'],
    intent: 'action',
    stepIndex: p['stepIndex'],
    resultId: `s${p['stepIndex'] as number}.action`,
    replayPolicy: p['replayPolicy'],
    decision,
  };
}

/** The full decision of a common action intent `p` whose step's reply reads `text`, or null. */
function decisionOf(p: Obj, text: string): Obj | null {
  const d = p['decision'];
  if (!isExactly(p, ACTION_INTENT) || !isInt(p['stepIndex']) || !isPolicy(p['replayPolicy'])) return null;
  if (!isObj(d) || !isExactly(d, DECISION) || d['kind'] !== 'action') return null;
  const repr = reprOf(d['action']);
  return repr === undefined ? null : { kind: 'action', action: d['action'], trajectoryRepr: repr, historyText: text };
}

/** The full reply of a common result `p`, or null. */
function replyOf(p: Obj): Obj | null {
  const rp = p['reply'];
  if (!isExactly(p, RESULT) || !isInt(p['stepIndex']) || !isObj(rp) || !inOrder(rp, REPLY_ORDER)) return null;
  const reply = fullReply(rp);
  if (typeof reply['text'] !== 'string' || !isStrOrNull(reply['callId']) || !isUsageOrNull(reply['usage'])) return null;
  return reply;
}

/** The full `step` of a common step record `p` at `ctx`, its outcome and index; or null. */
function stepOf(p: Obj, ctx: StepContext): Obj | null {
  const s = p['step'];
  const ar = p['actionResult'];
  if (!isExactly(p, STEP) || !isObj(s) || !isExactly(s, LEAN_STEP) || !isInt(s['stepIndex'])) return null;
  if (!isObj(ar) || !isExactly(ar, ACTION_RESULT)) return null;
  const o = ar['outcome'];
  if (!isObj(o) || !inOrder(o, OUTCOME_ORDER)) return null;
  const outcome = fullOutcome(o);
  const step = derivedStep(s, outcome, ctx, false);
  step['startedAt'] = s['startedAt'];
  step['endedAt'] = s['endedAt'];
  if (!isUsageOrNull(step['usage'])) return null;
  try {
    checkStepFields(step);
    checkOutcome(outcome);
  } catch {
    return null;
  }
  return { stepIndex: s['stepIndex'], step, outcome };
}
