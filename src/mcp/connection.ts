/**
 * One MCP server over Streamable HTTP through the official SDK's client: connecting (again after
 * a broken connection), listing every page of tools, calling one, and telling a failed call's
 * kinds apart. Web-standard APIs only, so it runs in a tab, a Worker and Node.
 * @module
 */
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type { RequestOptions } from '@modelcontextprotocol/client';
import { ToolEnvironmentError } from '../core/index.ts';
import { linearOutputValidator } from './output-validator.ts';
import { CALL_HEADER, limitedFetch, RESUME_ATTEMPTS } from './wire.ts';
import type { McpFetch } from './wire.ts';

export type { McpFetch } from './wire.ts';

/** What a {@link McpConnection} needs. */
export type ConnectionOptions = {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly fetch: McpFetch | undefined;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
};

/** What one call answered: the result as the server sent it, or the server's JSON-RPC error. */
export type CallAnswer =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'refused'; readonly code: number; readonly message: string };

const CLIENT_INFO = { name: 'polyloop', version: '0.1.0' };

/** A request in flight: aborting `controller` fails it; `callOnly` when the connection itself still works. */
type Flight = { readonly controller: AbortController; callOnly: boolean };

/** The connection to one server: connects on first use and again after a call found it broken. */
export class McpConnection {
  readonly #opts: ConnectionOptions;
  #client: Promise<Client> | null = null;
  #closed = false;
  /** By key (see `CALL_HEADER`), each request in flight: its answer stream can fail it (see `limitedFetch`). */
  readonly #inFlight = new Map<string, Flight>();
  #keys = 0;

  constructor(opts: ConnectionOptions) {
    this.#opts = opts;
  }

  /** The server's URL without credentials or query, for messages (a URL may carry a token). */
  get where(): string {
    const { origin, pathname } = this.#opts.url;
    return `${origin}${pathname}`;
  }

  /** Every tool the server lists, page after page (the SDK follows `nextCursor`). */
  async listTools(signal: AbortSignal | undefined): Promise<readonly unknown[]> {
    const listed = await this.#request('tools/list', signal, (client, options) => client.listTools(undefined, options));
    return listed.tools as readonly unknown[];
  }

  /**
   * Call one tool. Resolves with its result, or with the JSON-RPC error the server answered
   * (the server works and said no). Rejects with `signal.reason` when aborted, and with
   * `ToolEnvironmentError` when the server could not be reached or answered nothing usable; the
   * next call then connects anew, unless only this call went wrong.
   */
  async call(name: string, args: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<CallAnswer> {
    const refused = (e: unknown): CallAnswer | null =>
      ProtocolError.isInstance(e) ? { kind: 'refused', code: e.code, message: e.message } : null;
    const send = async (client: Client, options: RequestOptions): Promise<CallAnswer> => {
      const result = await client.callTool({ name, arguments: { ...args } }, options);
      return { kind: 'result', result };
    };
    return this.#request(`tools/call ${JSON.stringify(name)}`, signal, send, refused);
  }

  /**
   * One request through the client, under a key its answer stream is watched by. `answered` turns
   * an error that is an answer (the server said no) into a value.
   */
  async #request<T>(
    what: string,
    signal: AbortSignal | undefined,
    send: (client: Client, options: RequestOptions) => Promise<T>,
    answered?: (e: unknown) => T | null,
  ): Promise<T> {
    const used = this.#connected(signal);
    const client = await used;
    const key = String(++this.#keys);
    const flight: Flight = { controller: new AbortController(), callOnly: false };
    this.#inFlight.set(key, flight);
    const failed = flight.controller.signal;
    try {
      const both = signal ? AbortSignal.any([signal, failed]) : failed;
      return await send(client, { signal: both, timeout: this.#opts.timeoutMs, headers: { [CALL_HEADER]: key } });
    } catch (e) {
      signal?.throwIfAborted();
      const answer = failed.aborted ? null : (answered?.(e) ?? null);
      if (answer !== null) return answer;
      throw this.#failure(what, failed.aborted ? failed.reason : e, signal, used, flight.callOnly);
    } finally {
      this.#inFlight.delete(key);
    }
  }

  /** Close the connection; later calls fail with `ToolEnvironmentError`. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = null;
    // A client that never connected has nothing to close; its connect error was already told.
    if (client)
      await client.then(
        (c) => c.close(),
        () => undefined,
      );
  }

  #connected(signal: AbortSignal | undefined): Promise<Client> {
    if (this.#closed)
      return Promise.reject(new ToolEnvironmentError(`the connection to the MCP server ${this.where} was closed`));
    this.#client ??= this.#connect(signal);
    return this.#client;
  }

  async #connect(signal: AbortSignal | undefined): Promise<Client> {
    const { url, headers, fetch: inner, maxResponseBytes, timeoutMs } = this.#opts;
    const base: McpFetch = inner ?? ((input, init) => globalThis.fetch(input, init));
    const events = {
      broken: (e: ToolEnvironmentError) => this.#broken(e),
      unanswered: (key: string, e: ToolEnvironmentError) => this.#unanswered(key, e),
    };
    const transport = new StreamableHTTPClientTransport(url, {
      fetch: limitedFetch(base, maxResponseBytes, events),
      requestInit: { headers: { ...headers } },
      // The SDK's own defaults, written out so that the count of attempts is the one limitedFetch counts.
      reconnectionOptions: {
        initialReconnectionDelay: 1_000,
        maxReconnectionDelay: 30_000,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: RESUME_ATTEMPTS,
      },
    });
    const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: linearOutputValidator });
    try {
      await client.connect(transport, { ...(signal ? { signal } : {}), timeout: timeoutMs });
      return client;
    } catch (e) {
      this.#client = null;
      await client.close().catch(() => undefined); // the connect error is the one worth telling
      throw this.#failure('connect', e, signal, null);
    }
  }

  /**
   * An answer stream broke: fail every request in flight on this connection (the SDK cannot tell
   * which one it belonged to, and would wait for each until its timeout).
   */
  #broken(error: ToolEnvironmentError): void {
    for (const flight of this.#inFlight.values()) flight.controller.abort(error);
  }

  /** The request `key` will get no answer: fail it now. The connection still works, so it stays. */
  #unanswered(key: string, error: ToolEnvironmentError): void {
    const flight = this.#inFlight.get(key);
    if (!flight || flight.controller.signal.aborted) return;
    flight.callOnly = true;
    flight.controller.abort(error);
  }

  /**
   * The error a failed request is reported with. The client it used (`used`) is dropped, so the
   * next call connects anew — unless the request only ran out of time or only it went wrong
   * (`callOnly`): the connection still works, and closing it would fail every other call in
   * flight on it (other runs sharing this registry) for one tool. A client a later call already
   * replaced is left alone too.
   */
  #failure(
    what: string,
    e: unknown,
    signal: AbortSignal | undefined,
    used: Promise<Client> | null,
    callOnly = false,
  ): unknown {
    if (signal?.aborted) return signal.reason;
    const timedOut = SdkError.isInstance(e) && e.code === SdkErrorCode.RequestTimeout;
    if (used && !timedOut && !callOnly && this.#client === used) {
      this.#client = null;
      void used.then((c) => c.close()).catch(() => undefined); // closing a broken client may fail too; nothing to add
    }
    const detail = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return new ToolEnvironmentError(`MCP server ${this.where}: ${what} failed (${detail})`, { cause: e });
  }
}
