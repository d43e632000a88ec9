/**
 * The checks every model adapter makes of its options when it is built: a model id, a key for
 * the provider's own endpoint, no body field the adapter writes itself, and where a misplaced
 * request field belongs.
 * @module
 */
import { InvalidRequestError } from '../core/index.ts';
import type { OptionHints } from '../core/internal-entry.ts';

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
