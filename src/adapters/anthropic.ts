/**
 * `polyloop/adapters/anthropic` — a {@link ModelCaller} for the Anthropic Messages API over
 * `fetch`, with native tool use, signed thinking sent back verbatim, optional SSE streaming, and
 * the matching {@link anthropicToolInterpreter}.
 * @module
 */
import { canonicalJson } from '../core/internal-entry.ts';
import type { DecisionInterpreter, JsonObject, JsonValue, ModelCall, ModelCaller, ModelReply } from '../core/index.ts';
import { bodyFieldHints, HTTP_MODEL_OPTIONS, providerEndpoint } from './adapter-options.ts';
import type { HttpModelOptions, ProviderSpec } from './adapter-options.ts';
import {
  ANTHROPIC_VERSION,
  anthropicRequestBody,
  replyBlock,
  replyFromBlocks,
  replyFromMessage,
} from './anthropic-wire.ts';
import type { ReplyBlock } from './anthropic-wire.ts';
import { eventJSON, isRecord, malformed, readEvents, streamEndedEarly, streamError } from './http.ts';
import type { PostedResponse } from './http.ts';
import { nativeToolInterpreter, parseArguments } from './tool-interpreter.ts';

export { isModelCallError, ModelCallError } from './http.ts';
export type { FetchLike, ModelCallErrorKind, ModelProvider } from './http.ts';

/** Anthropic's own endpoint; the path ends before `/messages`. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';

/**
 * Options of {@link anthropicModel}: the shared ones ({@link HttpModelOptions}) and `maxTokens`.
 * For Anthropic, `model` is e.g. `claude-sonnet-4-5`; `apiKey` is sent as `x-api-key`; `baseURL`
 * ends before `/messages` (default {@link ANTHROPIC_BASE_URL}); `headers` may add `anthropic-beta`
 * or, in a browser, `anthropic-dangerous-direct-browser-access`; `stream` reports `thinking_delta`s
 * as `'reasoning'` (a `'\n'` between thinking blocks, as the reply's `reasoning` joins them);
 * `binding: 'metadata'` sends `binding.user_id` as `metadata.user_id`, the only metadata field the
 * API accepts (other keys are not sent); `body` takes `temperature`, `thinking`, `stop_sequences`, …
 * but not the fields the adapter writes (`model`, `max_tokens`, `messages`, `system`, `tools`,
 * `tool_choice`, `metadata`, `stream`). With tools, `tool_choice` is `{ type: 'auto',
 * disable_parallel_tool_use }`: `true` (one call per turn) unless the run takes several calls a
 * step (`parallelToolCalls` above 1 on the request), then `false`.
 */
export type AnthropicModelOptions = HttpModelOptions & {
  /** `max_tokens` of every call (required by the API). */
  readonly maxTokens: number;
};

/** The Messages API and {@link anthropicModel}'s options, as {@link providerEndpoint} reads them. */
const MESSAGES_API: ProviderSpec<AnthropicModelOptions> = {
  adapter: 'anthropicModel',
  provider: 'anthropic',
  knownOptions: { ...HTTP_MODEL_OPTIONS, maxTokens: true },
  // Messages API fields people give as options; they go in `body`.
  hints: bodyFieldHints(['temperature', 'top_p', 'top_k', 'thinking', 'stop_sequences']),
  checkOwn: ({ maxTokens }) => {
    if (!Number.isInteger(maxTokens) || maxTokens < 1)
      throw new TypeError(`anthropicModel: maxTokens must be a positive integer, got ${JSON.stringify(maxTokens)}`);
  },
  defaultBaseURL: ANTHROPIC_BASE_URL,
  path: 'messages',
  envVar: 'ANTHROPIC_API_KEY',
  keyHeaders: ['x-api-key', 'authorization'],
  keyHeadersOf: (apiKey) => ({ 'x-api-key': apiKey }),
  headers: { 'anthropic-version': ANTHROPIC_VERSION },
  ownedBodyFields: ['model', 'max_tokens', 'messages', 'system', 'tools', 'tool_choice', 'metadata', 'stream'],
  requestIdHeader: 'request-id',
};

/**
 * A model caller for the Anthropic Messages API. `params` reports
 * `{ provider, model, endpoint, maxTokens, stream, binding, body }` — never the key or headers.
 * Failures reject with {@link ModelCallError}; abort rejects with `signal.reason`; no retries.
 * Throws `InvalidRequestError` at once when no key is given for Anthropic's own endpoint.
 *
 * @example
 * const model = anthropicModel({ model: 'claude-sonnet-4-5', maxTokens: 1024, apiKey: process.env.ANTHROPIC_API_KEY });
 * const agent = defineAgent({ model, interpreter: anthropicToolInterpreter(), store, events, syntheticObservations });
 */
export function anthropicModel(options: AnthropicModelOptions): ModelCaller {
  const { endpoint, exchange } = providerEndpoint(options, MESSAGES_API);
  const params = Object.freeze({
    provider: 'anthropic',
    model: options.model,
    endpoint,
    maxTokens: options.maxTokens,
    stream: options.stream ?? false,
    binding: options.binding ?? 'metadata',
    body: options.body === undefined ? null : canonicalJson(options.body),
  });
  return {
    params,
    async call(call: ModelCall): Promise<ModelReply> {
      const body = { ...options.body, ...anthropicRequestBody(call, options) };
      return exchange(body, call.signal, { fromJSON: replyFromMessage, fromStream: (p) => readStream(p, call) });
    },
  };
}

type Building =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string | null }
  | { type: 'tool_use'; id: string; name: string; json: string; input: JsonValue }
  | { type: 'redacted_thinking'; raw: JsonObject }
  | { type: 'other' };

function startBlock(raw: unknown): Building | null {
  const b = replyBlock(raw);
  if (b === null) return null;
  // Streamed tool input arrives as `input_json_delta` fragments; the start carries `{}`.
  return b.type === 'tool_use' ? { type: 'tool_use', id: b.id, name: b.name, json: '', input: b.input } : { ...b };
}

function applyDelta(block: Building, delta: Record<string, unknown>, onDelta: ModelCall['onDelta']): void {
  const d = (key: string): string => (typeof delta[key] === 'string' ? delta[key] : '');
  if (block.type === 'text' && delta['type'] === 'text_delta') {
    block.text += d('text');
    if (d('text') !== '') onDelta?.(d('text'));
  } else if (block.type === 'thinking' && delta['type'] === 'thinking_delta') {
    block.thinking += d('thinking');
    if (d('thinking') !== '') onDelta?.(d('thinking'), 'reasoning');
  } else if (block.type === 'thinking' && delta['type'] === 'signature_delta')
    block.signature = (block.signature ?? '') + d('signature');
  else if (block.type === 'tool_use' && delta['type'] === 'input_json_delta') block.json += d('partial_json');
}

function finish(block: Building): ReplyBlock {
  if (block.type !== 'tool_use') return block;
  return {
    type: 'tool_use',
    id: block.id,
    name: block.name,
    input: block.json === '' ? block.input : parseArguments(block.json),
  };
}

type MessageState = {
  id: string | null;
  stopReason: string | null;
  stopSequence: string | null;
  usage: Record<string, unknown>;
};

/**
 * `message_start` brings the id and the first usage; `message_delta` the stop reason and usage
 * counts that are cumulative for the whole message, so a non-null one replaces the earlier one.
 */
function applyMessageEvent(state: MessageState, type: unknown, data: Record<string, unknown>): void {
  if (type === 'message_start' && isRecord(data['message'])) {
    const message = data['message'];
    if (typeof message['id'] === 'string') state.id = message['id'];
    if (isRecord(message['usage'])) state.usage = { ...message['usage'] };
  } else if (type === 'message_delta') {
    const delta = isRecord(data['delta']) ? data['delta'] : {};
    if (typeof delta['stop_reason'] === 'string') state.stopReason = delta['stop_reason'];
    if (typeof delta['stop_sequence'] === 'string') state.stopSequence = delta['stop_sequence'];
    const usage = isRecord(data['usage']) ? data['usage'] : {};
    for (const [key, value] of Object.entries(usage))
      if (value !== null && value !== undefined) state.usage[key] = value;
  }
}

async function readStream(posted: PostedResponse, call: ModelCall): Promise<ModelReply> {
  const state: MessageState = { id: null, stopReason: null, stopSequence: null, usage: {} };
  const blocks: Building[] = [];
  let stopped = false;
  let thinking = false;
  for await (const event of readEvents(posted, 'anthropic', call.signal)) {
    const data = eventJSON(posted, 'anthropic', event.data);
    const type = data['type'] ?? event.event;
    if (type === 'error') throw streamError(posted, 'anthropic', isRecord(data['error']) ? data['error'] : {});
    applyMessageEvent(state, type, data);
    if (type === 'message_stop') {
      stopped = true;
      break;
    }
    const index = typeof data['index'] === 'number' ? data['index'] : -1;
    if (type === 'content_block_start') {
      const block = startBlock(data['content_block']);
      if (block === null)
        throw malformed('anthropic', posted, `malformed content_block_start: ${event.data.slice(0, 200)}`);
      blocks[index] = block;
      if (block.type === 'thinking') {
        // The reply's reasoning joins the thinking blocks with '\n': the deltas add up to it.
        const shown = (thinking ? '\n' : '') + block.thinking;
        thinking = true;
        if (shown !== '') call.onDelta?.(shown, 'reasoning');
      }
    } else if (type === 'content_block_delta') {
      const block = blocks[index];
      if (block === undefined || !isRecord(data['delta']))
        throw malformed('anthropic', posted, `content_block_delta for unknown block ${index}`);
      applyDelta(block, data['delta'], call.onDelta);
    }
  }
  if (!stopped) throw streamEndedEarly(posted, 'anthropic', 'message_stop');
  const usage = Object.keys(state.usage).length > 0 ? state.usage : null;
  const stop = { stopReason: state.stopReason, stopSequence: state.stopSequence, usage };
  return replyFromBlocks(state.id, blocks.filter((b): b is Building => b !== undefined).map(finish), stop);
}

/**
 * The interpreter matching {@link anthropicModel}: one `tool_use` → `action` (with its id);
 * several → one `actions` decision when the run takes several calls a step (`parallelToolCalls`
 * above 1), else `invalid`; text only → `final`; a reply cut off at the token limit
 * (`finishReason: 'length'`), bad arguments, an unknown tool or an empty reply → `invalid` with a
 * corrective explanation. Decisions carry `historyContent`, so each `tool_use` is answered by a
 * `tool_result` next turn, all in one user message, in order.
 */
export function anthropicToolInterpreter(): DecisionInterpreter {
  return nativeToolInterpreter('anthropic-tools');
}
