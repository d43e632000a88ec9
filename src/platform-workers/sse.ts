/**
 * Server-sent events over a run log: replay what a client missed, then follow live appends.
 * @module
 */
import { checkOptionKeys, eventsRefusal } from '../core/internal-entry.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import type { StoredLine } from './durable-object-store.ts';

/** Where a log stream reads from and subscribes to. All calls happen inside one Durable Object. */
export type LogFeed = {
  /** Committed records with a sequence number above `afterSeq`, in write order (synchronous). */
  readonly readLines: (afterSeq: number) => readonly StoredLine[];
  /** Register for every later append; returns the unsubscribe function. */
  readonly subscribe: (listener: (entry: StoredLine) => void) => () => void;
};

/** Options of {@link logEventStream}. */
export type LogEventStreamOptions = {
  /** Send a comment line this often so proxies keep an idle stream open (default 20 s; 0 = never). */
  readonly keepAliveMs?: number;
};

const STREAM_OPTIONS: OptionKeys<LogEventStreamOptions> = { keepAliveMs: true };

const encoder = new TextEncoder();

function kindOf(line: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return 'record'; // a stored line that is not JSON (a corrupt log) is still sent, as it is
  }
  const kind = typeof parsed === 'object' && parsed !== null ? (parsed as { kind?: unknown }).kind : undefined;
  return typeof kind === 'string' ? kind : 'record';
}

/**
 * Format one record as an SSE event: `id:` is the record's sequence number, `event:` its kind,
 * `data:` the record's JSON (one line: JSON never contains a raw newline).
 */
export function formatLogEvent(entry: StoredLine): string {
  // An encoded record never holds a raw line break, but a corrupt
  // stored line might: one `data:` per line keeps the framing.
  const data = entry.line
    .split(/\r\n|\r|\n/)
    .map((l) => `data: ${l}`)
    .join('\n');
  return `id: ${entry.seq}\nevent: ${kindOf(entry.line)}\n${data}\n\n`;
}

/**
 * A byte stream of SSE events: every record after `afterSeq` (the client's `Last-Event-ID`), then
 * each new record as it is committed; it closes after `run_ended`. The replay is read and the
 * subscription registered in the same synchronous turn, so no record is missed or sent twice.
 */
export function logEventStream(
  feed: LogFeed,
  afterSeq: number,
  opts: LogEventStreamOptions = {},
): ReadableStream<Uint8Array> {
  checkOptionKeys(opts, STREAM_OPTIONS, 'logEventStream');
  let unsubscribe: (() => void) | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  const stop = (): void => {
    unsubscribe?.();
    unsubscribe = null;
    if (timer !== null) clearInterval(timer);
    timer = null;
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let last = afterSeq;
      let closed = false;
      const send = (entry: StoredLine): void => {
        if (closed || entry.seq <= last) return;
        last = entry.seq;
        const text = formatLogEvent(entry);
        try {
          controller.enqueue(encoder.encode(text));
          if (text.includes('\nevent: run_ended\n')) {
            closed = true;
            stop();
            controller.close();
          }
        } catch {
          // The reader went away between two records: stop following the log.
          closed = true;
          stop();
        }
      };
      for (const entry of feed.readLines(afterSeq)) send(entry);
      if (closed) return;
      unsubscribe = feed.subscribe(send);
      const every = opts.keepAliveMs ?? 20_000;
      if (every > 0) {
        timer = setInterval(() => {
          try {
            controller.enqueue(encoder.encode(': keep-alive\n\n'));
          } catch {
            closed = true;
            stop();
          }
        }, every);
      }
    },
    cancel() {
      stop();
    },
  });
}

/** Where the run's log stands, for {@link logEventsResponse}: its last sequence number, and whether it has ended. */
export type LogPosition = { readonly lastSeq: number; readonly ended: () => boolean };

/**
 * The answer to an event-stream request carrying `lastEventId` (the client's `Last-Event-ID`, or
 * null): 400 for an id beyond the log, 204 when everything up to `run_ended` was seen, else the
 * SSE stream of {@link logEventStream}.
 */
export function logEventsResponse(
  feed: LogFeed,
  at: LogPosition,
  lastEventId: string | null,
  opts: LogEventStreamOptions = {},
): Response {
  const afterSeq = lastEventId === null ? -1 : Number(lastEventId);
  const refused = eventsRefusal(afterSeq, at.lastSeq, at.ended);
  if (refused?.status === 400) return new Response(refused.message, { status: 400 });
  if (refused?.status === 204) return new Response(null, { status: 204 });
  return new Response(logEventStream(feed, afterSeq, opts), {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
  });
}
