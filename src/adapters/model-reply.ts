/**
 * The one place an adapter's `ModelReply` is assembled: each provider's reader finds the pieces
 * in its own wire format, and every reply takes the same shape from them.
 * @module
 */
import type { ContentBlock, FinishReason, ModelReply, ToolCallRequest, Usage } from '../core/index.ts';
import { isRecord, tokenCount } from './http.ts';

/** What a provider's reply held, read from its wire format. */
export type ReplyParts = {
  /** The provider's response id; anything but a non-empty string is no id. */
  readonly id: unknown;
  readonly text: string;
  /** The reasoning text; empty is none. */
  readonly reasoning: string;
  readonly toolCalls: ToolCallRequest[];
  /** Every block in the provider's order. */
  readonly content: ContentBlock[];
  /** Undefined when the provider did not say. */
  readonly finishReason: ModelReply['finishReason'];
  readonly usage: ModelReply['usage'];
  readonly providerMetadata: ModelReply['providerMetadata'];
};

/**
 * The reply of `parts`: `callId` null without an id, `reasoning` null when empty, and finish
 * reason, usage and provider metadata only when the provider gave them (a record holds no
 * `undefined`).
 */
export function modelReply(parts: ReplyParts): ModelReply {
  const { id, finishReason, usage, providerMetadata } = parts;
  return {
    callId: typeof id === 'string' && id !== '' ? id : null,
    text: parts.text,
    reasoning: parts.reasoning === '' ? null : parts.reasoning,
    toolCalls: parts.toolCalls,
    content: parts.content,
    ...(finishReason === undefined ? {} : { finishReason }),
    ...(usage === undefined ? {} : { usage }),
    ...(providerMetadata === undefined ? {} : { providerMetadata }),
  };
}

/**
 * The reader of a provider's stop reason through `table` (the provider's reasons → the reply's):
 * an unknown reason is `other`, none is `undefined`.
 */
export function finishReasonReader(
  table: Readonly<Record<string, FinishReason>>,
): (raw: string | null | undefined) => FinishReason | undefined {
  return (raw) => {
    if (raw === null || raw === undefined) return undefined;
    return Object.hasOwn(table, raw) ? table[raw] : 'other';
  };
}

/** The token count at `path` in a provider's usage record (`'prompt_tokens_details', 'cached_tokens'`), if sound. */
export function countAt(raw: unknown, ...path: string[]): number | undefined {
  let v = raw;
  for (const key of path) v = isRecord(v) ? v[key] : undefined;
  return tokenCount(v);
}

/**
 * The reply's usage of the counts a provider reported: `undefined` unless both the input and the
 * output count are there; the cached and reasoning ones only when they are.
 */
export function usageFromCounts(
  input: number | undefined,
  output: number | undefined,
  cached: number | undefined,
  reasoning: number | undefined,
): Usage | undefined {
  if (input === undefined || output === undefined) return undefined;
  return {
    inputTokens: input,
    outputTokens: output,
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}
