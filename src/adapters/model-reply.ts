/**
 * The one place an adapter's `ModelReply` is assembled: each provider's reader finds the pieces
 * in its own wire format, and every reply takes the same shape from them.
 * @module
 */
import type { ContentBlock, ModelReply, ToolCallRequest } from '../core/index.ts';

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
