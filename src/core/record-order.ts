/**
 * The one key order of each record kind, so a record has one encoding whoever built it, and
 * canonical JSON (keys sorted at every level) for hashing values.
 * @module
 */
import { STEP_FIELDS } from './types.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const ORDER: Readonly<Record<string, readonly string[]>> = {
  run_started: ['kind', 'v', 'runId', 'snapshot', 'snapshotHash', 'request', 'forkedFrom', 'traceparent', 'startedAt'],
  intent: ['kind', 'v', 'intent', 'stepIndex', 'callSeq', 'resultId', 'replayPolicy', 'decision', 'calls'],
  result: ['kind', 'v', 'resultId', 'stepIndex', 'callSeq', 'reply'],
  step: ['kind', 'v', 'step', 'actionResult'],
  run_ended: [
    'kind',
    'v',
    'stopReason',
    'finalAnswer',
    'steps',
    'validActions',
    'eventDeliveryFailures',
    'usage',
    'stopRequest',
    'endedAt',
  ],
  input_request: ['kind', 'v', 'stepIndex', 'resultId', 'request', 'requestedAt'],
  input: ['kind', 'v', 'stepIndex', 'resultId', 'reply', 'receivedAt'],
  upgrade: ['kind', 'v', 'stepIndex', 'reason', 'changes', 'snapshotHash', 'request', 'at'],
  call_result: ['kind', 'v', 'stepIndex', 'resultId', 'outcome', 'completedRun', 'childRunId', 'usage'],
  resumed: ['kind', 'v', 'stepIndex', 'resolution', 'at'],
};
/**
 * A step record's keys in order: its fields, then `calls` (a step with several calls only) and
 * `childRunId` (a step whose action ran a sub-agent only).
 */
const STEP_ORDER: readonly string[] = [...STEP_FIELDS, 'calls', 'childRunId'];
const INPUT_REPLY_ORDER = ['kind', 'resultId', 'arguments', 'reason', 'text', 'observation'];
const INPUT_REQUEST_ORDER = ['kind', 'target', 'decision', 'child'];
export const REPLY_ORDER = [
  'callId',
  'text',
  'reasoning',
  'toolCalls',
  'content',
  'finishReason',
  'usage',
  'providerMetadata',
];

/** `obj`'s own keys, those named in `order` first and in that order, then the rest as they were. */
function ordered(obj: Obj, order: readonly string[]): Obj {
  const out: Obj = {};
  // Own keys only, and defined (not assigned): a key named `toString`, `constructor` or
  // `__proto__` is data like any other and must survive the reordering.
  const put = (key: string): void =>
    void Object.defineProperty(out, key, { value: obj[key], enumerable: true, writable: true, configurable: true });
  for (const key of order) if (Object.hasOwn(obj, key)) put(key);
  for (const key of Object.keys(obj)) if (!Object.hasOwn(out, key)) put(key);
  return out;
}

/** Whether `obj` has exactly the keys of `order`, in that order (a record as this version writes it). */
export function isExactly(obj: Obj, order: readonly string[]): boolean {
  let i = 0;
  for (const key in obj) if (order[i++] !== key) return false;
  return i === order.length;
}

/** Whether `obj`'s keys already come in `order` (a subsequence of it, nothing else): then it need not be rebuilt. */
export function inOrder(obj: Obj, order: readonly string[]): boolean {
  let i = 0;
  for (const key in obj) {
    while (i < order.length && order[i] !== key) i++;
    if (i === order.length) return false;
    i++;
  }
  return true;
}

const NESTED: Readonly<Record<string, readonly [string, readonly string[]]>> = {
  step: ['step', STEP_ORDER],
  result: ['reply', REPLY_ORDER],
  input: ['reply', INPUT_REPLY_ORDER],
  input_request: ['request', INPUT_REQUEST_ORDER],
};

export function canonicalOrder(r: Obj): Obj {
  const order = ORDER[r['kind'] as string];
  if (!order) return r;
  // Records the library builds are in order already; only reorder what is not (a cheap check, no allocation).
  const nested = NESTED[r['kind'] as string];
  const inner = nested ? r[nested[0]] : undefined;
  if (inOrder(r, order) && (!nested || !isObj(inner) || inOrder(inner, nested[1]))) return r;
  const out = ordered(r, order);
  if (r['kind'] === 'step' && isObj(r['step'])) out['step'] = ordered(r['step'], STEP_ORDER);
  if (r['kind'] === 'result' && isObj(r['reply'])) out['reply'] = ordered(r['reply'], REPLY_ORDER);
  if (r['kind'] === 'input' && isObj(r['reply'])) out['reply'] = ordered(r['reply'], INPUT_REPLY_ORDER);
  if (r['kind'] === 'input_request' && isObj(r['request'])) out['request'] = ordered(r['request'], INPUT_REQUEST_ORDER);
  return out;
}

/** JSON with object keys sorted at every level: equal values give equal strings. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    // An own `__proto__` key (JSON.parse makes one) is data:
    // assigned, it would set the prototype and vanish from the JSON.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: sortKeys(v), enumerable: true, writable: true, configurable: true });
    else out[key] = sortKeys(v);
  }
  return out;
}
