/**
 * The options every model adapter over HTTP shares, and what it makes of them when it is built:
 * the checks (a model id, a key for the provider's own endpoint, no body field the adapter writes
 * itself, where a misplaced request field belongs) and the one POST per call to the endpoint.
 * @module
 */
import { InvalidRequestError } from '../core/index.ts';
import type { JsonObject } from '../core/index.ts';
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { OptionHints, OptionKeys } from '../core/internal-entry.ts';
import { checkMaxResponseBytes, isJSONResponse, joinURL, malformed, postJSON, readJSON } from './http.ts';
import type { FetchLike, ModelProvider, PostedResponse } from './http.ts';

/**
 * The options `openAIModel` and `anthropicModel` share; each adds its own, and says what the
 * provider makes of these (the key's header, the endpoint's path, what `binding` becomes).
 */
export type HttpModelOptions = {
  /** The model id; reported in `params.model`. */
  readonly model: string;
  /**
   * The provider's API key; never reported in `params`. Required for the default `baseURL` (a missing
   * or blank key throws `InvalidRequestError` at construction); a proxy or local server may need none.
   */
  readonly apiKey?: string;
  /** Where the API is: the URL before the endpoint's own path. Default: the provider's. */
  readonly baseURL?: string;
  /** Default: the global `fetch`. Wrap it to add retries, logging or a proxy (the adapter never retries). */
  readonly fetch?: FetchLike;
  /** Extra request headers (not reported in `params`: they may hold secrets). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Stream the reply over SSE and report text deltas via `ModelCall.onDelta`, and reasoning deltas
   * as `'reasoning'` (as the reply's `reasoning` reads them). Default false.
   */
  readonly stream?: boolean;
  /** Where `modelBinding` goes: `'metadata'` (default: the request's metadata) or `'none'`. Never into the prompt. */
  readonly binding?: 'metadata' | 'none';
  /**
   * Extra request fields (`temperature`, …); reported in `params.body` as canonical JSON, since they
   * change the model's behaviour. A field the adapter writes itself throws a `TypeError`.
   */
  readonly body?: JsonObject;
  /**
   * The most bytes read from a response body, streamed or not, before the call fails with a
   * `ModelCallError` of kind `too_large` (the run ends `model_error`) and the body is cancelled.
   * Default 32 MiB (33 554 432). Not part of `params`: it changes no reply, only refuses a runaway one.
   */
  readonly maxResponseBytes?: number;
};

/** Every key of {@link HttpModelOptions}: an adapter's known options are these and its own. */
export const HTTP_MODEL_OPTIONS: OptionKeys<HttpModelOptions> = {
  model: true,
  apiKey: true,
  baseURL: true,
  fetch: true,
  headers: true,
  stream: true,
  binding: true,
  body: true,
  maxResponseBytes: true,
};

/** The hint for a provider request field given as an adapter option: it belongs in `body`. */
export function bodyFieldHints(fields: readonly string[]): OptionHints {
  return Object.fromEntries(
    fields.map((f) => [f, `a request field of the provider goes in \`body\` (\`body: { ${f}: … }\`)`]),
  );
}

/** A model id must be a non-empty string (it is the run's identity). */
export function checkModel(adapter: string, model: unknown): void {
  if (typeof model !== 'string' || model.trim() === '')
    throw new TypeError(`${adapter}: model must be a non-empty string, got ${JSON.stringify(model)}`);
}

/** What {@link checkApiKey} needs to know about an adapter's options. */
export type ApiKeyCheck = {
  /** The adapter's function name, leading the message (`openAIModel`). */
  readonly adapter: string;
  readonly apiKey: string | undefined;
  readonly baseURL: string | undefined;
  /** The provider's own endpoint, used when `baseURL` is absent. */
  readonly defaultBaseURL: string;
  /** The environment variable users usually read the key from, named in the message. */
  readonly envVar: string;
  /** Extra headers: a key already among them (any case) counts as given. */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** The header names that carry a key for this provider, lower case. */
  readonly keyHeaders: readonly string[];
};

/**
 * Refuse, at construction, a model for the provider's own endpoint without a key: every call would
 * fail with a 401 that a run reports only as `model_error`. A blank key (`process.env.X ?? ''`)
 * counts as none. Any other `baseURL` (a local server, a gateway) may need no key and is left alone.
 */
export function checkApiKey(c: ApiKeyCheck): void {
  const trim = (url: string): string => url.trim().replace(/\/+$/, '').toLowerCase();
  if (c.baseURL !== undefined && trim(c.baseURL) !== trim(c.defaultBaseURL)) return;
  if (c.apiKey !== undefined && c.apiKey.trim() !== '') return;
  if (Object.keys(c.headers ?? {}).some((h) => c.keyHeaders.includes(h.toLowerCase()))) return;
  const got = c.apiKey === undefined ? 'none was given' : 'it is empty';
  throw new InvalidRequestError(
    `${c.adapter}: apiKey is required for ${c.defaultBaseURL}, and ${got} ` +
      `(pass { apiKey: process.env.${c.envVar} } with ${c.envVar} set); a local server (baseURL) needs none`,
  );
}

/**
 * Refuse extra body fields the adapter writes itself: a silent override would break the protocol
 * (e.g. `stream` without the `stream` option), so a clear error at construction is better.
 */
export function checkExtraBody(adapter: string, body: object | undefined, owned: readonly string[]): void {
  const clash = Object.keys(body ?? {}).filter((k) => owned.includes(k));
  if (clash.length > 0)
    throw new TypeError(
      `${adapter}: body.${clash.join(', body.')} is written by the adapter; ` +
        'use its options (model, stream, binding, tools from the run) instead',
    );
}

/**
 * What an adapter tells {@link providerEndpoint} about itself and its provider: its options, and
 * the key's part as {@link checkApiKey} reads it.
 */
export type ProviderSpec<O extends HttpModelOptions> = Omit<ApiKeyCheck, 'apiKey' | 'baseURL' | 'headers'> & {
  readonly provider: ModelProvider;
  /** Every option the adapter takes: the shared ones and its own. */
  readonly knownOptions: OptionKeys<O>;
  /** Where a provider request field given as an option belongs ({@link bodyFieldHints}). */
  readonly hints: OptionHints;
  /** The adapter's checks of its own options, made right after the model id's. */
  readonly checkOwn?: (options: O) => void;
  /** The endpoint's path after the base URL (`chat/completions`). */
  readonly path: string;
  /** The headers a given `apiKey` is sent as. */
  readonly keyHeadersOf: (apiKey: string) => Readonly<Record<string, string>>;
  /** Headers every request sends, before the caller's own. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The request fields the adapter writes itself: `body` may not hold them. */
  readonly ownedBodyFields: readonly string[];
  /** The response header that carries the provider's request id. */
  readonly requestIdHeader: string;
};

/** How an adapter reads its provider's reply: a JSON body (a string says why it is malformed), or an SSE stream. */
export type ReplyReaders<T> = {
  readonly fromJSON: (raw: unknown) => T | string;
  readonly fromStream: (posted: PostedResponse) => Promise<T>;
};

/** The provider's endpoint, and one call's exchange with it. */
export type ProviderEndpoint = {
  readonly endpoint: string;
  /**
   * POST a request body and read the reply: as a stream when the adapter streams and the server
   * answers with one, else as JSON (a server may answer a stream request with JSON).
   */
  readonly exchange: <T>(body: unknown, signal: AbortSignal, read: ReplyReaders<T>) => Promise<T>;
};

/**
 * Check an adapter's options (no unknown key, then the model id, its own, the body and the key)
 * and build its exchange: the caller's headers after the provider's, the key's after both,
 * `accept: text/event-stream` when streaming. Throws at construction, never at the first call.
 */
export function providerEndpoint<O extends HttpModelOptions>(options: O, spec: ProviderSpec<O>): ProviderEndpoint {
  const { adapter, provider, defaultBaseURL, envVar, keyHeaders, requestIdHeader } = spec;
  checkOptionKeys(options, spec.knownOptions, adapter, { hints: spec.hints });
  checkModel(adapter, options.model);
  spec.checkOwn?.(options);
  checkExtraBody(adapter, options.body, spec.ownedBodyFields);
  checkApiKey({
    adapter,
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    defaultBaseURL,
    envVar,
    headers: options.headers,
    keyHeaders,
  });
  const url = joinURL(options.baseURL ?? defaultBaseURL, spec.path);
  const doFetch: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const maxResponseBytes = checkMaxResponseBytes(adapter, options.maxResponseBytes);
  const headers: Record<string, string> = { ...spec.headers, ...options.headers };
  if (options.apiKey !== undefined) Object.assign(headers, spec.keyHeadersOf(options.apiKey));
  if (options.stream) headers['accept'] = 'text/event-stream';
  return {
    endpoint: url,
    async exchange(body, signal, read) {
      const post = { provider, fetch: doFetch, url, headers, body, signal, requestIdHeader, maxResponseBytes };
      const posted = await postJSON(post);
      if (options.stream && !isJSONResponse(posted)) return read.fromStream(posted);
      const reply = read.fromJSON(await readJSON(posted, provider, signal));
      if (typeof reply === 'string') throw malformed(provider, posted, reply);
      return reply;
    },
  };
}
