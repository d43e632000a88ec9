/**
 * What the loop does to values that cross a seam: copies of replies into their stored form,
 * frozen outcomes and records, so no seam can change what the run goes on with.
 * @module
 */
import { describeError, InvalidInputError } from './errors.ts';
import { replyMismatch } from './internal/input.ts';
import { INPUT_REPLY_TEXT_FIELD, inputReplyProblem } from './internal/values.ts';
import type {
  ActionOutcome,
  InputReply,
  JsonObject,
  JsonValue,
  ModelReply,
  ResultRecord,
  RunLogView,
  Usage,
} from './types.ts';

export function isThenable(v: unknown): v is Promise<void> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/**
 * The tool calls of a reply that made none, shared: frozen and empty, so no run can tell it from
 * a copy of its own, and a run that keeps its records keeps one array less a step.
 */
const NO_TOOL_CALLS: ResultRecord['reply']['toolCalls'] = Object.freeze([]);

/** A checked reply, copied into plain stored form: later changes by the caller reach nothing. */
export function copyReply(raw: ModelReply): ResultRecord['reply'] {
  const toolCalls =
    raw.toolCalls && raw.toolCalls.length > 0
      ? (JSON.parse(JSON.stringify(raw.toolCalls)) as ResultRecord['reply']['toolCalls'])
      : NO_TOOL_CALLS;
  const content = raw.content ? (JSON.parse(JSON.stringify(raw.content)) as ResultRecord['reply']['content']) : null;
  const usage = raw.usage ? copyUsage(raw.usage) : null;
  const providerMetadata = raw.providerMetadata
    ? (JSON.parse(JSON.stringify(raw.providerMetadata)) as JsonObject)
    : null;
  return {
    callId: raw.callId,
    text: raw.text,
    reasoning: raw.reasoning ?? null,
    toolCalls,
    content,
    finishReason: raw.finishReason ?? null,
    usage,
    providerMetadata,
  };
}

/** Freeze a reply `copyReply` made: its own fields, and all of what holds more than strings. */
export function freezeReply(reply: ResultRecord['reply']): ResultRecord['reply'] {
  if (reply.toolCalls.length > 0) freezeDeep(reply.toolCalls);
  else Object.freeze(reply.toolCalls);
  if (reply.content) freezeDeep(reply.content);
  if (reply.usage) Object.freeze(reply.usage);
  if (reply.providerMetadata) freezeDeep(reply.providerMetadata);
  return Object.freeze(reply);
}

/** A stored reply as the interpreter receives it (the inverse of {@link copyReply}). */
export function toModelReply(reply: ResultRecord['reply']): ModelReply {
  // Built field by field (no spreads): this runs once per step.
  const out: { -readonly [K in keyof ModelReply]: ModelReply[K] } = {
    callId: reply.callId,
    text: reply.text,
    reasoning: reply.reasoning,
    toolCalls: reply.toolCalls,
  };
  if (reply.content) out.content = reply.content;
  if (reply.finishReason) out.finishReason = reply.finishReason;
  if (reply.usage) out.usage = reply.usage;
  if (reply.providerMetadata) out.providerMetadata = reply.providerMetadata;
  return out;
}

/** The four known counts of a usage, nothing else (a provider object may carry more). */
export function copyUsage(u: Usage): Usage {
  return {
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    ...(u.cachedInputTokens === undefined ? {} : { cachedInputTokens: u.cachedInputTokens }),
    ...(u.reasoningTokens === undefined ? {} : { reasoningTokens: u.reasoningTokens }),
  };
}

/** A frozen outcome the library makes itself (nothing reported completion, nothing truncated). */
export function plainOutcome(
  status: ActionOutcome['status'],
  observation: string,
  observationIsSynthetic = false,
): ActionOutcome {
  return freezeOutcome({
    status,
    observation,
    observationIsSynthetic,
    envReportedCompletion: false,
    observationTruncatedChars: 0,
  });
}

export function freezeOutcome(o: ActionOutcome): ActionOutcome {
  return Object.freeze({
    status: o.status,
    observation: o.observation,
    observationIsSynthetic: o.observationIsSynthetic,
    envReportedCompletion: o.envReportedCompletion,
    observationTruncatedChars: o.observationTruncatedChars,
  });
}

export function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value) as JsonValue[]) freezeDeep(v);
  }
  return value;
}

/**
 * A key the reply's kind does not take: refused rather than ignored, so a misspelt `arguments`
 * cannot approve what the model proposed when the person meant to change it.
 */
function unknownReplyKeys(reply: InputReply): string | null {
  const field = INPUT_REPLY_TEXT_FIELD[reply.kind];
  const extra = Object.keys(reply).filter(
    (k) => k !== 'kind' && k !== 'resultId' && k !== field && !(k === 'arguments' && reply.kind === 'approve'),
  );
  return extra.length === 0 ? null : `a ${reply.kind} reply takes no ${extra.map((k) => JSON.stringify(k)).join(', ')}`;
}

/**
 * A plain copy of `input`, read once, that answers the log's open request; else
 * `InvalidInputError` (saying what was expected). The copy is what is checked, stored and
 * carried out, so a getter cannot show one reply to the check and another to the log.
 */
export function checkReply(runId: string, input: InputReply, view: RunLogView): InputReply {
  let copy: unknown;
  try {
    const shape = inputReplyProblem(input);
    if (shape !== null) throw new InvalidInputError(runId, shape);
    copy = JSON.parse(JSON.stringify(input));
  } catch (e) {
    throw e instanceof InvalidInputError
      ? e
      : new InvalidInputError(runId, `the reply could not be read: ${describeError(e)}`);
  }
  const shape = inputReplyProblem(copy) ?? unknownReplyKeys(copy as InputReply);
  if (shape !== null) throw new InvalidInputError(runId, shape);
  const reply = freezeDeep(copy as InputReply);
  const open = view.openRequests ?? (view.pending ? [view.pending] : []);
  const mismatch = replyMismatch(reply, open, view.state === 'ended');
  if (mismatch !== null) throw new InvalidInputError(runId, mismatch);
  return reply;
}
