/**
 * A loopback server for the adapters that answers as badly as a server can: an event stream that
 * never ends (until the client goes away), a body of tens of MiB, a stream with no events. Each
 * request is answered by the test's `answer`; `closedEarly` says whether the client closed the
 * connection before the answer was written out.
 */
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An endless stream stops here anyway, so a client that never lets go still ends the test. */
export const ENDLESS_BOUND = 64 * 1024 * 1024;

export type Hostile = {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly baseURL: string;
  /** Resolves, once the last answer is over, with whether the client closed the connection first. */
  closedEarly(): Promise<boolean>;
  close(): Promise<void>;
};

/** Until `res` may take more, or is closed. */
const drained = (res: ServerResponse): Promise<void> =>
  new Promise<void>((resolve) => (res.once('drain', resolve), res.once('close', resolve)));

/** Write `piece()` again and again (heeding backpressure) until the client goes or `bound` bytes are out. */

export async function writeEndlessly(
  res: ServerResponse,
  head: string,
  piece: () => string,
  bound = ENDLESS_BOUND,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  const out = (text: string): Promise<void> | null => {
    sent += Buffer.byteLength(text);
    return res.write(text) ? null : drained(res);
  };
  await out(head);
  while (!res.destroyed && sent < bound) await out(piece());
  res.end();
}

/** Write `text` as a body of `type`, in pieces, stopping when the client goes. */
export async function writeBody(res: ServerResponse, type: string, text: string): Promise<void> {
  res.writeHead(200, { 'content-type': type });
  const STEP = 1024 * 1024;
  for (let i = 0; i < text.length && !res.destroyed; i += STEP) {
    if (!res.write(text.slice(i, i + STEP))) await drained(res);
  }
  res.end();
}

/** Start a server answering every POST with `answer`. */
export async function startHostile(answer: (res: ServerResponse) => Promise<void> | void): Promise<Hostile> {
  let last: Promise<boolean> = Promise.resolve(false);
  const http = createServer((req, res) => {
    last = new Promise<boolean>((resolve) => {
      let finished = false;
      res.once('finish', () => (finished = true));
      res.once('close', () => resolve(!finished));
    });
    req.resume();
    req.once('end', () => void Promise.resolve(answer(res)).catch(() => res.destroy()));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    baseURL: `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`,
    closedEarly: () => last,
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}
