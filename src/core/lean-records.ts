/**
 * The lean form of record version 1.2 (docs/design/run-log.md#the-lean-form): a record of a run
 * log, written in the log's order, leaves out every field a reader derives from the record itself
 * or from the records of its step before it — the model's reply is held by its `result` record
 * only, the action by its intent only, the outcome by the step's `actionResult` only. A reader
 * fills each left-out field back in, so what it returns is the record the writer was given.
 *
 * A field is left out only when filling it back in gives the very value: the writer compares, it
 * never assumes. A writer that does not know the step's earlier records (a store that did not
 * write them) writes the field out, and a field written out is read as written.
 * @module
 */
import { isObj } from './record-fields.ts';
import type { Obj } from './record-fields.ts';
import { STEP_DEFAULTS } from './types.ts';
import type { ActionDecision, LogRecord, ResultRecord } from './types.ts';

type Reply = ResultRecord['reply'];

/**
 * What the records of the step in flight hold that its later records refer to: the reply of its
 * latest `result` and the decision of its latest action intent. Emptied by a step record (its
 * step is done) and by a run's first and last records. `complete` once it has seen such a
 * boundary: it then knows every record of the step in flight, so a reply it has not seen is one
 * the log does not hold.
 */
export class StepContext {
  #stepIndex = -1;
  #reply: Reply | null = null;
  #decision: ActionDecision | null = null;
  #complete = false;

  /** Learn what `rec` (the log's next record) holds for the records after it. */
  note(rec: LogRecord): void {
    switch (rec.kind) {
      case 'result':
        this.#at(rec.stepIndex);
        this.#reply = rec.reply;
        return;
      case 'intent':
        if (rec.intent === 'action') {
          this.#at(rec.stepIndex);
          this.#decision = rec.decision;
        }
        return;
      case 'step':
      case 'run_started':
      case 'run_ended':
        this.#stepIndex = -1;
        this.#reply = null;
        this.#decision = null;
        this.#complete = true;
        return;
      default:
        return;
    }
  }

  #at(stepIndex: number): void {
    if (stepIndex === this.#stepIndex) return;
    this.#stepIndex = stepIndex;
    this.#reply = null;
    this.#decision = null;
  }

  /** Whether it has seen every record since the last step boundary (see the class). */
  get complete(): boolean {
    return this.#complete;
  }

  /** The reply of step `stepIndex`'s latest `result` record, if the log holds one since its last step. */
  replyOf(stepIndex: unknown): Reply | null {
    return stepIndex === this.#stepIndex ? this.#reply : null;
  }

  /** The decision of step `stepIndex`'s latest action intent, if the log holds one since its last step. */
  decisionOf(stepIndex: unknown): ActionDecision | null {
    return stepIndex === this.#stepIndex ? this.#decision : null;
  }
}

/** The context a record read on its own is read in: no step in flight. */
export const NO_CONTEXT: StepContext = /* @__PURE__ */ new StepContext();

const OUTCOME_DEFAULTS: Obj = {
  status: 'executed',
  observationIsSynthetic: false,
  envReportedCompletion: false,
  observationTruncatedChars: 0,
};
/** The order a reader puts an outcome's left-out fields back in, and a decision's (`FILLED`: what it fills in). */
export const OUTCOME_ORDER = ['status', 'observation', ...Object.keys(OUTCOME_DEFAULTS).slice(1)];
const FILLED = ['trajectoryRepr', 'historyText'];
const DECISION_ORDER = ['kind', 'action', ...FILLED];
const REPLY_NULLS: ReadonlySet<string> = new Set(['reasoning', 'content', 'finishReason', 'usage', 'providerMetadata']);

/** A field the writer cannot derive (it does not know the step's earlier records): always written. */
const UNKNOWN: unique symbol = Symbol('unknown');

/** Set `out[key]`; an own `__proto__` key (JSON.parse makes one) is data, not the prototype. */
function put(out: Obj, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** Whether `value` (`undefined` read as `null`: JSON drops it, and a reader then reads null) is `derived`. */
function same(value: unknown, derived: unknown): boolean {
  if (derived === UNKNOWN) return false;
  const v = value === undefined ? null : value;
  return v === derived || sameInOrder(v, derived, 0);
}

/**
 * Whether two plain JSON values are equal, keys in the same order (a reader derives the JSON: another order is
 * another record). Anything but plain objects and arrays (a Date) is never the same: its JSON is not its keys.
 */
function sameInOrder(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return typeof a !== 'object' || a === null || depth > 0 || plain(a);
  if (!plain(a) || !plain(b) || Array.isArray(a) !== Array.isArray(b) || depth > 200) return false;
  const x = Object.keys(a as Obj);
  const y = Object.keys(b as Obj);
  return (
    x.length === y.length &&
    x.every((k, i) => k === y[i] && sameInOrder((a as Obj)[k], (b as Obj)[k], depth + 1) && (a as Obj)[k] !== undefined)
  );
}

const PLAIN: ReadonlySet<unknown> = new Set([Object.prototype, Array.prototype, null]);
const plain = (v: unknown): boolean => typeof v === 'object' && v !== null && PLAIN.has(Object.getPrototypeOf(v));

/** Whether `obj`'s first keys are `keys`, in that order: where a reader puts back what was left out. */
function startsWith(obj: Obj, keys: readonly string[]): boolean {
  const own = Object.keys(obj);
  return keys.every((k, i) => own[i] === k);
}

/** `out` with null for each of `keys` `obj` lacks: a reader fills it in, read alone it is refused, as null is. */
function holes(out: Obj, obj: Obj, keys: readonly string[]): Obj {
  for (const key of keys) if (obj[key] === undefined) put(out, key, null);
  return out;
}

/** `obj` without the keys `drop` says to leave out, the others in their order. */
function without(obj: Obj, drop: (key: string, value: unknown) => boolean): Obj {
  const out: Obj = {};
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (!drop(key, value)) put(out, key, value);
  }
  return out;
}

/**
 * The step fields a reader derives for step `s` at `ctx`, in canonical order: from the step's
 * reply, its action decision and its `outcome`; the rest are the step defaults. Writing
 * (`writing`), a field from a reply or decision the context may not have seen is {@link UNKNOWN}.
 */
export function derivedStep(s: Obj, outcome: Obj | null, ctx: StepContext, writing: boolean): Obj {
  const i = s['stepIndex'];
  const reply = ctx.replyOf(i);
  const d = ctx.decisionOf(i);
  const blind = writing && !ctx.complete;
  const noReply = blind ? UNKNOWN : null;
  const noDecision = blind ? UNKNOWN : null;
  const modelText = s['modelText'] !== undefined ? s['modelText'] : reply ? reply.text : noReply;
  const action = d?.action;
  return {
    stepIndex: i,
    callSeq: i,
    modelCallId: reply ? reply.callId : noReply,
    modelText: reply ? reply.text : noReply,
    reasoning: reply ? reply.reasoning : noReply,
    decision: outcome ? 'action' : writing ? UNKNOWN : undefined,
    actionRepr: d ? d.trajectoryRepr : noDecision,
    historyText: d ? d.historyText : blind ? UNKNOWN : modelText,
    historyContent: d ? (d.historyContent ?? null) : noDecision,
    observation: outcome ? outcome['observation'] : null,
    observationIsSynthetic: outcome ? outcome['observationIsSynthetic'] : false,
    actionStatus: outcome ? outcome['status'] : null,
    envReportedCompletion: outcome ? outcome['envReportedCompletion'] : false,
    observationTruncatedChars: outcome ? outcome['observationTruncatedChars'] : 0,
    finalAnswer: null,
    explanation: null,
    toolCallId: d ? (action?.kind === 'tool_call' ? (action.id ?? null) : null) : noDecision,
    toolCompletedRun: false,
    usage: reply ? (reply.usage ?? null) : noReply,
    finishReason: reply ? (reply.finishReason ?? null) : noReply,
    startedAt: '',
    endedAt: '',
  };
}

/**
 * How a tool call reads in a trajectory when its interpreter says nothing else: `name(arguments)`,
 * the arguments as JSON (what every PolyLoop interpreter writes). Undefined for other actions.
 */
export function reprOf(action: unknown): string | undefined {
  if (!isObj(action) || action['kind'] !== 'tool_call' || typeof action['name'] !== 'string') return undefined;
  return `${action['name']}(${JSON.stringify(action['arguments'])})`;
}

/** A model or action intent's own resultId: `s{i}.model`, `s{i}.action`. */
const ownResultId = (stepIndex: unknown, what: 'model' | 'action'): string => `s${String(stepIndex)}.${what}`;

/**
 * `rec` (in canonical key order, record version 1.2) as its lean form says to write it, at `ctx`
 * (the log before it). Kinds without a lean form come back as they are.
 */
export function leanOf(rec: Obj, ctx: StepContext): Obj {
  const stepIndex = rec['stepIndex'];
  switch (rec['kind']) {
    case 'intent': {
      const intent = rec['intent'];
      if (intent !== 'model_call' && intent !== 'action') return rec;
      const own = ownResultId(stepIndex, intent === 'action' ? 'action' : 'model');
      // An action intent's reader puts no callSeq back: one it holds is written.
      const lean = without(rec, (key, value) =>
        key === 'resultId' ? value === own : key === 'callSeq' && value === stepIndex && intent === 'model_call',
      );
      holes(lean, rec, intent === 'model_call' ? ['resultId', 'callSeq'] : ['resultId']);
      const d = lean['decision'];
      if (intent !== 'action' || !isObj(d)) return lean;
      for (const key of FILLED)
        if (typeof d[key] !== 'string')
          throw new TypeError(`an action intent's decision.${key} must be a string: a lean reader would fill it in`);
      if (!startsWith(d, DECISION_ORDER)) return lean;
      const text = ctx.replyOf(stepIndex)?.text;
      const repr = reprOf(d['action']);
      lean['decision'] = without(
        d,
        (key, value) => (key === 'historyText' && value === text) || (key === 'trajectoryRepr' && value === repr),
      );
      return lean;
    }
    case 'result': {
      const own = ownResultId(stepIndex, 'model');
      const lean = without(rec, (key, value) =>
        key === 'resultId' ? value === own : key === 'callSeq' && value === stepIndex,
      );
      holes(lean, rec, ['resultId', 'callSeq']);
      const reply = lean['reply'];
      if (isObj(reply))
        lean['reply'] = without(reply, (key, value) =>
          key === 'toolCalls' ? Array.isArray(value) && value.length === 0 : REPLY_NULLS.has(key) && same(value, null),
        );
      return lean;
    }
    case 'step': {
      const s = rec['step'];
      const ar = rec['actionResult'];
      if (!isObj(s)) return rec;
      const outcome = isObj(ar) && isObj(ar['outcome']) ? ar['outcome'] : null;
      const derived = derivedStep(s, outcome, ctx, true);
      const step = without(
        s,
        (key, value) => key !== 'stepIndex' && Object.hasOwn(derived, key) && same(value, derived[key]),
      );
      // A field the step lacks is read alone as its default: a reader must not derive another value.
      for (const key of Object.keys(derived)) {
        if (key === 'stepIndex' || s[key] !== undefined) continue;
        const fallback = key === 'callSeq' ? s['stepIndex'] : key === 'decision' ? null : (STEP_DEFAULTS as Obj)[key];
        if (derived[key] !== fallback) put(step, key, fallback);
      }
      const lean = without(rec, (key) => key === 'actionResult');
      lean['step'] = step;
      if (isObj(ar)) {
        const own = ownResultId(s['stepIndex'], 'action');
        // A copy always: `outcome` is set on it, and `ar` is the caller's.
        const kept = without(ar, (k, v) => k === 'resultId' && v === own && startsWith(ar, ['resultId']));
        holes(kept, ar, ['resultId']);
        if (outcome)
          kept['outcome'] = startsWith(outcome, OUTCOME_ORDER)
            ? without(outcome, (key, value) => Object.hasOwn(OUTCOME_DEFAULTS, key) && value === OUTCOME_DEFAULTS[key])
            : holes({ ...outcome }, outcome, OUTCOME_ORDER);
        lean['actionResult'] = kept;
      } else if (ar !== null && ar !== undefined) lean['actionResult'] = ar;
      return lean;
    }
    default:
      return rec;
  }
}

/** `value`, or `fallback` when it is absent (`null` written out is kept: checking it is the decoder's). */
const or = (value: unknown, fallback: unknown): unknown => (value === undefined ? fallback : value);

/** Copy `from`'s keys that `to` lacks onto `to`, in their order: unknown keys are kept. */
function rest(to: Obj, from: Obj): Obj {
  for (const key of Object.keys(from)) if (!Object.hasOwn(to, key)) put(to, key, from[key]);
  return to;
}

/**
 * Fill back in what the lean form of a 1.2 record `r` left out, at `ctx` (the log before it):
 * the record its writer was given, its keys in canonical order. A field present is kept as
 * written; checking it is the decoder's. Built as literals: this runs once per record of every
 * log read.
 */
export function inflate(r: Obj, ctx: StepContext): Obj {
  const stepIndex = r['stepIndex'];
  switch (r['kind']) {
    case 'intent': {
      const intent = r['intent'];
      if (intent === 'model_call') {
        const full: Obj = {
          kind: 'intent',
          v: r['v'],
          intent,
          stepIndex,
          callSeq: or(r['callSeq'], stepIndex),
          resultId: or(r['resultId'], ownResultId(stepIndex, 'model')),
          replayPolicy: r['replayPolicy'],
        };
        return rest(full, r);
      }
      if (intent !== 'action') return r;
      const d = r['decision'];
      const full: Obj = {
        kind: 'intent',
        v: r['v'],
        intent,
        stepIndex,
        resultId: or(r['resultId'], ownResultId(stepIndex, 'action')),
        replayPolicy: r['replayPolicy'],
        decision: isObj(d) ? fullDecision(d, ctx.replyOf(stepIndex)?.text) : d,
      };
      return rest(full, r);
    }
    case 'result': {
      const rp = r['reply'];
      const reply = isObj(rp) ? rest(fullReply(rp), rp) : rp;
      const full: Obj = {
        kind: 'result',
        v: r['v'],
        resultId: or(r['resultId'], ownResultId(stepIndex, 'model')),
        stepIndex,
        callSeq: or(r['callSeq'], stepIndex),
        reply,
      };
      return rest(full, r);
    }
    case 'step': {
      const s = r['step'];
      if (!isObj(s)) return r;
      const ar = r['actionResult'];
      let outcome: Obj | null = null;
      let actionResult = ar === undefined ? null : ar;
      if (isObj(ar)) {
        const o = ar['outcome'];
        if (isObj(o) && Object.keys(OUTCOME_DEFAULTS).every((key) => Object.hasOwn(o, key))) outcome = o;
        else if (isObj(o)) outcome = rest(fullOutcome(o), o);
        const full: Obj = Object.hasOwn(ar, 'resultId') ? {} : { resultId: ownResultId(s['stepIndex'], 'action') };
        for (const key of Object.keys(ar)) put(full, key, key === 'outcome' ? or(outcome, o) : ar[key]);
        if (!Object.hasOwn(full, 'outcome')) full['outcome'] = o;
        actionResult = full;
      }
      const step = derivedStep(s, outcome, ctx, false);
      for (const key of Object.keys(s)) put(step, key, s[key]);
      return rest({ kind: 'step', v: r['v'], step, actionResult }, r);
    }
    default:
      return r;
  }
}

/** A reply's known fields, each left out filled back in (its unknown ones are the caller's to copy). */
export function fullReply(rp: Obj): Obj {
  return {
    callId: rp['callId'],
    text: rp['text'],
    reasoning: or(rp['reasoning'], null),
    toolCalls: or(rp['toolCalls'], []),
    content: or(rp['content'], null),
    finishReason: or(rp['finishReason'], null),
    usage: or(rp['usage'], null),
    providerMetadata: or(rp['providerMetadata'], null),
  };
}
/** An outcome's known fields, each left out filled back in (as {@link fullReply}). */
export function fullOutcome(o: Obj): Obj {
  return {
    status: or(o['status'], 'executed'),
    observation: o['observation'],
    observationIsSynthetic: or(o['observationIsSynthetic'], false),
    envReportedCompletion: or(o['envReportedCompletion'], false),
    observationTruncatedChars: or(o['observationTruncatedChars'], 0),
  };
}

/** An action decision with what the lean form left out filled back in: its history text and trajectory form. */
function fullDecision(d: Obj, text: string | undefined): Obj {
  if (Object.hasOwn(d, 'trajectoryRepr') && Object.hasOwn(d, 'historyText')) return d;
  const full: Obj = { kind: d['kind'], action: d['action'] };
  const repr = or(d['trajectoryRepr'], reprOf(d['action']));
  const historyText = or(d['historyText'], text);
  if (repr !== undefined) full['trajectoryRepr'] = repr;
  if (historyText !== undefined) full['historyText'] = historyText;
  return rest(full, d);
}
