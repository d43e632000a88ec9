/**
 * OpenAI Chat Completions wire shapes: assembled messages → request body, response / stream
 * chunks → `ModelReply`. Pure functions; the HTTP leg is in `openai.ts`.
 * @module
 */
import type { ContentBlock, JsonObject, JsonValue, Message, ModelCall, ModelReply } from '../core/index.ts';
import { isRecord } from './http.ts';
import { countAt, finishReasonReader, modelReply, usageFromCounts } from './model-reply.ts';
import type { ReplyParts } from './model-reply.ts';
import { parseArguments } from './tool-interpreter.ts';

/** A function tool call on the wire (`arguments` is a JSON string). */
export type OpenAIToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

/** One Chat Completions input message, as the adapter builds it. */
export type OpenAIChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | { type: 'text'; text: string }[] }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAIToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A function tool definition on the wire. */
export type OpenAIFunctionTool = {
  type: 'function';
  function: { name: string; description: string; parameters: { [key: string]: JsonValue } };
};

/**
 * The request body the adapter sends (mutable arrays: it is a fresh wire object, and this way it
 * is assignable to the official SDK's `ChatCompletionCreateParams`, which a type test checks).
 */
export type OpenAIChatRequest = {
  model: string;
  messages: OpenAIChatMessage[];
  tools?: OpenAIFunctionTool[];
  parallel_tool_calls?: boolean;
  metadata?: { [key: string]: string };
  stream?: boolean;
  /** Sent with `stream`: `include_usage` asks for the final usage chunk. */
  stream_options?: { include_usage?: boolean; [key: string]: JsonValue | undefined };
};

function textOf(blocks: readonly ContentBlock[]): string[] {
  return blocks.flatMap((b) => (b.type === 'text' ? [b.text] : []));
}

function userContent(texts: readonly string[]): string | { type: 'text'; text: string }[] {
  return texts.length === 1 ? (texts[0] as string) : texts.map((text) => ({ type: 'text' as const, text }));
}

/** A tool call's arguments as the wire's JSON string; a raw (unparsable) string goes back as it came. */
function argumentsString(args: JsonValue): string {
  return typeof args === 'string' ? args : JSON.stringify(args);
}

function assistantMessage(blocks: readonly ContentBlock[]): OpenAIChatMessage {
  const texts = textOf(blocks);
  const calls: OpenAIToolCall[] = blocks.flatMap((b) =>
    b.type === 'tool_call'
      ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: argumentsString(b.arguments) } }]
      : [],
  );
  // Reasoning is not sent back: Chat Completions has no input field for it (DeepSeek rejects it).
  const content = texts.length > 0 ? texts.join('') : calls.length > 0 ? null : '';
  return calls.length > 0 ? { role: 'assistant', content, tool_calls: calls } : { role: 'assistant', content };
}

/**
 * Translate assembled messages: `system` stays a system message; an assistant's `tool_call`
 * blocks become `tool_calls`; a user message's `tool_result` blocks become `role: "tool"`
 * messages, in order, before the message's remaining text.
 */
export function toOpenAIMessages(messages: readonly Message[]): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      const texts = textOf(m.content);
      if (texts.length > 0) out.push({ role: 'system', content: texts.join('\n\n') });
    } else if (m.role === 'assistant') {
      out.push(assistantMessage(m.content));
    } else {
      for (const b of m.content)
        if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: b.toolCallId, content: b.text });
      const texts = textOf(m.content);
      if (texts.length > 0) out.push({ role: 'user', content: userContent(texts) });
    }
  }
  return out;
}

/** The run's tools as function tools. */
export function toOpenAITools(tools: ModelCall['tools']): OpenAIFunctionTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: { ...t.parameters } },
  }));
}

/** The pieces of one assistant turn, however they arrived (one body or many chunks). */
export type TurnParts = {
  readonly id: string | null;
  readonly text: string;
  readonly reasoning: string;
  readonly toolCalls: readonly { readonly id: string; readonly name: string; readonly arguments: string }[];
  /** The choice's `finish_reason` as sent; null or absent when none came. */
  readonly finishReason?: string | null;
  /** The response's `usage` object as sent (streamed: the final usage chunk's). */
  readonly usage?: unknown;
  readonly systemFingerprint?: string | null;
  readonly serviceTier?: string | null;
};

/** The options of `openAIModel` that shape the request body. */
export type OpenAIBodyOptions = {
  readonly model: string;
  readonly stream?: boolean;
  readonly binding?: 'metadata' | 'none';
  readonly parallelToolCalls?: false | 'omit';
};

/**
 * Build the Chat Completions request body for one call (without `options.body` extras). Tests
 * check it against the provider's schema and the official SDK's types.
 */
export function openAIRequestBody(call: ModelCall, options: OpenAIBodyOptions): OpenAIChatRequest {
  const body: OpenAIChatRequest = { model: options.model, messages: toOpenAIMessages(call.messages) };
  if (call.tools.length > 0) {
    body.tools = toOpenAITools(call.tools);
    // Parallel calls only for a run that takes several calls a step. Only valid together with `tools`.
    if (options.parallelToolCalls !== 'omit') body.parallel_tool_calls = (call.parallelToolCalls ?? 1) > 1;
  }
  if ((options.binding ?? 'metadata') === 'metadata' && Object.keys(call.binding).length > 0)
    body.metadata = { ...call.binding };
  if (options.stream) {
    body.stream = true;
    // Without it a stream reports no usage, and usage feeds `maxTotalTokens`.
    body.stream_options = { include_usage: true };
  }
  return body;
}

/** `finish_reason` → the reply's `finishReason`; an unknown one is `other`, none is `undefined`. */
export const openAIFinishReason = finishReasonReader({
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  // The deprecated functions API's name for a tool call.
  function_call: 'tool_calls',
  content_filter: 'content_filter',
});

/**
 * `usage` → the reply's `usage`: `prompt_tokens` (cached ones included) and `completion_tokens`
 * (reasoning included); the details when the server reports them. `undefined` when the two
 * counts are not both there (servers that report no usage count 0 toward a token budget).
 */
export function openAIUsage(raw: unknown): ModelReply['usage'] {
  const cached = countAt(raw, 'prompt_tokens_details', 'cached_tokens');
  const reasoning = countAt(raw, 'completion_tokens_details', 'reasoning_tokens');
  return usageFromCounts(countAt(raw, 'prompt_tokens'), countAt(raw, 'completion_tokens'), cached, reasoning);
}

/**
 * `{ openai: { finishReason, systemFingerprint, serviceTier } }`
 * with the fields the server sent; `undefined` when none.
 */
function providerMetadataOf(parts: TurnParts): JsonObject | undefined {
  const openai: { [key: string]: string } = {};
  if (typeof parts.finishReason === 'string') openai['finishReason'] = parts.finishReason;
  if (typeof parts.systemFingerprint === 'string') openai['systemFingerprint'] = parts.systemFingerprint;
  if (typeof parts.serviceTier === 'string') openai['serviceTier'] = parts.serviceTier;
  return Object.keys(openai).length > 0 ? { openai } : undefined;
}

/**
 * Assemble a `ModelReply` (with `content` in provider order: reasoning, text, tool calls), its
 * finish reason, usage and provider metadata
 * (docs/design/conversation.md#reply-metadata-and-token-budgets).
 */
export function replyFromParts(parts: TurnParts): ModelReply {
  const toolCalls: ReplyParts['toolCalls'] = parts.toolCalls.map((c) => ({
    id: c.id,
    name: c.name,
    arguments: parseArguments(c.arguments),
  }));
  const content: ContentBlock[] = [];
  if (parts.reasoning !== '') content.push({ type: 'reasoning', text: parts.reasoning });
  if (parts.text !== '') content.push({ type: 'text', text: parts.text });
  for (const c of toolCalls) content.push({ type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments });
  return modelReply({
    id: parts.id,
    text: parts.text,
    reasoning: parts.reasoning,
    toolCalls,
    content,
    finishReason: openAIFinishReason(parts.finishReason),
    usage: openAIUsage(parts.usage),
    providerMetadata: providerMetadataOf(parts),
  });
}

/**
 * Some OpenAI-compatible servers omit tool-call ids; history needs one to pair the call with its
 * result. Deterministic, so a re-interpreted reply gets the same id.
 */
export function fallbackCallId(index: number): string {
  return `call_${index}`;
}

/**
 * Reasoning as OpenAI-compatible servers report it (`reasoning_content`:
 * DeepSeek, vLLM; `reasoning`: Ollama, OpenRouter).
 */
export function reasoningOf(message: Record<string, unknown>): string {
  const r = message['reasoning_content'] ?? message['reasoning'];
  return typeof r === 'string' ? r : '';
}

/**
 * Read a `chat.completion` body (first choice; servers may return several). Returns an error
 * message instead of parts when the body is not the documented shape.
 */
export function partsFromCompletion(body: unknown): TurnParts | string {
  if (!isRecord(body)) return 'response is not a JSON object';
  const choices = body['choices'];
  if (!Array.isArray(choices) || choices.length === 0) return 'response has no choices';
  const first: unknown = choices.find((c) => isRecord(c) && c['index'] === 0) ?? choices[0];
  const message = isRecord(first) ? first['message'] : undefined;
  if (!isRecord(message)) return 'response choice has no message';
  const content = message['content'];
  const refusal = message['refusal'];
  const text = typeof content === 'string' ? content : typeof refusal === 'string' ? refusal : '';
  const rawCalls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
  const toolCalls: { id: string; name: string; arguments: string }[] = [];
  for (const c of rawCalls) {
    const fn = isRecord(c) ? c['function'] : undefined;
    if (!isRecord(c) || !isRecord(fn) || typeof fn['name'] !== 'string')
      return 'a tool call in the response has no function name';
    const args = fn['arguments'];
    const id = typeof c['id'] === 'string' && c['id'] !== '' ? c['id'] : fallbackCallId(toolCalls.length);
    toolCalls.push({ id, name: fn['name'], arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) });
  }
  return {
    id: typeof body['id'] === 'string' ? body['id'] : null,
    text,
    reasoning: reasoningOf(message),
    toolCalls,
    finishReason: isRecord(first) && typeof first['finish_reason'] === 'string' ? first['finish_reason'] : null,
    usage: body['usage'],
    systemFingerprint: stringOrNull(body['system_fingerprint']),
    serviceTier: stringOrNull(body['service_tier']),
  };
}

/** A string field, or null. */
export function stringOrNull(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}
