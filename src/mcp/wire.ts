/**
 * The `fetch` the SDK's transport is given: it bounds response bodies, closes a cancelled call's
 * answer stream, and watches each call's answer stream so that a stream that can no longer bring
 * the answer fails the call at once instead of after the SDK's timeout. Web-standard APIs only.
 * @module
 */
import { ToolEnvironmentError } from '../core/index.ts';
import { cappedStream } from '../core/internal-entry.ts';
import { AnswerScan } from './answer-scan.ts';

/** A `fetch`-compatible function (the global one by default). */
export type McpFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The header a request carries from the connection to this `fetch` to say which call it is; it is
 * taken off before the request leaves, so no server ever sees it.
 */
export const CALL_HEADER = 'x-polyloop-call';

/**
 * How many times the SDK tries to resume an answer stream before it gives up (given to its
 * transport, so the count here and there is the same number).
 */
export const RESUME_ATTEMPTS = 2;

/** What {@link limitedFetch} tells the connection. */
export type WireEvents = {
  /** The body of a POST broke off: the SDK cannot tell whose answer it carried. */
  readonly broken: (error: ToolEnvironmentError) => void;
  /** The call `key` will get no answer (see {@link limitedFetch}). */
  readonly unanswered: (key: string, error: ToolEnvironmentError) => void;
};

/** A call whose answer is awaited on a stream: its key, its JSON-RPC id, failed attempts to resume the stream. */
type Awaited = { readonly key: string; readonly id: unknown; failures: number };

type SentMessage = {
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: { readonly requestId?: unknown };
};

const METHOD_NOT_ALLOWED = (): Response => new Response(null, { status: 405, statusText: 'Method Not Allowed' });
const mediaType = (r: Response): string => (r.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
/** Entries kept for ids nobody comes back for (a call that ended another way): bounded. */
const MAX_REMEMBERED = 1_000;

function remember<K, V>(map: Map<K, V> | Set<K>, key: K, value?: V): void {
  if (map instanceof Map) map.set(key, value as V);
  else map.add(key);
  if (map.size > MAX_REMEMBERED) map.delete(map.keys().next().value as K);
}

/**
 * Wrap `inner`. Response bodies stop with an error past `maxBytes` (a server that sends without
 * end must not fill memory). A POST whose body breaks tells `events.broken`. A call's answer
 * (a request sent with {@link CALL_HEADER}) is watched, and `events.unanswered` is told at once
 * when it can no longer come — the SDK would wait until its timeout:
 * - the server accepted the request with 202, or sent a stream without a body;
 * - the stream (or JSON body) ended with no answer to it, or with another request's answer only;
 * - a stream that ended unanswered carried no event id, so there is nothing to resume from;
 * - resuming it was refused with 405, or failed {@link RESUME_ATTEMPTS} times.
 * A stream that ends unanswered after an event id is the protocol's polling pattern: the SDK
 * resumes it with a GET carrying `Last-Event-ID`, and that stream is watched the same way.
 */
export function limitedFetch(inner: McpFetch, maxBytes: number, events: WireEvents): McpFetch {
  // One controller per request in flight, by JSON-RPC request id, so a cancelled call's request
  // can be closed whether its response headers have arrived yet or not; `cancelled` keeps an id
  // whose cancellation came first.
  const open = new Map<unknown, AbortController>();
  const cancelled = new Set<unknown>();
  /** By the event id the SDK resumes from: the call that stream's answer belongs to. */
  const resumable = new Map<string, Awaited>();
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    const key = headers.get(CALL_HEADER);
    headers.delete(CALL_HEADER);
    const method = init?.method ?? 'GET';
    const resumeFrom = method === 'GET' ? headers.get('last-event-id') : null;
    // The GET stream carries only messages the server starts (list changes, logs, requests to
    // the client), none of which this library takes. Answering it here as the protocol lets a
    // server answer it (405: no such stream) spares each connection an HTTP connection held open
    // for nothing — a browser allows six per host, a Worker six at a time.
    // A GET with Last-Event-ID is another thing: the client resuming a call's answer stream that
    // the server closed on purpose (the protocol's polling pattern), and it must go through.
    if (method === 'GET' && resumeFrom === null) return METHOD_NOT_ALLOWED();
    const sent = parseBody(init?.body);
    // The 2025 protocol cancels with a notification only and leaves the answer stream open: a
    // server that does not hear of it (a stateless one) would hold it forever. Closing it is
    // how such a server learns the caller has gone.
    if (sent?.method === 'notifications/cancelled') {
      const target = sent.params?.requestId;
      const request = open.get(target);
      if (request) request.abort(new DOMException('the call was cancelled', 'AbortError'));
      else remember(cancelled, target); // a call that ended unanswered is never sent: bound what it leaves
    }
    // Only a request's answer is tracked: a response the client sends carries the server's id, not ours.
    const requestId = typeof sent?.method === 'string' ? sent.id : undefined;
    const asked = key !== null && requestId !== undefined ? { key, id: requestId, failures: 0 } : undefined;
    const awaited = resumeFrom !== null ? resumable.get(resumeFrom) : asked;
    const id = requestId ?? awaited?.id;
    const own = new AbortController();
    if (id !== undefined && cancelled.delete(id)) own.abort(new DOMException('the call was cancelled', 'AbortError'));
    if (id !== undefined) open.set(id, own);
    const signal = init?.signal ? AbortSignal.any([init.signal, own.signal]) : own.signal;
    const watch = awaited ? watcher(awaited, resumeFrom, resumable, events) : null;
    let response: Response;
    try {
      response = await inner(input, { ...init, headers, signal });
    } catch (e) {
      if (id !== undefined) open.delete(id);
      if (!signal.aborted) watch?.refused(null);
      throw e;
    }
    const scan = watch?.opened(response) ?? null;
    if (!response.body) {
      if (id !== undefined) open.delete(id);
      return response;
    }
    const body = boundedBody(response.body, maxBytes, own.signal, scan, (error, tooLarge) => {
      if (id !== undefined) open.delete(id);
      // A stream the transport aborted on purpose (a cancelled call, close()) is not a broken server.
      if (signal.aborted) return;
      // A body past the limit fails its own call when it is known; a broken one, every call.
      if (tooLarge && watch && error) return watch.fail(error);
      if (method === 'POST' && error) events.broken(error);
      if (scan) watch?.ended(scan, error);
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** What happens to one watched call as its request's response arrives and ends. */
type Watch = {
  /** The response arrived: the scan to feed with its body, or null when there is nothing to watch. */
  opened(response: Response): AnswerScan | null;
  /** Resuming the stream failed (`status`: the HTTP status, null when the request itself failed). */
  refused(status: number | null): void;
  /** The body ended, cleanly (`error` undefined) or broken. */
  ended(scan: AnswerScan, error: ToolEnvironmentError | undefined): void;
  /** The call fails with `error`. */
  fail(error: ToolEnvironmentError): void;
};

function watcher(
  awaited: Awaited,
  resumeFrom: string | null,
  resumable: Map<string, Awaited>,
  events: WireEvents,
): Watch {
  const failWith = (error: ToolEnvironmentError): void => {
    if (resumeFrom !== null) resumable.delete(resumeFrom);
    events.unanswered(awaited.key, error);
  };
  const fail = (message: string): void => failWith(new ToolEnvironmentError(message));
  const settle = (next: string | undefined): void => {
    if (resumeFrom !== null) resumable.delete(resumeFrom);
    if (next !== undefined) remember(resumable, next, { ...awaited, failures: 0 });
  };
  const refused = (status: number | null): void => {
    if (resumeFrom === null) return; // a POST that failed rejects the call through the SDK already
    awaited.failures += 1;
    const why = status === null ? 'the request failed' : `HTTP ${status}`;
    if (status === 405 || awaited.failures >= RESUME_ATTEMPTS) fail(`the answer stream could not be resumed (${why})`);
  };
  return {
    refused,
    fail: failWith,
    opened(response) {
      if (resumeFrom === null && response.status === 202) {
        fail('the server accepted the request (HTTP 202) without answering it');
        return null;
      }
      if (!response.ok) {
        refused(response.status);
        return null;
      }
      // The SDK reads a resumed stream as an event stream whatever its type, and fails a POST
      // answered in any type but these two by itself.
      const type = mediaType(response);
      const sse = resumeFrom !== null || type === 'text/event-stream';
      if (!sse && type !== 'application/json') return null;
      if (!response.body && sse) fail('the answer stream has no body');
      return response.body ? new AnswerScan(awaited.id, sse) : null;
    },
    ended(scan, error) {
      if (error && resumeFrom === null) return; // a broken POST has failed every call already
      const answered = error ? { kind: 'none' as const } : scan.end();
      if (answered.kind === 'own' || answered.kind === 'unreadable') return settle(undefined);
      if (answered.kind === 'other') {
        return fail(`the answer stream answered another request (id ${JSON.stringify(answered.id)}), not this one`);
      }
      // Unanswered: the SDK resumes from the last event id; without one, it has lost the answer.
      if (scan.lastEventId !== undefined) return settle(scan.lastEventId);
      if (resumeFrom === null) return fail('the answer stream ended without an answer');
      fail('the resumed answer stream ended without an answer or an event id to resume from');
    },
  };
}

/**
 * `body`, fed to `scan` as it is read, ending with an error past `maxBytes`; `ended` hears how
 * it ended (`tooLarge`: past the limit). A cancellation of the request (`cancelled`) closes it
 * even once the runtime has handed the body over (the fetch's own signal may not reach it then).
 */
function boundedBody(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  cancelled: AbortSignal,
  scan: AnswerScan | null,
  ended: (error: ToolEnvironmentError | undefined, tooLarge: boolean) => void,
): ReadableStream<Uint8Array> {
  return cappedStream(body, {
    maxBytes,
    tooLarge: () => {
      return new ToolEnvironmentError(`the MCP server's response is larger than ${maxBytes} bytes (maxResponseBytes)`);
    },
    readFailed: (e) => {
      const detail = e instanceof Error ? e.message : String(e);
      return new ToolEnvironmentError(`the MCP server's response broke off (${detail})`, { cause: e });
    },
    onChunk: (chunk) => scan?.feed(chunk),
    onEnd: (error, tooLarge) => ended(error as ToolEnvironmentError | undefined, tooLarge),
    signal: cancelled,
    // One chunk read ahead: a body the SDK never reads (an answer it ignores) still ends, and is scanned.
    highWaterMark: 1,
  });
}

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
