/**
 * Anthropic Messages wire shapes: assembled messages → request body, response / stream events →
 * `ModelReply`. Pure functions; the HTTP leg is in `anthropic.ts`.
 * @module
 */
import type { ContentBlock, JsonObject, JsonValue, Message, ModelCall, ModelReply } from '../core/index.ts';
import { isRecord, tokenCount } from './http.ts';
import { storableArguments } from './tool-interpreter.ts';
import { countAt, finishReasonReader, modelReply, usageFromCounts } from './model-reply.ts';
import type { ReplyParts } from './model-reply.ts';

/** A text block on the wire. */
export type AnthropicTextBlock = { type: 'text'; text: string };
/** Signed thinking, sent back verbatim. */
export type AnthropicThinkingBlock = { type: 'thinking'; thinking: string; signature: string };
/** Thinking the API returns encrypted; it goes back verbatim (carried in an `opaque` block). */
export type AnthropicRedactedThinkingBlock = { type: 'redacted_thinking'; data: string };
/** A tool call made by the model. */
export type AnthropicToolUseBlock = { type: 'tool_use'; id: string; name: string; input: { [key: string]: JsonValue } };
/** The answer to a tool call. */
export type AnthropicToolResultBlock = { type: 'tool_result'; tool_use_id: string; content: string };
/** Any input content block the adapter builds. */
export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock;
/** One input message. */
export type AnthropicMessage = { role: 'user' | 'assistant'; content: AnthropicContentBlock[] };
/** A client tool definition. */
export type AnthropicTool = {
  name: string;
  description: string;
  input_schema: { type: 'object'; [key: string]: JsonValue };
};

/**
 * The request body the adapter sends (mutable arrays: a fresh wire object, assignable to the
 * official SDK's `MessageCreateParams`, which a type test checks).
 */
export type AnthropicRequest = {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: AnthropicTextBlock[];
  tools?: AnthropicTool[];
  tool_choice?: { type: 'auto'; disable_parallel_tool_use: boolean };
  metadata?: { user_id: string };
  stream?: boolean;
};

function toBlock(b: ContentBlock, role: 'user' | 'assistant'): AnthropicContentBlock | null {
  switch (b.type) {
    // The API refuses empty text blocks.
    case 'text':
      return b.text === '' ? null : { type: 'text', text: b.text };
    // Only signed thinking can go back; unsigned reasoning (another provider's) is dropped.
    case 'reasoning':
      return role === 'assistant' && b.signature !== undefined
        ? { type: 'thinking', thinking: b.text, signature: b.signature }
        : null;
    case 'tool_call': {
      const input = isRecord(b.arguments) ? { ...(b.arguments as { [key: string]: JsonValue }) } : {};
      return { type: 'tool_use', id: b.id, name: b.name, input };
    }
    case 'tool_result':
      return { type: 'tool_result', tool_use_id: b.toolCallId, content: b.text };
    // Our own provider state goes back as it came; another provider's is not part of the prompt.
    case 'opaque':
      return role === 'assistant' ? redactedThinking(b) : null;
  }
}

/** The `redacted_thinking` block an `opaque` block of this adapter carries, copied key for key; null for any other. */
function redactedThinking(b: Extract<ContentBlock, { type: 'opaque' }>): AnthropicRedactedThinkingBlock | null {
  const data = b.data;
  if (
    b.provider !== 'anthropic' ||
    !isRecord(data) ||
    data['type'] !== 'redacted_thinking' ||
    typeof data['data'] !== 'string'
  )
    return null;
  return { ...(data as AnthropicRedactedThinkingBlock) };
}

/**
 * Translate assembled messages: every `system` message's text, in order, goes to `system` (one
 * text block each, bytes unchanged); `tool_call` → `tool_use`; `tool_result` → `tool_result`
 * blocks in the user turn; signed `reasoning` → `thinking`. Empty messages are dropped and
 * consecutive messages of one role merged, as the API expects alternating turns.
 */
export function toAnthropicMessages(messages: readonly Message[]): {
  system: AnthropicTextBlock[];
  messages: AnthropicMessage[];
} {
  const system: AnthropicTextBlock[] = [];
  const out: AnthropicMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      for (const b of m.content) if (b.type === 'text' && b.text !== '') system.push({ type: 'text', text: b.text });
      continue;
    }
    const role = m.role;
    const blocks = m.content.map((b) => toBlock(b, role)).filter((b): b is AnthropicContentBlock => b !== null);
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return { system, messages: out };
}

/** The run's tools as client tools. */
export function toAnthropicTools(tools: ModelCall['tools']): AnthropicTool[] {
  return tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: { ...t.parameters, type: 'object' },
  }));
}

/** A content block as it arrives in a response (or is assembled from stream events). */
export type ReplyBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string | null }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly input: JsonValue }
  /** `raw` is the block exactly as it came, to go back verbatim. */
  | { readonly type: 'redacted_thinking'; readonly raw: JsonObject }
  | { readonly type: 'other' };

/** The `anthropic-version` header the wire shapes here follow. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** The options of `anthropicModel` that shape the request body. */
export type AnthropicBodyOptions = {
  readonly model: string;
  readonly maxTokens: number;
  readonly stream?: boolean;
  readonly binding?: 'metadata' | 'none';
};

/**
 * Build the Messages request body for one call (without `options.body` extras). Tests check
 * it against the provider's schema and the official SDK's types.
 */
export function anthropicRequestBody(call: ModelCall, options: AnthropicBodyOptions): AnthropicRequest {
  const { system, messages } = toAnthropicMessages(call.messages);
  const body: AnthropicRequest = { model: options.model, max_tokens: options.maxTokens, messages };
  if (system.length > 0) body.system = system;
  if (call.tools.length > 0) {
    body.tools = toAnthropicTools(call.tools);
    // Parallel tool use only for a run that takes several calls a step.
    body.tool_choice = { type: 'auto', disable_parallel_tool_use: (call.parallelToolCalls ?? 1) <= 1 };
  }
  const userId = call.binding['user_id'];
  if ((options.binding ?? 'metadata') === 'metadata' && userId !== undefined) body.metadata = { user_id: userId };
  if (options.stream) body.stream = true;
  return body;
}

/** Read one response content block; `null` when it is not the documented shape. */
export function replyBlock(raw: unknown): ReplyBlock | null {
  if (!isRecord(raw) || typeof raw['type'] !== 'string') return null;
  switch (raw['type']) {
    case 'text':
      return typeof raw['text'] === 'string' ? { type: 'text', text: raw['text'] } : null;
    case 'thinking':
      return typeof raw['thinking'] === 'string'
        ? {
            type: 'thinking',
            thinking: raw['thinking'],
            signature: typeof raw['signature'] === 'string' ? raw['signature'] : null,
          }
        : null;
    case 'tool_use':
      return typeof raw['id'] === 'string' && typeof raw['name'] === 'string'
        ? {
            type: 'tool_use',
            id: raw['id'],
            name: raw['name'],
            input: storableArguments((raw['input'] ?? {}) as JsonValue),
          }
        : null;
    case 'redacted_thinking':
      return typeof raw['data'] === 'string' ? { type: 'redacted_thinking', raw: raw as JsonObject } : null;
    default:
      // Server tool blocks, …: this adapter sends no server tools, so none should come (decision 0009).
      return { type: 'other' };
  }
}

/** How a message ended, as the API said it (`message` body, or `message_start` + `message_delta` merged). */
export type StopInfo = {
  readonly stopReason: string | null;
  readonly stopSequence: string | null;
  readonly usage: unknown;
};

/** `stop_reason` → the reply's `finishReason`; an unknown one is `other`, none is `undefined`. */
export const anthropicFinishReason = finishReasonReader({
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  // The reply was cut off too, by the context window instead of max_tokens.
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
  // A server-tool turn paused for the client to continue it: neither an end nor a truncation.
  pause_turn: 'other',
});

/**
 * `usage` → the reply's `usage`. `input_tokens` counts only the uncached part, so `inputTokens` adds
 * cache writes and cache reads: everything the model read, as OpenAI's `prompt_tokens` (decision
 * 0027). `cachedInputTokens` is the cache reads; `reasoningTokens` the thinking tokens when sent.
 */
export function anthropicUsage(raw: unknown): ModelReply['usage'] {
  const input = countAt(raw, 'input_tokens');
  const written = countAt(raw, 'cache_creation_input_tokens') ?? 0;
  const read = countAt(raw, 'cache_read_input_tokens');
  // Each count is safe, their sum need not be: an unsafe total is dropped as an unsafe count is (decision 0027).
  const inputTokens = input === undefined ? undefined : tokenCount(input + written + (read ?? 0));
  return usageFromCounts(
    inputTokens,
    countAt(raw, 'output_tokens'),
    read,
    countAt(raw, 'output_tokens_details', 'thinking_tokens'),
  );
}

/**
 * `{ anthropic: { stopReason, stopSequence, cacheCreationInputTokens, serviceTier } }`,
 * the fields the API sent; `undefined` when none.
 */
function providerMetadataOf(stop: StopInfo): JsonObject | undefined {
  const anthropic: { [key: string]: JsonValue } = {};
  if (stop.stopReason !== null) anthropic['stopReason'] = stop.stopReason;
  if (stop.stopSequence !== null) anthropic['stopSequence'] = stop.stopSequence;
  const usage = isRecord(stop.usage) ? stop.usage : {};
  const written = tokenCount(usage['cache_creation_input_tokens']);
  if (written !== undefined) anthropic['cacheCreationInputTokens'] = written;
  if (typeof usage['service_tier'] === 'string') anthropic['serviceTier'] = usage['service_tier'];
  return Object.keys(anthropic).length > 0 ? { anthropic } : undefined;
}

const NO_STOP: StopInfo = { stopReason: null, stopSequence: null, usage: null };

/**
 * Assemble a `ModelReply` from the turn's blocks, keeping the provider's block order in `content`
 * (`redacted_thinking` as an `opaque` block), with finish reason, usage and provider metadata.
 */
export function replyFromBlocks(
  id: string | null,
  blocks: readonly ReplyBlock[],
  stop: StopInfo = NO_STOP,
): ModelReply {
  const content: ContentBlock[] = [];
  const toolCalls: ReplyParts['toolCalls'] = [];
  const texts: string[] = [];
  const thoughts: string[] = [];
  for (const b of blocks) {
    if (b.type === 'text') {
      texts.push(b.text);
      if (b.text !== '') content.push({ type: 'text', text: b.text });
    } else if (b.type === 'thinking') {
      thoughts.push(b.thinking);
      // An empty signature (a stream that never sent its signature_delta) is no signature.
      content.push(
        b.signature === null || b.signature === ''
          ? { type: 'reasoning', text: b.thinking }
          : { type: 'reasoning', text: b.thinking, signature: b.signature },
      );
    } else if (b.type === 'tool_use') {
      toolCalls.push({ id: b.id, name: b.name, arguments: b.input });
      content.push({ type: 'tool_call', id: b.id, name: b.name, arguments: b.input });
    } else if (b.type === 'redacted_thinking') content.push({ type: 'opaque', provider: 'anthropic', data: b.raw });
  }
  return modelReply({
    id,
    text: texts.join(''),
    reasoning: thoughts.join('\n'),
    toolCalls,
    content,
    finishReason: anthropicFinishReason(stop.stopReason),
    usage: anthropicUsage(stop.usage),
    providerMetadata: providerMetadataOf(stop),
  });
}

/** Read a `message` body; an error message instead when it is not the documented shape. */
export function replyFromMessage(body: unknown): ModelReply | string {
  if (!isRecord(body)) return 'response is not a JSON object';
  if (!Array.isArray(body['content'])) return 'response has no content array';
  const blocks: ReplyBlock[] = [];
  for (const raw of body['content'] as unknown[]) {
    const b = replyBlock(raw);
    if (b === null) return `response content block is malformed: ${JSON.stringify(raw).slice(0, 200)}`;
    blocks.push(b);
  }
  const stop: StopInfo = {
    stopReason: typeof body['stop_reason'] === 'string' ? body['stop_reason'] : null,
    stopSequence: typeof body['stop_sequence'] === 'string' ? body['stop_sequence'] : null,
    usage: body['usage'],
  };
  return replyFromBlocks(typeof body['id'] === 'string' ? body['id'] : null, blocks, stop);
}
