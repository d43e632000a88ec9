/**
 * `polyloop/adapters/openai` — a {@link ModelCaller} for OpenAI-compatible Chat Completions over
 * `fetch` (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio via `baseURL`), with native tool
 * calling, optional SSE streaming, and the matching {@link openAIToolInterpreter}.
 * @module
 */
import { canonicalJson } from '../core/internal-entry.ts';
import type { DecisionInterpreter, JsonObject, ModelCall, ModelCaller, ModelReply } from '../core/index.ts';
import { bodyFieldHints, HTTP_MODEL_OPTIONS, providerEndpoint } from './adapter-options.ts';
import type { HttpModelOptions, ProviderSpec } from './adapter-options.ts';
import { eventJSON, isRecord, readEvents, streamEndedEarly, streamError } from './http.ts';
import type { PostedResponse } from './http.ts';
import {
  fallbackCallId,
  openAIRequestBody,
  partsFromCompletion,
  reasoningOf,
  replyFromParts,
  stringOrNull,
} from './openai-wire.ts';
import type { TurnParts } from './openai-wire.ts';
import { nativeToolInterpreter } from './tool-interpreter.ts';

export { isModelCallError, ModelCallError } from './http.ts';
export type { FetchLike, ModelCallErrorKind, ModelProvider } from './http.ts';

/** OpenAI's own endpoint; the path ends before `/chat/completions`. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * Options of {@link openAIModel}: the shared ones ({@link HttpModelOptions}) and `parallelToolCalls`.
 * For Chat Completions, `model` is e.g. `gpt-4.1-mini`; `apiKey` is sent as `Authorization: Bearer …`
 * (local servers may need none); `baseURL` ends before `/chat/completions`, e.g.
 * `http://127.0.0.1:8080/v1` (default {@link OPENAI_BASE_URL}); `stream` reports `reasoning_content`
 * / `reasoning` deltas as `'reasoning'` and sends `stream_options: { include_usage: true }` so the
 * reply still carries usage (`body: { stream_options: { include_usage: false } }` turns that off for
 * a server that refuses it); `binding: 'metadata'` fills the request's `metadata` map, only when the
 * binding is non-empty (api.openai.com accepts it only with `store: true`, see `body`); `body` takes
 * `temperature`, `max_completion_tokens`, `seed`, `store`, `tool_choice`, … but not the fields the
 * adapter writes (`model`, `messages`, `tools`, `parallel_tool_calls`, `metadata`, `stream`).
 */
export type OpenAIModelOptions = HttpModelOptions & {
  /**
   * `false` (default) sends `parallel_tool_calls` with the tools: `false` (one call per turn,
   * docs/design/conversation.md#native-tool-calls), or `true` when the run takes several calls a
   * step (`parallelToolCalls` above 1 on the request, docs/design/step.md#several-calls-a-step).
   * `'omit'` leaves the field out, for models or servers that refuse it; the run's
   * `parallelToolCalls` still decides whether a reply with several calls runs them or is invalid.
   */
  readonly parallelToolCalls?: false | 'omit';
};

/** Chat Completions and {@link openAIModel}'s options, as {@link providerEndpoint} reads them. */
const CHAT_COMPLETIONS: ProviderSpec<OpenAIModelOptions> = {
  adapter: 'openAIModel',
  provider: 'openai',
  knownOptions: { ...HTTP_MODEL_OPTIONS, parallelToolCalls: true },
  // Chat Completions fields people give as options; they go in `body`.
  hints: bodyFieldHints([
    'temperature',
    'max_completion_tokens',
    'max_tokens',
    'top_p',
    'seed',
    'store',
    'tool_choice',
    'stop',
  ]),
  defaultBaseURL: OPENAI_BASE_URL,
  path: 'chat/completions',
  envVar: 'OPENAI_API_KEY',
  keyHeaders: ['authorization'],
  keyHeadersOf: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  ownedBodyFields: ['model', 'messages', 'tools', 'parallel_tool_calls', 'metadata', 'stream'],
  requestIdHeader: 'x-request-id',
};

/** The request body with `options.body` extras; a caller's own `stream_options` fields win over ours. */
function requestBody(call: ModelCall, options: OpenAIModelOptions): Record<string, unknown> {
  const wire = openAIRequestBody(call, options);
  const extra = options.body?.['stream_options'];
  if (wire.stream_options && isRecord(extra))
    wire.stream_options = { ...wire.stream_options, ...(extra as JsonObject) };
  return { ...options.body, ...wire };
}

/**
 * A model caller for an OpenAI-compatible Chat Completions endpoint. `params` reports
 * `{ provider, model, endpoint, stream, binding, parallelToolCalls, body }` — never the API key or headers.
 * Failures reject with {@link ModelCallError}; abort rejects with `signal.reason`; no retries.
 * Throws `InvalidRequestError` at once when no key is given for OpenAI's own endpoint.
 *
 * @example
 * const model = openAIModel({ model: 'gpt-4.1-mini', apiKey: process.env.OPENAI_API_KEY });
 * const agent = defineAgent({ model, interpreter: openAIToolInterpreter(), store, events, syntheticObservations });
 */
export function openAIModel(options: OpenAIModelOptions): ModelCaller {
  const { endpoint, exchange } = providerEndpoint(options, CHAT_COMPLETIONS);
  const params = Object.freeze({
    provider: 'openai',
    model: options.model,
    endpoint,
    stream: options.stream ?? false,
    binding: options.binding ?? 'metadata',
    parallelToolCalls: options.parallelToolCalls ?? false,
    body: options.body === undefined ? null : canonicalJson(options.body),
  });
  return {
    params,
    async call(call: ModelCall): Promise<ModelReply> {
      const read = { fromJSON: partsFromCompletion, fromStream: (p: PostedResponse) => readStream(p, call) };
      return replyFromParts(await exchange(requestBody(call, options), call.signal, read));
    },
  };
}

type Accum = {
  id: string | null;
  text: string;
  reasoning: string;
  finishReason: string | null;
  usage: unknown;
  systemFingerprint: string | null;
  serviceTier: string | null;
  calls: Map<number, { id: string; name: string; arguments: string }>;
};

function applyChunk(acc: Accum, chunk: Record<string, unknown>, onDelta: ModelCall['onDelta']): void {
  if (acc.id === null && typeof chunk['id'] === 'string' && chunk['id'] !== '') acc.id = chunk['id'];
  // `include_usage`: every chunk has `usage: null` except the last, whose `choices` is empty.
  if (isRecord(chunk['usage'])) acc.usage = chunk['usage'];
  acc.systemFingerprint = stringOrNull(chunk['system_fingerprint']) ?? acc.systemFingerprint;
  acc.serviceTier = stringOrNull(chunk['service_tier']) ?? acc.serviceTier;
  const choices = Array.isArray(chunk['choices']) ? (chunk['choices'] as unknown[]) : [];
  for (const choice of choices) {
    if (!isRecord(choice) || (choice['index'] ?? 0) !== 0) continue;
    if (typeof choice['finish_reason'] === 'string') acc.finishReason = choice['finish_reason'];
    if (!isRecord(choice['delta'])) continue;
    const delta = choice['delta'];
    // Reasoning first: a server that sends both in one chunk thought before it wrote.
    const reasoning = reasoningOf(delta);
    acc.reasoning += reasoning;
    if (reasoning !== '') onDelta?.(reasoning, 'reasoning');
    if (typeof delta['content'] === 'string' && delta['content'] !== '') {
      acc.text += delta['content'];
      onDelta?.(delta['content']);
    }
    const calls = Array.isArray(delta['tool_calls']) ? (delta['tool_calls'] as unknown[]) : [];
    for (const c of calls) {
      if (!isRecord(c)) continue;
      const index = typeof c['index'] === 'number' ? c['index'] : acc.calls.size;
      const entry = acc.calls.get(index) ?? { id: '', name: '', arguments: '' };
      const fn = isRecord(c['function']) ? c['function'] : {};
      if (typeof c['id'] === 'string' && c['id'] !== '') entry.id = c['id'];
      if (typeof fn['name'] === 'string') entry.name += fn['name'];
      if (typeof fn['arguments'] === 'string') entry.arguments += fn['arguments'];
      acc.calls.set(index, entry);
    }
  }
}

async function readStream(posted: PostedResponse, call: ModelCall): Promise<TurnParts> {
  const acc: Accum = {
    id: null,
    text: '',
    reasoning: '',
    finishReason: null,
    usage: null,
    systemFingerprint: null,
    serviceTier: null,
    calls: new Map(),
  };
  let done = false;
  for await (const event of readEvents(posted, 'openai', call.signal)) {
    if (event.data === '[DONE]') {
      done = true;
      break;
    }
    const chunk = eventJSON(posted, 'openai', event.data);
    if (isRecord(chunk['error'])) throw streamError(posted, 'openai', chunk['error']);
    applyChunk(acc, chunk, call.onDelta);
  }
  // Servers end with `[DONE]`; a finish_reason is accepted too (some omit the marker).
  if (!done && acc.finishReason === null) throw streamEndedEarly(posted, 'openai', 'data: [DONE]');
  const toolCalls = [...acc.calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, c], i) => (c.id === '' ? { ...c, id: fallbackCallId(i) } : c));
  const { id, text, reasoning, finishReason, usage, systemFingerprint, serviceTier } = acc;
  return { id, text, reasoning, toolCalls, finishReason, usage, systemFingerprint, serviceTier };
}

/**
 * The interpreter matching {@link openAIModel}: one tool call → `action` (with the call's id);
 * several → one `actions` decision when the run takes several calls a step (`parallelToolCalls`
 * above 1), else `invalid`; text only → `final`; a reply cut off at the token limit
 * (`finishReason: 'length'`), bad arguments, an unknown tool or an empty reply → `invalid` with a
 * corrective explanation. Decisions carry `historyContent`, so the calls are answered as
 * `role: "tool"` messages on the next turn, one per call, in order.
 */
export function openAIToolInterpreter(): DecisionInterpreter {
  return nativeToolInterpreter('openai-tools');
}
