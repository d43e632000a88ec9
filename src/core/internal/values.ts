/**
 * Shape checks of values that come from outside the library and end up in records: JSON values,
 * content blocks, messages, model replies. Each returns the first problem as a sentence that names
 * its path, or null. Pure and synchronous (docs/design/README.md#dependency-rules, rule 4): no I/O,
 * no clock.
 *
 * Why a depth limit: `JSON.stringify` of a value nested a few thousand levels deep throws a
 * `RangeError` whose threshold depends on the runtime's stack (Node, workerd and Chromium
 * differ). A fixed limit makes "can this be stored?" the same answer everywhere, so a run that
 * writes in one runtime is readable and resumable in every other.
 * @module
 */
import type { InputReply } from '../types.ts';

/** The deepest nesting of arrays and objects a stored JSON value may have. */
export const MAX_JSON_DEPTH = 100;

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

const show = (path: string): string => (path === '' ? 'the value' : path);

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (typeof v === 'object')
    return isPlainObject(v) ? 'an object' : `a ${(v as object).constructor?.name ?? 'non-plain'} object`;
  return `a ${typeof v}`;
}

/**
 * The first reason `value` is not a plain JSON value that round-trips through
 * `JSON.stringify`/`JSON.parse` unchanged: undefined, functions, symbols, BigInt, non-finite
 * numbers, non-plain objects (Date, Map, class instances), cycles, nesting deeper than
 * {@link MAX_JSON_DEPTH}. Null when it is one.
 */
export function jsonProblem(value: unknown, path = '', maxDepth = MAX_JSON_DEPTH): string | null {
  // The common answer costs one walk that builds no path strings; a problem is walked again to name it.
  if (isPlainJson(value, 0, maxDepth)) return null;
  const seen = new Set<object>();
  const walk = (v: unknown, p: string, depth: number): string | null => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return null;
      case 'number':
        return Number.isFinite(v) ? null : `${show(p)} is ${String(v)}, which JSON cannot hold`;
      case 'object': {
        if (v === null) return null;
        if (depth >= maxDepth) return `${show(p)} is nested more than ${maxDepth} levels deep`;
        if (seen.has(v)) return `${show(p)} refers back to itself (a cycle)`;
        if (!Array.isArray(v) && !isPlainObject(v)) return `${show(p)} is ${kindOf(v)}, not plain JSON`;
        seen.add(v);
        if (Array.isArray(v)) {
          for (let i = 0; i < v.length; i++) {
            const problem = walk(v[i], `${p}[${i}]`, depth + 1);
            if (problem) return problem;
          }
        } else {
          for (const [k, item] of Object.entries(v)) {
            const problem = walk(item, `${p}.${k}`, depth + 1);
            if (problem) return problem;
          }
        }
        seen.delete(v);
        return null;
      }
      default:
        return `${show(p)} is ${kindOf(v)}, which JSON cannot hold`;
    }
  };
  return walk(value, path, 0);
}

/**
 * Whether `v` is plain JSON within `maxDepth` levels (a cycle exceeds the depth): the fast half of {@link jsonProblem}.
 */
function isPlainJson(v: unknown, depth: number, maxDepth: number): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object': {
      if (v === null) return true;
      if (depth >= maxDepth) return false;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!isPlainJson(v[i], depth + 1, maxDepth)) return false;
        return true;
      }
      if (!isPlainObject(v)) return false;
      for (const k in v) if (Object.hasOwn(v, k) && !isPlainJson(v[k], depth + 1, maxDepth)) return false;
      return true;
    }
    default:
      return false;
  }
}

/**
 * A frozen copy of `v` made of data properties only, as `JSON.parse(JSON.stringify(v))` would give
 * it back for plain JSON (`-0` becomes `0`; a `__proto__` key stays data), reading every property
 * once and without the text in between. Anything that is not plain JSON (undefined, a function, a
 * non-finite number, a non-plain object, nesting deeper than {@link MAX_JSON_DEPTH} — a cycle, say)
 * throws a `TypeError`: nothing of the original is ever kept, so a check of the copy is a check of
 * what will be used.
 */
export function frozenJsonCopy<T>(v: T, depth = 0): T {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      if (!Number.isFinite(v)) throw new TypeError(`${String(v)} is not JSON`);
      return (Object.is(v, -0) ? 0 : v) as T;
    case 'object':
      break;
    default:
      throw new TypeError(`${typeof v} is not JSON`);
  }
  if (v === null) return v;
  if (depth >= MAX_JSON_DEPTH) throw new TypeError(`nested more than ${MAX_JSON_DEPTH} levels deep`);
  if (Array.isArray(v)) {
    const length = v.length;
    const out: unknown[] = new Array<unknown>(length);
    for (let i = 0; i < length; i++) out[i] = frozenJsonCopy(v[i] as unknown, depth + 1);
    return Object.freeze(out) as T;
  }
  if (!isPlainObject(v)) throw new TypeError('not a plain object');
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const c = frozenJsonCopy(v[k], depth + 1);
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: c, enumerable: true, writable: true, configurable: true });
    else out[k] = c;
  }
  return Object.freeze(out) as T;
}

const str = (o: Record<string, unknown>, key: string, path: string): string | null =>
  typeof o[key] === 'string' ? null : `${path}.${key} must be a string, got ${kindOf(o[key])}`;

/** The first problem of one content block (known `type`, its fields of the right kinds), or null. */
export function contentBlockProblem(block: unknown, path: string): string | null {
  if (!isPlainObject(block)) return `${path} must be a content block object, got ${kindOf(block)}`;
  switch (block['type']) {
    case 'text':
      return str(block, 'text', path);
    case 'tool_call':
      return str(block, 'id', path) ?? str(block, 'name', path) ?? jsonProblem(block['arguments'], `${path}.arguments`);
    case 'tool_result':
      return str(block, 'toolCallId', path) ?? str(block, 'text', path);
    case 'reasoning':
      return str(block, 'text', path) ?? (block['signature'] === undefined ? null : str(block, 'signature', path));
    case 'opaque':
      return (
        str(block, 'provider', path) ??
        (block['data'] === undefined ? `${path}.data is required` : jsonProblem(block['data'], `${path}.data`))
      );
    default:
      return (
        `${path}.type must be one of text, tool_call, tool_result, reasoning, opaque, ` +
        `got ${JSON.stringify(block['type']) ?? kindOf(block['type'])}`
      );
  }
}

/** The first problem of a content array, or null. */
export function contentProblem(content: unknown, path: string): string | null {
  if (!Array.isArray(content)) return `${path} must be an array of content blocks, got ${kindOf(content)}`;
  for (let i = 0; i < content.length; i++) {
    const problem = contentBlockProblem(content[i], `${path}[${i}]`);
    if (problem) return problem;
  }
  // Extra fields of a block travel with it into records: they must be plain JSON too.
  return jsonProblem(content, path);
}

/** The first problem of one message (role, content blocks), or null. */
export function messageProblem(message: unknown, path: string): string | null {
  if (!isPlainObject(message)) return `${path} must be a message object, got ${kindOf(message)}`;
  const role = message['role'];
  if (role !== 'system' && role !== 'user' && role !== 'assistant')
    return `${path}.role must be system, user or assistant, got ${JSON.stringify(role) ?? kindOf(role)}`;
  return contentProblem(message['content'], `${path}.content`);
}

/**
 * The first way `reply` breaks the `ModelReply` contract, or null: `callId` a non-empty string
 * or null, `text` a string, `reasoning` a string or null (absent reads as null), `toolCalls` (optional) an array of
 * `{ id, name, arguments }` with JSON arguments, `content` (optional) an array of blocks.
 */
export function modelReplyProblem(reply: unknown): string | null {
  if (!isPlainObject(reply)) return `the reply must be an object, got ${kindOf(reply)}`;
  const { callId, text, reasoning, toolCalls, content } = reply;
  if (callId !== null && typeof callId !== 'string') return `callId must be a string or null, got ${kindOf(callId)}`;
  if (callId === '') return 'callId must not be "" (use null when there is no id)';
  if (typeof text !== 'string') return `text must be a string, got ${kindOf(text)}`;
  if (reasoning !== null && reasoning !== undefined && typeof reasoning !== 'string')
    return `reasoning must be a string or null, got ${kindOf(reasoning)}`;
  if (toolCalls !== undefined) {
    if (!Array.isArray(toolCalls)) return `toolCalls must be an array, got ${kindOf(toolCalls)}`;
    for (let i = 0; i < toolCalls.length; i++) {
      const call: unknown = toolCalls[i];
      const path = `toolCalls[${i}]`;
      if (!isPlainObject(call)) return `${path} must be an object, got ${kindOf(call)}`;
      const problem =
        str(call, 'id', path) ?? str(call, 'name', path) ?? jsonProblem(call['arguments'], `${path}.arguments`);
      if (problem) return problem;
    }
    const whole = jsonProblem(toolCalls, 'toolCalls');
    if (whole) return whole;
  }
  if (content !== undefined && content !== null) {
    const problem = contentProblem(content, 'content');
    if (problem) return problem;
  }
  return metadataProblem(reply);
}

const FINISH: ReadonlySet<unknown> = new Set(['stop', 'length', 'tool_calls', 'content_filter', 'error', 'other']);
const isCount = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;

/** Reply metadata, each optional: `finishReason` one of the six, `usage` token counts, `providerMetadata` JSON. */
function metadataProblem(reply: Record<string, unknown>): string | null {
  const { finishReason, usage, providerMetadata } = reply;
  if (finishReason !== undefined && finishReason !== null && !FINISH.has(finishReason)) {
    return (
      'finishReason must be one of stop, length, tool_calls, content_filter, error, other, ' +
      `got ${JSON.stringify(finishReason) ?? kindOf(finishReason)}`
    );
  }
  if (usage !== undefined && usage !== null) {
    if (!isPlainObject(usage)) return `usage must be an object, got ${kindOf(usage)}`;
    for (const key of ['inputTokens', 'outputTokens'])
      if (!isCount(usage[key])) return `usage.${key} must be a non-negative integer, got ${kindOf(usage[key])}`;
    for (const key of ['cachedInputTokens', 'reasoningTokens']) {
      if (usage[key] !== undefined && !isCount(usage[key]))
        return `usage.${key} must be a non-negative integer when present, got ${kindOf(usage[key])}`;
    }
  }
  if (providerMetadata !== undefined && providerMetadata !== null) {
    if (!isPlainObject(providerMetadata)) return `providerMetadata must be an object, got ${kindOf(providerMetadata)}`;
    return jsonProblem(providerMetadata, 'providerMetadata');
  }
  return null;
}

function actionProblem(action: unknown, path: string): string | null {
  if (!isPlainObject(action)) return `${path} must be an object, got ${kindOf(action)}`;
  if (action['kind'] === 'code') return str(action, 'source', path);
  if (action['kind'] !== 'tool_call') {
    const got = JSON.stringify(action['kind']) ?? kindOf(action['kind']);
    return `${path}.kind must be "tool_call" or "code", got ${got}`;
  }
  return (
    str(action, 'name', path) ??
    (action['id'] === undefined ? null : str(action, 'id', path)) ??
    jsonProblem(action['arguments'], `${path}.arguments`)
  );
}

/** The most calls one `actions` decision may hold. */
const MAX_CALLS = 128;

/** The calls of an `actions` decision: one or more, each an action with its one-line form. */
function callsProblem(calls: unknown): string | null {
  if (!Array.isArray(calls) || calls.length === 0)
    return `decision.calls must be a non-empty array, got ${Array.isArray(calls) ? 'an empty one' : kindOf(calls)}`;
  if (calls.length > MAX_CALLS) return `decision.calls holds ${calls.length} calls; at most ${MAX_CALLS} a step`;
  for (const [j, call] of calls.entries()) {
    const path = `decision.calls[${j}]`;
    if (!isPlainObject(call)) return `${path} must be an object, got ${kindOf(call)}`;
    const problem = str(call, 'trajectoryRepr', path) ?? actionProblem(call['action'], `${path}.action`);
    if (problem) return problem;
  }
  return null;
}

/**
 * The first way `decision` breaks the `Decision` contract, or null: a known `kind`, its string
 * fields, a well-formed action (JSON arguments within the depth limit), `historyText` a string
 * and `historyContent` (optional) valid blocks.
 */
export function decisionProblem(decision: unknown): string | null {
  // The whole decision is stored (in the action intent): extra fields must be plain JSON too.
  return decisionShapeProblem(decision) ?? jsonProblem(decision, 'decision');
}

/**
 * {@link decisionProblem} without the plain-JSON walk, for a decision already copied as plain JSON (`frozenJsonCopy`).
 */
export function decisionShapeProblem(decision: unknown): string | null {
  if (!isPlainObject(decision)) return `the decision must be an object, got ${kindOf(decision)}`;
  const problem =
    str(decision, 'historyText', 'decision') ??
    (decision['historyContent'] === undefined
      ? null
      : contentProblem(decision['historyContent'], 'decision.historyContent'));
  if (problem) return problem;
  const kindProblem = ((): string | null => {
    switch (decision['kind']) {
      case 'action':
        return str(decision, 'trajectoryRepr', 'decision') ?? actionProblem(decision['action'], 'decision.action');
      case 'actions':
        return callsProblem(decision['calls']);
      case 'final':
        return str(decision, 'answer', 'decision');
      case 'invalid':
        return str(decision, 'explanation', 'decision');
      default:
        return (
          'decision.kind must be "action", "actions", "final" or "invalid", ' +
          `got ${JSON.stringify(decision['kind']) ?? kindOf(decision['kind'])}`
        );
    }
  })();
  return kindProblem;
}

/**
 * The first way `outcome` breaks the `ActionOutcome` contract, or null: `status` one of
 * executed / not_executed / env_error, `observation` a string, the two flags booleans,
 * `observationTruncatedChars` a non-negative integer.
 */
export function outcomeProblem(outcome: unknown): string | null {
  if (!isPlainObject(outcome)) return `the outcome must be an object, got ${kindOf(outcome)}`;
  const status = outcome['status'];
  if (status !== 'executed' && status !== 'not_executed' && status !== 'env_error') {
    return (
      'outcome.status must be "executed", "not_executed" or "env_error", ' +
      `got ${JSON.stringify(status) ?? kindOf(status)}`
    );
  }
  const problem = str(outcome, 'observation', 'outcome');
  if (problem) return problem;
  for (const key of ['observationIsSynthetic', 'envReportedCompletion']) {
    if (typeof outcome[key] !== 'boolean') return `outcome.${key} must be a boolean, got ${kindOf(outcome[key])}`;
  }
  const truncated = outcome['observationTruncatedChars'];
  if (!Number.isSafeInteger(truncated) || (truncated as number) < 0)
    return `outcome.observationTruncatedChars must be a non-negative integer, got ${kindOf(truncated)}`;
  return null;
}

/** The field each reply kind carries besides `kind` and `resultId` (its text), or null for none. */
export const INPUT_REPLY_TEXT_FIELD: Readonly<Record<InputReply['kind'], string | null>> = {
  approve: null,
  deny: 'reason',
  answer: 'text',
  executed: 'observation',
  retry: null,
  cancel: null,
};

/**
 * The first way `reply` breaks the `InputReply` shape, or null: a known `kind`, a string
 * `resultId`, the kind's text field (`reason`, `text`, `observation`) a string, and plain JSON
 * throughout (it is stored).
 */
export function inputReplyProblem(reply: unknown): string | null {
  if (!isPlainObject(reply)) return `the reply must be an object, got ${kindOf(reply)}`;
  const kind = reply['kind'];
  if (typeof kind !== 'string' || !Object.hasOwn(INPUT_REPLY_TEXT_FIELD, kind)) {
    const kinds = Object.keys(INPUT_REPLY_TEXT_FIELD).join(', ');
    return `reply.kind must be one of ${kinds}, got ${JSON.stringify(kind) ?? kindOf(kind)}`;
  }
  const field = INPUT_REPLY_TEXT_FIELD[kind as InputReply['kind']];
  return (
    str(reply, 'resultId', 'reply') ??
    (field ? str(reply, field, 'reply') : null) ??
    argumentsProblem(reply, kind) ??
    jsonProblem(reply, 'reply')
  );
}

/** Edited arguments: only on an approval, and a JSON object there. */
function argumentsProblem(reply: Record<string, unknown>, kind: string): string | null {
  const args = reply['arguments'];
  if (args === undefined) return null;
  if (kind !== 'approve') return `reply.arguments is taken only with kind "approve", not ${JSON.stringify(kind)}`;
  return isPlainObject(args) ? null : `reply.arguments must be an object of the edited arguments, got ${kindOf(args)}`;
}
