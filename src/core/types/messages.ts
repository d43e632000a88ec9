/**
 * What travels between the loop and a model: JSON values, content blocks, messages, tool calls
 * and the model's reply. Imports nothing (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */

/** A JSON value as it travels through records and tool arguments. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** A JSON object (tool arguments, JSON Schemas, parameter snapshots). */
export type JsonObject = { readonly [key: string]: JsonValue };

/** Who speaks a message. */
export type Role = 'system' | 'user' | 'assistant';

/** Plain text. Size metric: `text.length`. */
export type TextBlock = { readonly type: 'text'; readonly text: string };

/**
 * A native tool call made by the model (docs/design/conversation.md#native-tool-calls).
 * Size metric: `name.length + JSON.stringify(arguments).length`.
 */
export type ToolCallBlock = {
  readonly type: 'tool_call';
  readonly id: string;
  readonly name: string;
  readonly arguments: JsonValue;
};

/** The answer to a native tool call, sent back to the model. Size metric: `text.length`. */
export type ToolResultBlock = { readonly type: 'tool_result'; readonly toolCallId: string; readonly text: string };

/** Provider thinking that must be sent back verbatim. Size metric: `text.length`. */
export type ReasoningBlock = { readonly type: 'reasoning'; readonly text: string; readonly signature?: string };

/**
 * Provider state that must go back to the provider verbatim, e.g. Anthropic's redacted thinking
 * (docs/design/conversation.md#reply-metadata-and-token-budgets). Size metric: the JSON length of `data`.
 */
export type OpaqueBlock = { readonly type: 'opaque'; readonly provider: string; readonly data: JsonValue };

/** One block of message content. New branches are only ever added. */
export type ContentBlock = TextBlock | ToolCallBlock | ToolResultBlock | ReasoningBlock | OpaqueBlock;

/** A message of the assembled context. Content is always a sequence of blocks. */
export type Message = { readonly role: Role; readonly content: readonly ContentBlock[] };

/** A tool call as the model returned it. */
export type ToolCallRequest = { readonly id: string; readonly name: string; readonly arguments: JsonValue };

/** Why the model stopped: `length` means the reply was cut off at the token limit. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other';

/** The finish reasons, as a runtime list. */
export const FINISH_REASONS = [
  'stop',
  'length',
  'tool_calls',
  'content_filter',
  'error',
  'other',
] as const satisfies readonly FinishReason[];

/** Tokens one model call used, or a run used in total (summed over calls). */
export type Usage = {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens?: number;
  readonly reasoningTokens?: number;
};

/** What the model replied. `callId` is the provider's response id, never `''`. */
export type ModelReply = {
  readonly callId: string | null;
  readonly text: string;
  readonly reasoning: string | null;
  readonly toolCalls?: readonly ToolCallRequest[];
  readonly content?: readonly ContentBlock[];
  /** Why the model stopped. */
  readonly finishReason?: FinishReason;
  /** Tokens this call used; a reply without it counts 0 toward `maxTotalTokens`. */
  readonly usage?: Usage;
  /** Provider data kept with the result record. */
  readonly providerMetadata?: JsonObject;
};
