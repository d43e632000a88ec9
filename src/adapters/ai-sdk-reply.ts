/**
 * AI SDK results → `ModelReply`: content parts (from `doGenerate`, or gathered from `doStream`
 * parts), the unified finish reason (V2 a string, V3/V4 `{ unified, raw }`), usage (V2 flat,
 * V3/V4 nested) and provider metadata. Pure functions over `unknown`: a provider's result is
 * read defensively, never trusted to match its types.
 * @module
 */
import { jsonProblem, MAX_JSON_DEPTH } from '../core/internal-entry.ts';
import type { ContentBlock, FinishReason, JsonObject, ModelReply, ToolCallRequest, Usage } from '../core/index.ts';
import { providerKey } from './ai-sdk-prompt.ts';
import type { AiSdkOpaqueData, AiSdkProviderOptions } from './ai-sdk-prompt.ts';
import { modelReply } from './model-reply.ts';
import { parseArguments } from './tool-interpreter.ts';

/** Larger provider metadata is not kept with the reply (it lands in every result record). */
export const MAX_PROVIDER_METADATA_CHARS = 4_096;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A JSON copy (drops `undefined` fields, which records cannot hold); null when not JSON, or nested
 * too deep for a record (it would end up in an opaque block or the reply: core would refuse the reply).
 * Room is left for the levels the copy is nested under (`content[i].data.providerOptions`).
 */
function jsonObject(v: unknown): JsonObject | null {
  if (!isRecord(v)) return null;
  try {
    const copy = JSON.parse(JSON.stringify(v)) as unknown;
    return isRecord(copy) && jsonProblem(copy, '', MAX_JSON_DEPTH - 4) === null ? (copy as JsonObject) : null;
  } catch {
    return null;
  }
}

const FINISH: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  'tool-calls': 'tool_calls',
  'content-filter': 'content_filter',
  error: 'error',
};

/** The unified finish reason (a V2 string or a V3/V4 `{ unified }`) as one of the six; `other` for the rest. */
export function finishReasonOf(v: unknown): FinishReason | undefined {
  const unified = isRecord(v) ? v['unified'] : v;
  if (typeof unified !== 'string') return undefined;
  // Own keys only: `constructor` or `__proto__` from a provider must not reach the reply as a value.
  return Object.hasOwn(FINISH, unified) ? (FINISH[unified] as FinishReason) : 'other';
}

const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;

/**
 * Usage, nested (V3/V4: `inputTokens.total`, `.cacheRead`,
 * `outputTokens.reasoning`) or flat (V2); undefined when no count was reported.
 */
export function usageOf(v: unknown): Usage | undefined {
  if (!isRecord(v)) return undefined;
  const nested = isRecord(v['inputTokens']) || isRecord(v['outputTokens']);
  const input = isRecord(v['inputTokens']) ? v['inputTokens'] : {};
  const output = isRecord(v['outputTokens']) ? v['outputTokens'] : {};
  const inputTokens = count(nested ? input['total'] : v['inputTokens']);
  const outputTokens = count(nested ? output['total'] : v['outputTokens']);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  const cached = count(nested ? input['cacheRead'] : v['cachedInputTokens']);
  const reasoning = count(nested ? output['reasoning'] : v['reasoningTokens']);
  return {
    inputTokens: inputTokens ?? 0,
    outputTokens: outputTokens ?? 0,
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}

/** The provider metadata as a JSON object, or undefined when absent, empty or too large to keep. */
export function metadataOf(v: unknown): JsonObject | undefined {
  const json = jsonObject(v);
  if (json === null || Object.keys(json).length === 0) return undefined;
  return JSON.stringify(json).length <= MAX_PROVIDER_METADATA_CHARS ? json : undefined;
}

/** Is this metadata nothing but `{ [key]: { signature } }`, i.e. a plain signed reasoning block? */
function signatureOnly(md: JsonObject, key: string): string | undefined | null {
  const keys = Object.keys(md);
  if (keys.length === 0) return undefined;
  const inner = md[key];
  if (keys.length !== 1 || !isRecord(inner)) return null;
  const innerKeys = Object.keys(inner);
  if (innerKeys.length === 0) return undefined;
  return innerKeys.length === 1 && typeof inner['signature'] === 'string' ? inner['signature'] : null;
}

function opaque(provider: string, data: AiSdkOpaqueData): ContentBlock {
  return { type: 'opaque', provider, data: data as unknown as JsonObject };
}

/**
 * One content part as blocks. Reasoning whose only metadata is a signature under the model's
 * provider key is a `reasoning` block; any other metadata (redacted or encrypted reasoning, a
 * tool call's thought signature) becomes an `opaque` block that goes back verbatim. Sources,
 * files and provider-executed tools are not part of the loop's turn and are dropped.
 */
export function blocksOfPart(part: unknown, provider: string): ContentBlock[] {
  if (!isRecord(part)) return [];
  const md = jsonObject(part['providerMetadata']) ?? {};
  if (part['type'] === 'text' && typeof part['text'] === 'string')
    return part['text'] === '' ? [] : [{ type: 'text', text: part['text'] }];
  if (part['type'] === 'reasoning' && typeof part['text'] === 'string') {
    const signature = signatureOnly(md, providerKey(provider));
    if (signature === null)
      return [opaque(provider, { part: 'reasoning', text: part['text'], providerOptions: md as AiSdkProviderOptions })];
    if (part['text'] === '' && signature === undefined) return [];
    return [
      signature === undefined
        ? { type: 'reasoning', text: part['text'] }
        : { type: 'reasoning', text: part['text'], signature },
    ];
  }
  if (
    part['type'] === 'tool-call' &&
    part['providerExecuted'] !== true &&
    typeof part['toolCallId'] === 'string' &&
    typeof part['toolName'] === 'string'
  ) {
    const input = typeof part['input'] === 'string' ? part['input'] : JSON.stringify(part['input'] ?? {});
    const call: ContentBlock = {
      type: 'tool_call',
      id: part['toolCallId'],
      name: part['toolName'],
      arguments: parseArguments(input),
    };
    if (Object.keys(md).length === 0) return [call];
    return [
      call,
      opaque(provider, {
        part: 'tool-call',
        toolCallId: part['toolCallId'],
        providerOptions: md as AiSdkProviderOptions,
      }),
    ];
  }
  return [];
}

/** What a generate result (or a finished stream) says, as the adapter reads it. */
export type AiSdkTurn = {
  readonly content: readonly unknown[];
  readonly finishReason: unknown;
  readonly usage: unknown;
  readonly providerMetadata: unknown;
  readonly responseId: unknown;
};

/** Assemble the reply: text and reasoning joined in order, tool calls, content as the provider returned it. */
export function replyOfTurn(turn: AiSdkTurn, provider: string): ModelReply {
  const content = turn.content.flatMap((p) => blocksOfPart(p, provider));
  const text = content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const reasoning = turn.content
    .flatMap((p) => (isRecord(p) && p['type'] === 'reasoning' && typeof p['text'] === 'string' ? [p['text']] : []))
    .join('');
  const toolCalls: ToolCallRequest[] = content.flatMap((b) =>
    b.type === 'tool_call' ? [{ id: b.id, name: b.name, arguments: b.arguments }] : [],
  );
  return modelReply({
    id: turn.responseId,
    text,
    reasoning,
    toolCalls,
    content,
    finishReason: finishReasonOf(turn.finishReason),
    usage: usageOf(turn.usage),
    providerMetadata: metadataOf(turn.providerMetadata),
  });
}
