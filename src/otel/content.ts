/**
 * Content as the GenAI semantic conventions record it on spans (JSON strings): the messages a model
 * call was given, its reply, a tool's arguments and result. Written only for a sink built with
 * `captureContent: true` (docs/decisions/0079-otel-sink.md#content).
 * @module
 */
import type { Action, ContentBlock, FinishReason, JsonValue, Message, StepRecord } from '../core/index.ts';

/** One part of a message, in the conventions' shape (`text`, `reasoning`, `tool_call`, `tool_call_response`). */
type Part = { readonly type: string; readonly [key: string]: JsonValue | undefined };
type OutputMessage = { readonly role: 'assistant'; readonly parts: readonly Part[]; readonly finish_reason: string };

function partOf(block: ContentBlock): Part {
  switch (block.type) {
    case 'text':
      return { type: 'text', content: block.text };
    case 'reasoning':
      return { type: 'reasoning', content: block.text };
    case 'tool_call':
      return { type: 'tool_call', id: block.id, name: block.name, arguments: block.arguments };
    case 'tool_result':
      // `response`, as the conventions' JSON schema requires; some of their examples once said `result`
      // (fixed upstream: open-telemetry/semantic-conventions-genai#323).
      return { type: 'tool_call_response', id: block.toolCallId, response: block.text };
    case 'opaque':
      return { type: 'opaque', provider: block.provider };
  }
}

/** `gen_ai.input.messages`: the messages the model was given, in order. */
export function inputMessagesJson(messages: readonly Message[]): string {
  return JSON.stringify(messages.map((m) => ({ role: m.role, parts: m.content.map(partOf) })));
}

/**
 * `gen_ai.output.messages`: the model's reply as its step kept it — the content its decision put in
 * the history when there is some (native tool calls included), else the reply's reasoning and text.
 */
export function outputMessagesJson(step: StepRecord): string | null {
  let parts: Part[];
  if (step.historyContent && step.historyContent.length > 0) parts = step.historyContent.map(partOf);
  else {
    parts = [];
    if (step.reasoning) parts.push({ type: 'reasoning', content: step.reasoning });
    if (step.modelText !== null) parts.push({ type: 'text', content: step.modelText });
  }
  if (parts.length === 0) return null;
  const message: OutputMessage = { role: 'assistant', parts, finish_reason: outputFinishReason(step.finishReason) };
  return JSON.stringify([message]);
}

/** The conventions' finish reasons name a tool call `tool_call`; PolyLoop's `tool_calls`. */
export function outputFinishReason(reason: FinishReason | null | undefined): string {
  if (reason === 'tool_calls') return 'tool_call';
  return reason ?? 'stop';
}

/** `gen_ai.tool.call.arguments`: a tool call's arguments, a code action's source. */
export function argumentsJson(action: Action): string {
  return action.kind === 'tool_call' ? JSON.stringify(action.arguments) : JSON.stringify({ source: action.source });
}
