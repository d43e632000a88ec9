/**
 * One MCP server over Streamable HTTP through the official SDK's client: connecting (again after
 * a broken connection), listing every page of tools, calling one, and telling a failed call's
 * kinds apart. Web-standard APIs only, so it runs in a tab, a Worker and Node.
 * @module
 */
import { Client, ProtocolError, SdkError, SdkErrorCode, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ToolEnvironmentError } from '../core/index.ts';

/** A `fetch`-compatible function (the global one by default). */
export type McpFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** What a {@link McpConnection} needs. */
export type ConnectionOptions = {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly fetch: McpFetch | undefined;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
};

/** What one call answered: the result as the server sent it, or the server's JSON-RPC error. */
export type CallAnswer = { readonly kind: 'result'; readonly result: unknown } | { readonly kind: 'refused'; readonly code: number; readonly message: string };

const CLIENT_INFO = { name: 'polyloop', version: '0.1.0' };

/**
 * The `fetch` the SDK's transport is given: no standalone GET stream (see inside); response bodies
 * that stop with an error past `maxBytes` (a server that sends without
 * end must not fill this process's memory before the result could be cut to size), and that tells
 * `onBroken` when the body of a POST (an answer to a call) breaks: the SDK would wait for that
 * answer until its timeout, so the connection fails the calls in flight at once instead.
 */
export function limitedFetch(inner: McpFetch, maxBytes: number, onBroken: (error: ToolEnvironmentError) => void): McpFetch {
  // One controller per request in flight, by JSON-RPC request id, so a cancelled call's request
  // can be closed whether its response headers have arrived yet or not; `cancelled` keeps an id
  // whose cancellation came first.
  const open = new Map<unknown, AbortController>();
  const cancelled = new Set<unknown>();
  return async (input, init) => {
    // The GET stream carries only messages the server starts (list changes, logs, requests to
    // the client), none of which this library takes. Answering it here as the protocol lets a
    // server answer it (405: no such stream) spares each connection an HTTP connection held open
    // for nothing — a browser allows six per host, a Worker six at a time.
    // A GET with Last-Event-ID is another thing: the client resuming a call's answer stream that
    // the server closed on purpose (the protocol's polling pattern), and it must go through.
    const method = init?.method ?? 'GET';
    if (method === 'GET' && !new Headers(init?.headers).has('last-event-id')) return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
    const sent = parseBody(init?.body);
    // The 2025 protocol cancels with a notification only and leaves the answer stream open: a
    // server that does not hear of it (a stateless one) would hold it forever. Closing it is
    // how such a server learns the caller has gone.
    if (sent?.method === 'notifications/cancelled') {
      const target = sent.params?.requestId;
      const request = open.get(target);
      if (request) request.abort(new DOMException('the call was cancelled', 'AbortError'));
      else if (cancelled.add(target).size > 1_000) cancelled.delete(cancelled.values().next().value); // a call that ended unanswered is never sent: bound what it leaves
    }
    // Only a request's answer is tracked: a response the client sends carries the server's id, not ours.
    const id = typeof sent?.method === 'string' ? sent.id : undefined;
    const own = new AbortController();
    if (id !== undefined && cancelled.delete(id)) own.abort(new DOMException('the call was cancelled', 'AbortError'));
    if (id !== undefined) open.set(id, own);
    const signal = init?.signal ? AbortSignal.any([init.signal, own.signal]) : own.signal;
    let response: Response;
    try {
      response = await inner(input, { ...init, signal });
    } catch (e) {
      if (id !== undefined) open.delete(id);
      throw e;
    }
    if (!response.body) {
      if (id !== undefined) open.delete(id);
      return response;
    }
    const reader = response.body.getReader();
    // A cancellation that comes while the body is being read closes it (the fetch's own signal
    // may not reach a body the runtime has already handed over).
    own.signal.addEventListener('abort', () => void reader.cancel(own.signal.reason).catch(() => undefined), { once: true });
    let seen = 0;
    const end = (controller: ReadableStreamDefaultController<Uint8Array>, error?: ToolEnvironmentError): void => {
      if (id !== undefined) open.delete(id);
      if (!error) return controller.close();
      // A stream the transport aborted on purpose (a cancelled call, close()) is not a broken server.
      if (init?.method === 'POST' && !signal.aborted) onBroken(error);
      controller.error(error);
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (e) {
          return end(controller, new ToolEnvironmentError(`the MCP server's response broke off (${e instanceof Error ? e.message : String(e)})`, { cause: e }));
        }
        if (chunk.done) return end(controller);
        seen += chunk.value.byteLength;
        if (seen <= maxBytes) return controller.enqueue(chunk.value);
        const error = new ToolEnvironmentError(`the MCP server's response is larger than ${maxBytes} bytes (maxResponseBytes)`);
        reader.cancel(error).catch(() => undefined); // the body is abandoned either way; the error above is the news
        return end(controller, error);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

type SentMessage = { readonly id?: unknown; readonly method?: unknown; readonly params?: { readonly requestId?: unknown } };

/** The JSON-RPC message a request carries (the SDK sends one per POST, as a string), or null. */
function parseBody(body: unknown): SentMessage | null {
  if (typeof body !== 'string') return null;
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as SentMessage) : null;
  } catch {
    return null; // not JSON: nothing to track
  }
}

/** The connection to one server: connects on first use and again after a call found it broken. */
export class McpConnection {
  readonly #opts: ConnectionOptions;
  #client: Promise<Client> | null = null;
  #closed = false;
  /** One controller per call in flight: a broken answer stream fails them (see {@link limitedFetch}). */
  readonly #inFlight = new Set<AbortController>();

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
    const used = this.#connected(signal);
    const client = await used;
    try {
      const listed = await client.listTools(undefined, { ...(signal ? { signal } : {}), timeout: this.#opts.timeoutMs });
      return listed.tools as readonly unknown[];
    } catch (e) {
      throw this.#failure('tools/list', e, signal, used);
    }
  }

  /**
   * Call one tool. Resolves with its result, or with the JSON-RPC error the server answered
   * (the server works and said no). Rejects with `signal.reason` when aborted, and with
   * `ToolEnvironmentError` when the server could not be reached or answered nothing usable; the
   * next call then connects anew.
   */
  async call(name: string, args: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<CallAnswer> {
    const used = this.#connected(signal);
    const client = await used;
    const broken = new AbortController();
    this.#inFlight.add(broken);
    try {
      const both = AbortSignal.any([signal, broken.signal]);
      const result = await client.callTool({ name, arguments: { ...args } }, { signal: both, timeout: this.#opts.timeoutMs });
      return { kind: 'result', result };
    } catch (e) {
      signal.throwIfAborted();
      if (ProtocolError.isInstance(e)) return { kind: 'refused', code: e.code, message: e.message };
      throw this.#failure(`tools/call ${JSON.stringify(name)}`, broken.signal.aborted ? broken.signal.reason : e, signal, used);
    } finally {
      this.#inFlight.delete(broken);
    }
  }

  /** Close the connection; later calls fail with `ToolEnvironmentError`. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = null;
    // A client that never connected has nothing to close; its connect error was already told.
    if (client) await client.then((c) => c.close(), () => undefined);
  }

  #connected(signal: AbortSignal | undefined): Promise<Client> {
    if (this.#closed) return Promise.reject(new ToolEnvironmentError(`the connection to the MCP server ${this.where} was closed`));
    this.#client ??= this.#connect(signal);
    return this.#client;
  }

  async #connect(signal: AbortSignal | undefined): Promise<Client> {
    const { url, headers, fetch: inner, maxResponseBytes, timeoutMs } = this.#opts;
    const base: McpFetch = inner ?? ((input, init) => globalThis.fetch(input, init));
    const transport = new StreamableHTTPClientTransport(url, { fetch: limitedFetch(base, maxResponseBytes, (e) => this.#broken(e)), requestInit: { headers: { ...headers } } });
    const client = new Client(CLIENT_INFO, { capabilities: {} });
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
   * An answer stream broke: fail every call in flight on this connection (the SDK cannot tell
   * which one it belonged to, and would wait for each until its timeout).
   */
  #broken(error: ToolEnvironmentError): void {
    for (const call of this.#inFlight) call.abort(error);
  }

  /**
   * The error a failed request is reported with. The client it used (`used`) is dropped, so the
   * next call connects anew — unless the request only ran out of time: the connection still
   * works, and closing it would fail every other call in flight on it (other runs sharing this
   * registry) for one slow tool. A client a later call already replaced is left alone too.
   */
  #failure(what: string, e: unknown, signal: AbortSignal | undefined, used: Promise<Client> | null): unknown {
    if (signal?.aborted) return signal.reason;
    const timedOut = SdkError.isInstance(e) && e.code === SdkErrorCode.RequestTimeout;
    if (used && !timedOut && this.#client === used) {
      this.#client = null;
      void used.then((c) => c.close()).catch(() => undefined); // closing a broken client may fail too; nothing to add
    }
    const detail = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return new ToolEnvironmentError(`MCP server ${this.where}: ${what} failed (${detail})`, { cause: e });
  }
}
