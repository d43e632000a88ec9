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
import { declaresMoreThan, readCapped } from '../core/internal-entry.ts';

/** Largest accepted request body: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Largest accepted body of `POST /runs` carrying a `log` to import (docs/http.md#post-runs): 16 MiB. */
export const MAX_IMPORT_BODY_BYTES = 16 * 1024 * 1024;

/** Most bytes of an unread or refused body read and discarded to keep the connection usable: 8 MiB. */
export const MAX_DRAIN_BYTES = 8 * 1024 * 1024;

/**
 * Read a body as UTF-8 text, or null when it is bigger than `max` bytes, declared or actually sent
 * (a TypeError for invalid UTF-8). A refused body is left unlocked and partly read, for {@link drainBody}.
 */
export async function readBody(req: Request, max: number): Promise<string | null> {
  if (declaresMoreThan(req, max)) return null;
  if (req.body === null) return '';
  const bytes = await readCapped(req.body, max);
  return bytes === null ? null : new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
}

/** Why a request body is refused: the status, code and message of the error response. */
export type BodyRefusal = {
  readonly status: 400 | 413;
  readonly code: 'bad_request' | 'payload_too_large';
  readonly message: string;
};

/** A JSON body (of a route that takes at most {@link MAX_BODY_BYTES}) as sent and as parsed. */
export type JsonBody = { readonly text: string; readonly raw: unknown };

/**
 * A JSON body of at most {@link MAX_BODY_BYTES}, or why it is refused, checked in this order: its
 * size (413), UTF-8 (400), JSON (400).
 */
export async function readJsonBody(req: Request): Promise<JsonBody | BodyRefusal> {
  let text: string | null;
  try {
    text = await readBody(req, MAX_BODY_BYTES);
  } catch {
    return { status: 400, code: 'bad_request', message: 'request body is not valid UTF-8' };
  }
  const tooLarge = `request body exceeds ${MAX_BODY_BYTES} bytes`;
  if (text === null) return { status: 413, code: 'payload_too_large', message: tooLarge };
  try {
    return { text, raw: JSON.parse(text) as unknown };
  } catch {
    return { status: 400, code: 'bad_request', message: 'request body is not valid JSON' };
  }
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
    if (declaresMoreThan(req, budget)) return await reader.cancel();
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
