/**
 * One MCP server over Streamable HTTP through the official SDK's client: connecting (again after
 * a broken connection), listing every page of tools, calling one, and telling a failed call's
 * kinds apart. Web-standard APIs only, so it runs in a tab, a Worker and Node.
 * @module
 */
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { isPolyLoopError, ToolEnvironmentError } from '../core/index.ts';

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
 * A `fetch` whose response bodies stop with an error past `maxBytes`: a server that sends without
 * end must not fill this process's memory before the result could be cut to size.
 */
export function limitedFetch(inner: McpFetch, maxBytes: number): McpFetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (!response.body) return response;
    let seen = 0;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(new ToolEnvironmentError(`the MCP server's response is larger than ${maxBytes} bytes (maxResponseBytes)`));
        else controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(counter), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The connection to one server: connects on first use and again after a call found it broken. */
export class McpConnection {
  readonly #opts: ConnectionOptions;
  #client: Promise<Client> | null = null;
  #closed = false;

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
    const client = await this.#connected(signal);
    try {
      const listed = await client.listTools(undefined, { ...(signal ? { signal } : {}), timeout: this.#opts.timeoutMs });
      return listed.tools as readonly unknown[];
    } catch (e) {
      throw this.#failure('tools/list', e, signal);
    }
  }

  /**
   * Call one tool. Resolves with its result, or with the JSON-RPC error the server answered
   * (the server works and said no). Rejects with `signal.reason` when aborted, and with
   * `ToolEnvironmentError` when the server could not be reached or answered nothing usable; the
   * next call then connects anew.
   */
  async call(name: string, args: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<CallAnswer> {
    const client = await this.#connected(signal);
    try {
      const result = await client.callTool({ name, arguments: { ...args } }, { signal, timeout: this.#opts.timeoutMs });
      return { kind: 'result', result };
    } catch (e) {
      signal.throwIfAborted();
      if (ProtocolError.isInstance(e)) return { kind: 'refused', code: e.code, message: e.message };
      throw this.#failure(`tools/call ${JSON.stringify(name)}`, e, signal);
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
    const transport = new StreamableHTTPClientTransport(url, { fetch: limitedFetch(base, maxResponseBytes), requestInit: { headers: { ...headers } } });
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    try {
      await client.connect(transport, { ...(signal ? { signal } : {}), timeout: timeoutMs });
      return client;
    } catch (e) {
      this.#client = null;
      await client.close().catch(() => undefined); // the connect error is the one worth telling
      throw this.#failure('connect', e, signal);
    }
  }

  /** The error a failed step is reported with; the broken client is dropped so the next call connects anew. */
  #failure(what: string, e: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return signal.reason;
    const broken = this.#client;
    this.#client = null;
    if (broken) void broken.then((c) => c.close()).catch(() => undefined); // closing a broken client may fail too; nothing to add
    if (isPolyLoopError(e, 'tool_environment')) return e;
    const detail = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return new ToolEnvironmentError(`MCP server ${this.where}: ${what} failed (${detail})`, { cause: e });
  }
}
