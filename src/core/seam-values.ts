/**
 * What the loop does to values that cross a seam: copies of replies into their stored form,
 * frozen outcomes and records, so no seam can change what the run goes on with.
 * @module
 */
import type { ActionOutcome, JsonValue, ModelReply, ResultRecord } from './types.ts';

export function isThenable(v: unknown): v is Promise<void> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** A checked reply, copied into plain stored form: later changes by the caller reach nothing. */
export function copyReply(raw: ModelReply): ResultRecord['reply'] {
  const toolCalls = raw.toolCalls && raw.toolCalls.length > 0 ? (JSON.parse(JSON.stringify(raw.toolCalls)) as ResultRecord['reply']['toolCalls']) : [];
  const content = raw.content ? (JSON.parse(JSON.stringify(raw.content)) as ResultRecord['reply']['content']) : null;
  return { callId: raw.callId, text: raw.text, reasoning: raw.reasoning ?? null, toolCalls, content };
}

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
