/**
 * The field checks of record decoding: a record's body is believed by its readers (counters,
 * history, the viewer), so every field a reader uses must have its type. `need` throws `Shape`,
 * which the decoder turns into a `CorruptLogError` naming the record.
 * @module
 */
import { RECORD_KINDS, STOP_REASONS } from './types.ts';
import type { InFlightResolution } from './types.ts';

export type Obj = Record<string, unknown>;
export const KINDS: ReadonlySet<string> = new Set(RECORD_KINDS);
export const REASONS: ReadonlySet<string> = new Set(STOP_REASONS);
// Numbers as written, without leading zeros: "01.7" is no version this library ever wrote.
export const VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** A record body of the wrong shape: the message says what is wrong. */
export class Shape extends Error {}

export function need(ok: boolean, what: string): void {
  if (!ok) throw new Shape(what);
}
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isInt = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0;
export const isStrOrNull = (v: unknown): boolean => v === null || typeof v === 'string';
/**
 * Absent, null, or `{ inputTokens, outputTokens, cachedInputTokens?, reasoningTokens? }`
 * of counts: usage is summed and budgeted.
 */
export const isUsageOrNull = (u: unknown): boolean =>
  u === undefined ||
  u === null ||
  (isObj(u) &&
    isInt(u['inputTokens']) &&
    isInt(u['outputTokens']) &&
    (u['cachedInputTokens'] === undefined || isInt(u['cachedInputTokens'])) &&
    (u['reasoningTokens'] === undefined || isInt(u['reasoningTokens'])));

const DECISIONS: ReadonlySet<unknown> = new Set(['action', 'final', 'invalid', 'model_error', 'interpreter_error']);
const OUTCOME_STATUSES: ReadonlySet<unknown> = new Set(['executed', 'not_executed', 'env_error']);
export const isBool = (v: unknown): boolean => typeof v === 'boolean';
/** Each step field's type; an absent field takes its default (an older writer did not write it). */
const STEP_TYPES: Readonly<Record<string, (v: unknown) => boolean>> = {
  callSeq: isInt,
  modelCallId: isStrOrNull,
  modelText: isStrOrNull,
  reasoning: isStrOrNull,
  decision: (v) => DECISIONS.has(v),
  actionRepr: isStrOrNull,
  historyText: isStrOrNull,
  historyContent: (v) => v === null || Array.isArray(v),
  observation: isStrOrNull,
  observationIsSynthetic: isBool,
  actionStatus: (v) => v === null || v === 'denied' || OUTCOME_STATUSES.has(v),
  envReportedCompletion: isBool,
  observationTruncatedChars: isInt,
  finalAnswer: isStrOrNull,
  explanation: isStrOrNull,
  toolCallId: isStrOrNull,
  toolCompletedRun: isBool,
  finishReason: isStrOrNull,
  startedAt: (v) => typeof v === 'string',
  endedAt: (v) => typeof v === 'string',
};

/** Readers believe a step's fields (counters, history, the viewer): each must have its type. */
export function checkStepFields(s: Obj): void {
  for (const key in STEP_TYPES) {
    if (s[key] !== undefined)
      need((STEP_TYPES[key] as (v: unknown) => boolean)(s[key]), `step.step.${key} has the wrong type`);
  }
}

export function checkOutcome(o: Obj): void {
  need(
    OUTCOME_STATUSES.has(o['status']) && typeof o['observation'] === 'string',
    'step.actionResult.outcome needs a status and an observation',
  );
  need(
    isBool(o['observationIsSynthetic']) && isBool(o['envReportedCompletion']) && isInt(o['observationTruncatedChars']),
    'step.actionResult.outcome has a field of the wrong type',
  );
}

const GATES: ReadonlySet<unknown> = new Set([null, 'approval', 'answer']);

/** An `actions` intent: the decision with its calls, and one plan per call (`s{i}.a{j}`, in order). */
export function checkActionsIntent(r: Obj): void {
  const d = r['decision'];
  need(
    isObj(d) && d['kind'] === 'actions' && Array.isArray(d['calls']) && d['calls'].length > 1,
    'an actions intent must hold an actions decision of two or more calls',
  );
  const calls = (d as Obj)['calls'] as unknown[];
  need(
    calls.every((c) => isObj(c) && isObj(c['action']) && typeof c['trajectoryRepr'] === 'string'),
    'intent.decision.calls must each hold an action and its trajectoryRepr',
  );
  const plans = r['calls'];
  need(Array.isArray(plans) && plans.length === calls.length, 'intent.calls must hold one plan per call');
  (plans as unknown[]).forEach((p, j) => {
    need(
      isObj(p) &&
        p['resultId'] === `s${String(r['stepIndex'])}.a${j}` &&
        (p['replayPolicy'] === 'safe' || p['replayPolicy'] === 'never') &&
        GATES.has(p['gate']) &&
        isStrOrNull(p['skip']),
      `intent.calls[${j}] must hold resultId s${String(r['stepIndex'])}.a${j}, replayPolicy, gate and skip`,
    );
  });
}

/** A step's `calls`: each call's outcome, as the step record lists them. */
export function checkStepCalls(calls: unknown): void {
  need(Array.isArray(calls) && calls.length > 1, 'step.step.calls must list two or more calls');
  for (const c of calls as unknown[]) {
    need(
      isObj(c) &&
        typeof c['resultId'] === 'string' &&
        isStrOrNull(c['toolCallId']) &&
        typeof c['actionRepr'] === 'string' &&
        (c['status'] === 'denied' || OUTCOME_STATUSES.has(c['status'])) &&
        typeof c['observation'] === 'string' &&
        isBool(c['observationIsSynthetic']) &&
        isBool(c['envReportedCompletion']) &&
        isInt(c['observationTruncatedChars']) &&
        isBool(c['toolCompletedRun']) &&
        (c['childRunId'] === undefined || typeof c['childRunId'] === 'string'),
      'step.step.calls must each hold resultId, toolCallId, actionRepr, status, observation and its flags',
    );
  }
}

/** How deep sub-agents' requests may nest in one record: a guard against a record built to recurse, not a policy. */
const MAX_CHILD_DEPTH = 64;

/**
 * A request's `child`: present exactly for kind `child`, holding the sub-agent's run id and its own
 * open request (`{ resultId, stepIndex, kind, target, decision, child? }`), nested as deep as the
 * sub-agents are.
 */
export function checkChildRequest(q: Obj, where: string, depth = 0): void {
  need(depth <= MAX_CHILD_DEPTH, `${where}.child nests deeper than ${MAX_CHILD_DEPTH} sub-agents`);
  const child = q['child'];
  if (q['kind'] !== 'child') return need(child === undefined, `${where}.child belongs to a request of kind child`);
  const inner = isObj(child) ? child['request'] : undefined;
  need(
    isObj(child) &&
      typeof child['runId'] === 'string' &&
      child['runId'] !== '' &&
      (child['repeat'] === undefined || isInt(child['repeat'])) &&
      isObj(inner) &&
      typeof inner['resultId'] === 'string' &&
      isInt(inner['stepIndex']) &&
      ['approval', 'answer', 'settle', 'child'].includes(inner['kind'] as string) &&
      (inner['target'] === 'action' || inner['target'] === 'model_call') &&
      (inner['decision'] === null || (isObj(inner['decision']) && inner['decision']['kind'] === 'action')),
    `${where}.child must hold the sub-agent's runId and its open request`,
  );
  checkChildRequest(inner as Obj, `${where}.child.request`, depth + 1);
}

/** `{ cancelGraceMs, defaulted }`: what a resume by id needs beyond the snapshot. */
export function isStoredRequest(v: unknown): boolean {
  return (
    isObj(v) &&
    isInt(v['cancelGraceMs']) &&
    Array.isArray(v['defaulted']) &&
    v['defaulted'].every((k) => typeof k === 'string')
  );
}

export function isChange(v: unknown): boolean {
  return (
    isObj(v) &&
    isStrOrNull(v['before']) &&
    isStrOrNull(v['after']) &&
    (v['after'] === null) === (v['value'] === undefined)
  );
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/**
 * A W3C trace context header value (`traceparent`): version, trace id, parent span id, flags, in
 * lower-case hex; version `ff` and all-zero ids are invalid (https://www.w3.org/TR/trace-context/).
 */
export function isTraceparent(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const m = TRACEPARENT.exec(v);
  return m !== null && m[1] !== 'ff' && !/^0+$/.test(m[2] as string) && !/^0+$/.test(m[3] as string);
}

export const RESOLUTIONS: ReadonlySet<string> = new Set([
  'reissue_model',
  'reinterpret',
  'replay_action',
  'settle',
  'await_input',
  'apply_input',
  'run_calls',
] satisfies InFlightResolution[]);

export function isForkOrigin(v: unknown): boolean {
  return isObj(v) && typeof v['runId'] === 'string' && isInt(v['atStep']);
}

export function isStopRequest(v: unknown): boolean {
  return isObj(v) && (v['reason'] === undefined || typeof v['reason'] === 'string');
}
