/**
 * Anthropic Messages wire shapes: assembled messages → request body, response / stream events →
 * `ModelReply`. Pure functions; the HTTP leg is in `anthropic.ts`.
 * @module
 */
import type { ContentBlock, JsonValue, Message, ModelReply, ModelToolSchema, ToolCallRequest } from '../core/index.ts';
import { isRecord } from './http.ts';

/** A text block on the wire. */
export type AnthropicTextBlock = { type: 'text'; text: string };
/** Signed thinking, sent back verbatim. */
export type AnthropicThinkingBlock = { type: 'thinking'; thinking: string; signature: string };
/** A tool call made by the model. */
export type AnthropicToolUseBlock = { type: 'tool_use'; id: string; name: string; input: { [key: string]: JsonValue } };
/** The answer to a tool call. */
export type AnthropicToolResultBlock = { type: 'tool_result'; tool_use_id: string; content: string };
/** Any input content block the adapter builds. */
export type AnthropicContentBlock = AnthropicTextBlock | AnthropicThinkingBlock | AnthropicToolUseBlock | AnthropicToolResultBlock;
/** One input message. */
export type AnthropicMessage = { role: 'user' | 'assistant'; content: AnthropicContentBlock[] };
/** A client tool definition. */
export type AnthropicTool = { name: string; description: string; input_schema: { type: 'object'; [key: string]: JsonValue } };

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
      return role === 'assistant' && b.signature !== undefined ? { type: 'thinking', thinking: b.text, signature: b.signature } : null;
    case 'tool_call': {
      const input = isRecord(b.arguments) ? { ...(b.arguments as { [key: string]: JsonValue }) } : {};
      return { type: 'tool_use', id: b.id, name: b.name, input };
    }
    case 'tool_result':
      return { type: 'tool_result', tool_use_id: b.toolCallId, content: b.text };
    // Another provider's state, or one this adapter does not send back yet: not part of the prompt.
    case 'opaque':
      return null;
  }
}

/**
 * Translate assembled messages: every `system` message's text, in order, goes to `system` (one
 * text block each, bytes unchanged); `tool_call` → `tool_use`; `tool_result` → `tool_result`
 * blocks in the user turn; signed `reasoning` → `thinking`. Empty messages are dropped and
 * consecutive messages of one role merged, as the API expects alternating turns.
 */
export function toAnthropicMessages(messages: readonly Message[]): { system: AnthropicTextBlock[]; messages: AnthropicMessage[] } {
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
export function toAnthropicTools(tools: readonly ModelToolSchema[]): AnthropicTool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: { ...t.parameters, type: 'object' } }));
}

/** A content block as it arrives in a response (or is assembled from stream events). */
export type ReplyBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string | null }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly input: JsonValue }
  | { readonly type: 'other' };

/** Read one response content block; `null` when it is not the documented shape. */
export function replyBlock(raw: unknown): ReplyBlock | null {
  if (!isRecord(raw) || typeof raw['type'] !== 'string') return null;
  switch (raw['type']) {
    case 'text':
      return typeof raw['text'] === 'string' ? { type: 'text', text: raw['text'] } : null;
    case 'thinking':
      return typeof raw['thinking'] === 'string'
        ? { type: 'thinking', thinking: raw['thinking'], signature: typeof raw['signature'] === 'string' ? raw['signature'] : null }
        : null;
    case 'tool_use':
      return typeof raw['id'] === 'string' && typeof raw['name'] === 'string'
        ? { type: 'tool_use', id: raw['id'], name: raw['name'], input: (raw['input'] ?? {}) as JsonValue }
        : null;
    default:
      // redacted_thinking, server tool blocks, …: not represented in v1 (see docs/decisions).
      return { type: 'other' };
  }
}

/** Assemble a `ModelReply` from the turn's blocks, keeping the provider's block order in `content`. */
export function replyFromBlocks(id: string | null, blocks: readonly ReplyBlock[]): ModelReply {
  const content: ContentBlock[] = [];
  const toolCalls: ToolCallRequest[] = [];
  const texts: string[] = [];
  const thoughts: string[] = [];
  for (const b of blocks) {
    if (b.type === 'text') {
      texts.push(b.text);
      if (b.text !== '') content.push({ type: 'text', text: b.text });
    } else if (b.type === 'thinking') {
      thoughts.push(b.thinking);
      // An empty signature (a stream that never sent its signature_delta) is no signature.
      content.push(b.signature === null || b.signature === '' ? { type: 'reasoning', text: b.thinking } : { type: 'reasoning', text: b.thinking, signature: b.signature });
    } else if (b.type === 'tool_use') {
      toolCalls.push({ id: b.id, name: b.name, arguments: b.input });
      content.push({ type: 'tool_call', id: b.id, name: b.name, arguments: b.input });
    }
  }
  const reasoning = thoughts.join('\n');
  return { callId: id === null || id === '' ? null : id, text: texts.join(''), reasoning: reasoning === '' ? null : reasoning, toolCalls, content };
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
  return replyFromBlocks(typeof body['id'] === 'string' ? body['id'] : null, blocks);
}
