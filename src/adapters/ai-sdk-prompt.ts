/**
 * PolyLoop messages → an AI SDK language-model prompt (the subset `LanguageModelV2`, `V3` and `V4`
 * share), and the run's tools → function tools. Pure functions; the model call is in `ai-sdk.ts`.
 * @module
 */
import type { ContentBlock, JsonObject, JsonValue, Message, ModelToolSchema } from '../core/index.ts';

/** Provider options keyed by provider (`{ anthropic: { signature } }`): a JSON object of JSON objects. */
export type AiSdkProviderOptions = { [provider: string]: { [key: string]: JsonValue } };

type TextPart = { type: 'text'; text: string };
type ReasoningPart = { type: 'reasoning'; text: string; providerOptions?: AiSdkProviderOptions };
type ToolCallPart = {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: JsonValue;
  providerOptions?: AiSdkProviderOptions;
};
type ToolResultPart = {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: { type: 'text'; value: string };
};

/** One prompt message, in the shape every specification version accepts. */
export type AiSdkPromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: TextPart[] }
  | { role: 'assistant'; content: (TextPart | ReasoningPart | ToolCallPart)[] }
  | { role: 'tool'; content: ToolResultPart[] };

/** A function tool, in the shape every specification version accepts. */
export type AiSdkFunctionTool = { type: 'function'; name: string; description: string; inputSchema: JsonObject };

/**
 * The data of an `opaque` block this adapter writes: a content part the provider marked with
 * metadata that must go back verbatim (redacted thinking, encrypted reasoning, a tool call's
 * thought signature). `provider` of the block is the model's `provider` string.
 */
export type AiSdkOpaqueData =
  | { readonly part: 'reasoning'; readonly text: string; readonly providerOptions: AiSdkProviderOptions }
  | { readonly part: 'tool-call'; readonly toolCallId: string; readonly providerOptions: AiSdkProviderOptions };

/** The key a provider reads its options under: `anthropic.messages` → `anthropic`. */
export function providerKey(provider: string): string {
  return provider.split('.')[0] ?? provider;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An opaque block's data when this adapter, for this provider, wrote it; null otherwise. */
export function opaqueData(block: Extract<ContentBlock, { type: 'opaque' }>, provider: string): AiSdkOpaqueData | null {
  if (block.provider !== provider || !isRecord(block.data) || !isRecord(block.data['providerOptions'])) return null;
  const data = block.data as Record<string, unknown>;
  if (data['part'] === 'reasoning' && typeof data['text'] === 'string') return data as AiSdkOpaqueData;
  if (data['part'] === 'tool-call' && typeof data['toolCallId'] === 'string') return data as AiSdkOpaqueData;
  return null;
}

const textsOf = (blocks: readonly ContentBlock[]): string[] =>
  blocks.flatMap((b) => (b.type === 'text' && b.text !== '' ? [b.text] : []));

/**
 * A call's arguments as the prompt's `input` (an object). Arguments the model got wrong (raw text,
 * an array) go back as `{}`: providers reject a non-object input, and the tool result that
 * answers the call already quotes what was wrong.
 */
function inputOf(args: JsonValue): JsonValue {
  return isRecord(args) ? args : {};
}

function assistantParts(
  blocks: readonly ContentBlock[],
  provider: string,
): (TextPart | ReasoningPart | ToolCallPart)[] {
  const parts: (TextPart | ReasoningPart | ToolCallPart)[] = [];
  const key = providerKey(provider);
  for (const b of blocks) {
    if (b.type === 'text' && b.text !== '') parts.push({ type: 'text', text: b.text });
    else if (b.type === 'reasoning') {
      parts.push(
        b.signature === undefined
          ? { type: 'reasoning', text: b.text }
          : { type: 'reasoning', text: b.text, providerOptions: { [key]: { signature: b.signature } } },
      );
    } else if (b.type === 'tool_call')
      parts.push({ type: 'tool-call', toolCallId: b.id, toolName: b.name, input: inputOf(b.arguments) });
    else if (b.type === 'opaque') {
      // Another provider's state (or a shape we did not write) means nothing here: dropped.
      const data = opaqueData(b, provider);
      if (data?.part === 'reasoning')
        parts.push({ type: 'reasoning', text: data.text, providerOptions: data.providerOptions });
      if (data?.part === 'tool-call') {
        const call = parts.find((p): p is ToolCallPart => p.type === 'tool-call' && p.toolCallId === data.toolCallId);
        if (call) call.providerOptions = data.providerOptions;
      }
    }
  }
  return parts;
}

/**
 * Translate assembled messages. System messages become the prompt's leading system messages, in
 * their order (providers that take the system prompt out of band refuse one in mid-conversation);
 * an assistant turn keeps its blocks in order (reasoning with its signature in `providerOptions`
 * under the model's provider key, tool calls with an object `input`); a user turn's
 * `tool_result` blocks become one `tool` message before the turn's remaining text.
 */
export function toAiSdkPrompt(messages: readonly Message[], provider: string): AiSdkPromptMessage[] {
  const system: AiSdkPromptMessage[] = [];
  const rest: AiSdkPromptMessage[] = [];
  const toolNames = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'system') {
      const texts = textsOf(m.content);
      if (texts.length > 0) system.push({ role: 'system', content: texts.join('\n\n') });
    } else if (m.role === 'assistant') {
      for (const b of m.content) if (b.type === 'tool_call') toolNames.set(b.id, b.name);
      const content = assistantParts(m.content, provider);
      if (content.length > 0) rest.push({ role: 'assistant', content });
    } else {
      const results: ToolResultPart[] = m.content.flatMap((b) =>
        b.type === 'tool_result'
          ? [
              {
                type: 'tool-result' as const,
                toolCallId: b.toolCallId,
                toolName: toolNames.get(b.toolCallId) ?? '',
                output: { type: 'text' as const, value: b.text },
              },
            ]
          : [],
      );
      if (results.length > 0) rest.push({ role: 'tool', content: results });
      const texts = textsOf(m.content);
      if (texts.length > 0) rest.push({ role: 'user', content: texts.map((text) => ({ type: 'text', text })) });
    }
  }
  return [...system, ...rest];
}

/** The run's tools as function tools (`inputSchema` = the tool's parameters). */
export function toAiSdkTools(tools: readonly ModelToolSchema[]): AiSdkFunctionTool[] {
  return tools.map((t) => ({ type: 'function', name: t.name, description: t.description, inputSchema: t.parameters }));
}
