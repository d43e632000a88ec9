/**
 * What the loop does to values that cross a seam: copies of replies into their stored form,
 * frozen outcomes and records, so no seam can change what the run goes on with.
 * @module
 */
import type { ActionOutcome, JsonObject, JsonValue, ModelReply, ResultRecord, Usage } from './types.ts';

export function isThenable(v: unknown): v is Promise<void> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** A checked reply, copied into plain stored form: later changes by the caller reach nothing. */
export function copyReply(raw: ModelReply): ResultRecord['reply'] {
  const toolCalls = raw.toolCalls && raw.toolCalls.length > 0 ? (JSON.parse(JSON.stringify(raw.toolCalls)) as ResultRecord['reply']['toolCalls']) : [];
  const content = raw.content ? (JSON.parse(JSON.stringify(raw.content)) as ResultRecord['reply']['content']) : null;
  const usage = raw.usage ? copyUsage(raw.usage) : null;
  const providerMetadata = raw.providerMetadata ? (JSON.parse(JSON.stringify(raw.providerMetadata)) as JsonObject) : null;
  return { callId: raw.callId, text: raw.text, reasoning: raw.reasoning ?? null, toolCalls, content, finishReason: raw.finishReason ?? null, usage, providerMetadata };
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

/** `a + b`, count by count (an optional count appears when either side has it). */
export function addUsage(a: Usage, b: Usage | null | undefined): Usage {
  if (!b) return a;
  const opt = (k: 'cachedInputTokens' | 'reasoningTokens') => (a[k] === undefined && b[k] === undefined ? {} : { [k]: (a[k] ?? 0) + (b[k] ?? 0) });
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, ...opt('cachedInputTokens'), ...opt('reasoningTokens') };
}

/** No tokens yet. */
export const NO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0 });

export function freezeOutcome(o: ActionOutcome): ActionOutcome {
  return Object.freeze({ status: o.status, observation: o.observation, observationIsSynthetic: o.observationIsSynthetic, envReportedCompletion: o.envReportedCompletion, observationTruncatedChars: o.observationTruncatedChars });
}

export function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value) as JsonValue[]) freezeDeep(v);
  }
  return value;
}
