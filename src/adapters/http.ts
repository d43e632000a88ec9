/**
 * The HTTP leg shared by the model adapters: one POST over `fetch`, no retries, and every
 * failure (HTTP status, network, malformed body, provider stream error) turned into a
 * {@link ModelCallError} carrying the status, the provider's error type and the request id.
 * Abort always propagates as `signal.reason`, untouched.
 * @module
 */
import { PolyLoopError } from '../core/index.ts';
import { cappedStream } from '../core/internal-entry.ts';
import { parseSSE } from './sse.ts';
import type { SSEEvent } from './sse.ts';

/** Which provider protocol an adapter speaks. */
export type ModelProvider = 'openai' | 'anthropic';

/** What went wrong in a model call (`too_large`: the response passed `maxResponseBytes`). */
export type ModelCallErrorKind = 'http' | 'network' | 'malformed_response' | 'stream' | 'too_large';

/** Default of every adapter's `maxResponseBytes`: 32 MiB, far above any reply, far below a process's memory. */
export const DEFAULT_MAX_RESPONSE_BYTES = 33_554_432;

/** The context a {@link ModelCallError} carries. */
export type ModelCallErrorInit = {
  readonly provider: ModelProvider;
  readonly kind: ModelCallErrorKind;
  /** HTTP status, `null` when no response arrived (network failure). */
  readonly status: number | null;
  /** The provider's error type (`error.type`, e.g. `invalid_request_error`), when it sent one. */
  readonly errorType: string | null;
  /** The provider's request id (`x-request-id` / `request-id` header or body), when present. */
  readonly requestId: string | null;
  readonly cause?: unknown;
};

/**
 * A model call failed: HTTP 4xx/5xx, network failure, a body that is not the documented JSON,
 * or an error event inside a stream. Not retried by the adapter (retries belong to the client
 * layer: wrap `fetch`). Check with {@link isModelCallError} across bundles.
 */
export class ModelCallError extends PolyLoopError {
  override readonly name = 'ModelCallError';
  /** Stable machine-readable code, the same for every kind. */
  declare readonly code: 'model_call';
  readonly provider: ModelProvider;
  readonly kind: ModelCallErrorKind;
  readonly status: number | null;
  readonly errorType: string | null;
  readonly requestId: string | null;

  constructor(message: string, init: ModelCallErrorInit) {
    const where = [
      init.status === null ? null : `status ${init.status}`,
      init.errorType,
      init.requestId && `request ${init.requestId}`,
    ]
      .filter((s): s is string => typeof s === 'string' && s !== '')
      .join(', ');
    super(
      'model_call',
      `${init.provider}: ${message}${where ? ` (${where})` : ''}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.provider = init.provider;
    this.kind = init.kind;
    this.status = init.status;
    this.errorType = init.errorType;
    this.requestId = init.requestId;
  }
}

/** True for a {@link ModelCallError}, also from another bundle or realm (checks `name` and `code`). */
export function isModelCallError(e: unknown): e is ModelCallError {
  if (typeof e !== 'object' || e === null) return false;
  const { name, code } = e as { name?: unknown; code?: unknown };
  return name === 'ModelCallError' && code === 'model_call';
}

/** A `fetch`-compatible function (the global one by default; wrap it to add retries or logging). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** One POST of a JSON body. */
export type PostJSONOptions = {
  readonly provider: ModelProvider;
  readonly fetch: FetchLike;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly signal: AbortSignal;
  /** Response header holding the provider's request id. */
  readonly requestIdHeader: string;
  /** The most bytes read from the response body before the call fails (`too_large`). */
  readonly maxResponseBytes: number;
};

/**
 * An accepted (2xx) response, its request id, and its body as it is read: bounded by
 * `maxResponseBytes` (read the body through this, never through `response`).
 */
export type PostedResponse = {
  readonly response: Response;
  readonly requestId: string | null;
  readonly body: ReadableStream<Uint8Array> | null;
};

/**
 * POST `body` as JSON. Resolves with a 2xx response; rejects with a {@link ModelCallError} on a
 * network failure or a non-2xx status (error body parsed for type and message), and with
 * `signal.reason` when aborted.
 */
export async function postJSON(opts: PostJSONOptions): Promise<PostedResponse> {
  opts.signal.throwIfAborted();
  let response: Response;
  try {
    response = await opts.fetch(opts.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...opts.headers },
      body: JSON.stringify(opts.body),
      signal: opts.signal,
    });
  } catch (e) {
    opts.signal.throwIfAborted();
    const detail =
      e instanceof Error ? `${e.message}${e.cause instanceof Error ? `: ${e.cause.message}` : ''}` : String(e);
    throw new ModelCallError(`network failure calling ${opts.url}: ${detail}`, {
      provider: opts.provider,
      kind: 'network',
      status: null,
      errorType: null,
      requestId: null,
      cause: e,
    });
  }
  const requestId = response.headers.get(opts.requestIdHeader);
  const posted = { response, requestId, body: bounded(response, opts.provider, requestId, opts.maxResponseBytes) };
  if (response.ok) return posted;
  const text = await readText(posted, opts.signal, opts.provider);
  const { type, message } = parseErrorBody(text);
  throw new ModelCallError(message ?? `HTTP ${response.status} ${response.statusText}`.trim(), {
    provider: opts.provider,
    kind: 'http',
    status: response.status,
    errorType: type,
    requestId: requestId ?? bodyRequestId(text),
  });
}

/** Read and parse a JSON body; a body that is not JSON rejects with a `malformed_response` error. */
export async function readJSON(posted: PostedResponse, provider: ModelProvider, signal: AbortSignal): Promise<unknown> {
  const text = await readText(posted, signal, provider);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw malformed(provider, posted, `response body is not JSON: ${JSON.stringify(text.slice(0, 200))}`, e);
  }
}

/** A `malformed_response` error for a body that parsed but is not the documented shape. */
export function malformed(
  provider: ModelProvider,
  posted: PostedResponse,
  message: string,
  cause?: unknown,
): ModelCallError {
  return postedError(posted, { provider, kind: 'malformed_response', message, cause });
}

/** How an accepted response failed: the {@link ModelCallError} fields it does not give itself. */
type PostedFailure = {
  readonly provider: ModelProvider;
  readonly kind: ModelCallErrorKind;
  readonly message: string;
  readonly errorType?: string | null;
  readonly cause?: unknown;
};

/** The {@link ModelCallError} of an accepted response: its status and request id, and what failed. */
function postedError(posted: PostedResponse, failure: PostedFailure): ModelCallError {
  const { provider, kind, message, cause } = failure;
  const { status } = posted.response;
  return new ModelCallError(message, {
    provider,
    kind,
    status,
    errorType: failure.errorType ?? null,
    requestId: posted.requestId,
    cause,
  });
}

/**
 * `response`'s body, failing with a `too_large` {@link ModelCallError} once more than `maxBytes`
 * have been read: the body is cancelled then, so the server sees the connection close and an
 * endless stream or a huge body never sits in memory.
 */
function bounded(
  response: Response,
  provider: ModelProvider,
  requestId: string | null,
  maxBytes: number,
): ReadableStream<Uint8Array> | null {
  if (response.body === null) return null;
  const tooLarge = (): ModelCallError =>
    new ModelCallError(`the response is larger than ${maxBytes} bytes (maxResponseBytes)`, {
      provider,
      kind: 'too_large',
      status: response.status,
      errorType: null,
      requestId,
    });
  // A failed read errors the stream with the same error.
  return cappedStream(response.body, { maxBytes, tooLarge });
}

async function readText(posted: PostedResponse, signal: AbortSignal, provider: ModelProvider): Promise<string> {
  if (posted.body === null) return '';
  const reader = posted.body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      parts.push(decoder.decode(chunk.value, { stream: true }));
    }
    parts.push(decoder.decode());
    return parts.join('');
  } catch (e) {
    throw brokeOff(posted, { provider, signal, what: 'failed reading the response body', cause: e });
  } finally {
    reader.releaseLock();
  }
}

/**
 * `maxResponseBytes` as given: a positive safe integer, else a `TypeError` naming the adapter.
 * Default {@link DEFAULT_MAX_RESPONSE_BYTES}.
 */
export function checkMaxResponseBytes(adapter: string, v: unknown): number {
  if (v === undefined) return DEFAULT_MAX_RESPONSE_BYTES;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  throw new TypeError(`${adapter}: maxResponseBytes must be a positive integer, got ${JSON.stringify(v) ?? String(v)}`);
}

/**
 * Both providers put `{ error: { type, message } }` in error bodies (OpenAI: also `code`;
 * Anthropic: a top-level `type: "error"` and `request_id`).
 */
export function parseErrorBody(text: string): { readonly type: string | null; readonly message: string | null } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { type: null, message: text.trim() === '' ? null : text.trim().slice(0, 500) };
  }
  const error = isRecord(body) ? body['error'] : undefined;
  if (!isRecord(error)) return { type: null, message: null };
  const type =
    typeof error['type'] === 'string' ? error['type'] : typeof error['code'] === 'string' ? error['code'] : null;
  return { type, message: typeof error['message'] === 'string' ? error['message'] : null };
}

function bodyRequestId(text: string): string | null {
  try {
    const body: unknown = JSON.parse(text);
    return isRecord(body) && typeof body['request_id'] === 'string' ? body['request_id'] : null;
  } catch {
    return null;
  }
}

/**
 * Whether a response to a streaming request is a stream. A server that ignores `stream: true`
 * answers with one JSON body; the adapters then read it as such instead of finding no events.
 */
export function isJSONResponse(posted: PostedResponse): boolean {
  return (posted.response.headers.get('content-type') ?? '').toLowerCase().includes('application/json');
}

/**
 * A token count as a provider reports it: a non-negative safe
 * integer, else `undefined` (never a value core would refuse).
 */
export function tokenCount(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** A non-null, non-array object. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Join a base URL and a path without doubling or dropping the slash. */
export function joinURL(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/**
 * The SSE events of a streaming response. A body that breaks off mid-stream rejects with a
 * `network` {@link ModelCallError}; abort rejects with `signal.reason`.
 */
export async function* readEvents(
  posted: PostedResponse,
  provider: ModelProvider,
  signal: AbortSignal,
): AsyncGenerator<SSEEvent> {
  const body = posted.body;
  if (body === null) throw malformed(provider, posted, 'streaming response has no body');
  try {
    yield* parseSSE(body, signal);
  } catch (e) {
    throw brokeOff(posted, { provider, signal, what: 'the stream broke off', cause: e });
  }
}

/**
 * What a body that failed while read rejects with: `signal.reason` when aborted, a
 * {@link ModelCallError} as it is (`too_large` from the bounded body), else a `network` error.
 */
function brokeOff(
  posted: PostedResponse,
  read: {
    readonly provider: ModelProvider;
    readonly signal: AbortSignal;
    readonly what: string;
    readonly cause: unknown;
  },
): unknown {
  const { provider, signal, what, cause } = read;
  if (signal.aborted) return signal.reason;
  if (isModelCallError(cause)) return cause;
  const message = `${what}: ${cause instanceof Error ? cause.message : String(cause)}`;
  return postedError(posted, { provider, kind: 'network', message, cause });
}

/** Parse one stream event's data as a JSON object, or reject with a `malformed_response` error. */
export function eventJSON(posted: PostedResponse, provider: ModelProvider, data: string): Record<string, unknown> {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch (e) {
    throw malformed(provider, posted, `stream event is not JSON: ${JSON.stringify(data.slice(0, 200))}`, e);
  }
  if (!isRecord(chunk)) throw malformed(provider, posted, 'stream event is not a JSON object');
  return chunk;
}

/** The stream closed before the provider's end marker: the reply may be cut short, so it is a failure. */
export function streamEndedEarly(posted: PostedResponse, provider: ModelProvider, marker: string): ModelCallError {
  return postedError(posted, {
    provider,
    kind: 'network',
    message: `the stream ended before ${marker}; the reply may be incomplete`,
  });
}

/** A `stream` error from an error object a provider sent inside a stream. */
export function streamError(
  posted: PostedResponse,
  provider: ModelProvider,
  error: Record<string, unknown>,
): ModelCallError {
  const message = typeof error['message'] === 'string' ? error['message'] : 'error event in stream';
  return postedError(posted, {
    provider,
    kind: 'stream',
    message,
    errorType: typeof error['type'] === 'string' ? error['type'] : null,
  });
}
