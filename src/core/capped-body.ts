/**
 * Bodies read with a byte limit, whatever Content-Length claims: a request body read whole (the
 * Worker's routes, the chat handler) and a response body passed on as it is read (the model
 * adapters, the MCP client). Web Streams only; the one place a body's bytes are counted.
 * @module
 */

/** One read of a capped body: a chunk within the limit, the end, or `over` (the chunk passed the limit). */
type CappedRead = { readonly chunk: Uint8Array } | 'done' | 'over';

/** The next read of `reader`, counted against `maxBytes` in `count`. A failed read rejects as it failed. */
async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  count: { seen: number },
  maxBytes: number,
): Promise<CappedRead> {
  const next = await reader.read();
  if (next.done) return 'done';
  count.seen += next.value.byteLength;
  return count.seen > maxBytes ? 'over' : { chunk: next.value };
}

/** True when the request's Content-Length says more than `maxBytes` (it is not trusted the other way). */
export function declaresMoreThan(req: Request, maxBytes: number): boolean {
  return Number(req.headers.get('content-length') ?? '0') > maxBytes;
}

/**
 * `body` read whole: its bytes, or null as soon as more than `maxBytes` arrived — the stream is then
 * left unlocked and partly read, for the caller to cancel or drain. A failed read rejects as it failed.
 */
export async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const count = { seen: 0 };
  const chunks: Uint8Array[] = [];
  for (;;) {
    const read = await readWithin(reader, count, maxBytes);
    if (read === 'done') break;
    if (read === 'over') {
      reader.releaseLock();
      return null;
    }
    chunks.push(read.chunk);
  }
  const all = new Uint8Array(count.seen);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}

/** Options of {@link cappedStream}. */
export type CappedStreamOptions = {
  readonly maxBytes: number;
  /** What the stream fails with, and the source is cancelled with, once more than `maxBytes` arrived. */
  readonly tooLarge: () => unknown;
  /** What the stream fails with when a read of the source fails (default: that failure itself). */
  readonly readFailed?: (cause: unknown) => unknown;
  /** Each chunk within the limit, before it is passed on. */
  readonly onChunk?: (chunk: Uint8Array) => void;
  /** How the stream ended, before it closes or fails: `error` undefined when the source ended. */
  readonly onEnd?: (error: unknown, tooLarge: boolean) => void;
  /** Cancels the source with its reason, also once the stream was handed on (a fetch's own signal may not reach it). */
  readonly signal?: AbortSignal;
  /** How many chunks are read ahead of the reader (default 0: only on demand). */
  readonly highWaterMark?: number;
};

/**
 * `source` passed on chunk by chunk as it is read, failing once more than `maxBytes` have been read:
 * the source is cancelled then, so the other side sees the connection close and an endless or huge
 * body never sits in memory. Cancelling the stream cancels the source.
 */
export function cappedStream(
  source: ReadableStream<Uint8Array>,
  opts: CappedStreamOptions,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const count = { seen: 0 };
  const { signal } = opts;
  signal?.addEventListener('abort', () => void reader.cancel(signal.reason).catch(() => undefined), { once: true });
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: unknown): void => {
    opts.onEnd?.(error, count.seen > opts.maxBytes);
    controller.error(error);
  };
  const pull = async (controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> => {
    let read: CappedRead;
    try {
      read = await readWithin(reader, count, opts.maxBytes);
    } catch (e) {
      return fail(controller, opts.readFailed ? opts.readFailed(e) : e);
    }
    if (read === 'done') {
      opts.onEnd?.(undefined, false);
      return controller.close();
    }
    if (read === 'over') {
      const error = opts.tooLarge();
      await reader.cancel(error).catch(() => undefined); // the body is abandoned either way; the error is the news
      return fail(controller, error);
    }
    opts.onChunk?.(read.chunk);
    controller.enqueue(read.chunk);
  };
  const cancel = (reason: unknown): Promise<void> => reader.cancel(reason);
  return new ReadableStream<Uint8Array>({ pull, cancel }, { highWaterMark: opts.highWaterMark ?? 0 });
}
