/**
 * Request bodies of the HTTP app: read with a byte limit, and drain what was left unread.
 *
 * Why drain: workerd (under `wrangler dev` and Miniflare) resets a keep-alive connection whose
 * request body the Worker did not consume, so the client's next request on that connection fails
 * with ECONNRESET — after a 413, a 401, or any route that ignores its body. Reading the rest
 * and discarding it keeps the connection usable. The drain is bounded: a client sending more
 * than {@link MAX_DRAIN_BYTES} gets its answer and loses the connection instead.
 * @module
 */

/** Largest accepted request body: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Largest accepted body of `POST /runs` carrying a `log` to import (docs/http.md#post-runs): 16 MiB. */
export const MAX_IMPORT_BODY_BYTES = 16 * 1024 * 1024;

/** Most bytes of an unread or refused body read and discarded to keep the connection usable: 8 MiB. */
export const MAX_DRAIN_BYTES = 8 * 1024 * 1024;

/** The body was bigger than the limit (declared or actually sent). */
export class BodyTooLarge extends Error {
  override readonly name = 'BodyTooLarge';
}

/**
 * Read a body as UTF-8 text, refusing more than `max` bytes whatever Content-Length claims
 * ({@link BodyTooLarge}; a TypeError for invalid UTF-8). On refusal the stream is left unlocked
 * and partly read, for {@link drainBody}.
 */
export async function readBody(req: Request, max: number): Promise<string> {
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > max) throw new BodyTooLarge();
  if (req.body === null) return '';
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      reader.releaseLock();
      throw new BodyTooLarge();
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(all);
}

/** True when the UTF-8 encoding of `text` is longer than `max` bytes. */
export function exceedsBytes(text: string, max: number): boolean {
  // A UTF-16 unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4): a short text needs no encoding.
  return text.length * 3 > max && new TextEncoder().encode(text).byteLength > max;
}

/**
 * Read and discard what is left of a request body, up to `budget` bytes; past that (or when
 * Content-Length already says so) cancel it. A body already read, or none, is left alone. Never throws.
 */
export async function drainBody(req: Request, budget: number = MAX_DRAIN_BYTES): Promise<void> {
  const body = req.body;
  if (body === null || body.locked) return;
  const reader = body.getReader();
  try {
    if (Number(req.headers.get('content-length') ?? '0') > budget) return await reader.cancel();
    for (let seen = 0; ; ) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value.byteLength;
      if (seen > budget) return await reader.cancel();
    }
  } catch {
    // The client went away mid-body: there is no connection left to keep.
  } finally {
    reader.releaseLock();
  }
}
