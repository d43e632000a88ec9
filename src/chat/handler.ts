/**
 * `chatHandler`: the chat engine behind a Web-standard `Request → Response` function, speaking
 * the UI message stream protocol over SSE.
 * @module
 */
import { isPolyLoopError } from '../core/index.ts';
import { declaresMoreThan, errorBody, readCapped } from '../core/internal-entry.ts';
import type { UIMessageChunk } from 'ai';
import { parseChatStop } from './body.ts';
import { chatEngine } from './engine.ts';
import { CHAT_HANDLER_KEYS, checkChatOptions } from './options.ts';
import type { ChatHandlerOptions } from './types.ts';

/** Default largest POST body: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** The headers of a UI message stream response (as the AI SDK's own `createUIMessageStreamResponse` sends them). */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
});

/** An error response's code. */
type ErrorCode = 'bad_request' | 'not_found' | 'method_not_allowed' | 'conflict' | 'payload_too_large' | 'internal';

class HttpError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  constructor(status: number, code: ErrorCode, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * A fetch-style handler for `useChat`'s `DefaultChatTransport`: `POST <base>` with the
 * transport's body streams the turn (`x-vercel-ai-ui-message-stream: v1`, SSE, `data: [DONE]`
 * last); `GET <base>/:chatId/stream` reconnects (`204` when no turn runs). Errors are JSON
 * `{ error: { code, message } }`: `400 bad_request`, `404 not_found`, `405 method_not_allowed`,
 * `409 conflict`, `413 payload_too_large`, `500 internal` (no detail). A client that goes away
 * ends its stream, never the turn: it runs on, and a reconnect follows it. `POST <base>` with
 * `{ id, stop: { reason? }, runId? }` stops the chat's latest turn (`ChatEngine.stop`) and answers
 * `200 { runId, state }`.
 *
 * @example
 * const handle = chatHandler({ agent, store: new FileStore({ dir: './chats' }), request });
 * app.post('/api/chat', (c) => handle(c.req.raw));
 * app.get('/api/chat/:id/stream', (c) => handle(c.req.raw));
 */
export function chatHandler(options: ChatHandlerOptions): (req: Request) => Promise<Response> {
  checkChatOptions(options, CHAT_HANDLER_KEYS, 'chatHandler');
  const { maxBodyBytes = DEFAULT_MAX_BODY_BYTES, ...rest } = options;
  const engine = chatEngine(rest);
  return async (req: Request): Promise<Response> => {
    try {
      if (req.method === 'POST') {
        const body = await readJson(req, maxBodyBytes);
        const stop = parseChatStop(body);
        if (stop === null) return sse(await engine.post(body, { signal: req.signal }));
        const { chatId, ...options } = stop;
        return json(await engine.stop(chatId, options));
      }
      if (req.method === 'GET') {
        const stream = await engine.reconnect(chatIdOfPath(new URL(req.url).pathname), { signal: req.signal });
        return stream === null ? new Response(null, { status: 204 }) : sse(stream);
      }
      const how = 'use POST to send a message, GET …/:chatId/stream to reconnect';
      return errorResponse(new HttpError(405, 'method_not_allowed', how), { allow: 'GET, POST' });
    } catch (e) {
      return errorResponse(e);
    }
  };
}

/** `…/:chatId/stream` → chatId (decoded; the engine checks it). */
function chatIdOfPath(pathname: string): string {
  const segments = pathname.split('/');
  const last = segments.at(-1);
  const id = segments.at(-2);
  if (last !== 'stream' || id === undefined || id === '') {
    throw new HttpError(404, 'not_found', 'reconnect with GET …/:chatId/stream');
  }
  try {
    return decodeURIComponent(id);
  } catch {
    throw new HttpError(400, 'bad_request', 'the chat id in the path is not valid percent-encoding');
  }
}

/** The body as JSON, read up to `max` bytes: 413 beyond, 400 for anything but UTF-8 JSON. */
async function readJson(req: Request, max: number): Promise<unknown> {
  if (declaresMoreThan(req, max)) throw tooLarge(max);
  if (req.body === null) throw new HttpError(400, 'bad_request', 'the body must be JSON');
  const bytes = await readCapped(req.body, max);
  if (bytes === null) {
    await req.body.cancel().catch(() => undefined); // the refusal stands whatever the cancel does
    throw tooLarge(max);
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)) as unknown;
  } catch {
    throw new HttpError(400, 'bad_request', 'the body must be JSON (UTF-8)');
  }
}

const tooLarge = (max: number): HttpError => new HttpError(413, 'payload_too_large', `the body is over ${max} bytes`);

/** The chunks as SSE: `data: <json>` each, `data: [DONE]` last; encoded in the same step (one stage, not two). */
function sse(stream: ReadableStream<UIMessageChunk>): Response {
  const encoder = new TextEncoder();
  const body = stream.pipeThrough(
    new TransformStream<UIMessageChunk, Uint8Array>({
      transform: (chunk, c) => c.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`)),
      flush: (c) => c.enqueue(encoder.encode('data: [DONE]\n\n')),
    }),
  );
  return new Response(body, { status: 200, headers: { ...UI_MESSAGE_STREAM_HEADERS } });
}

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
}

function errorResponse(e: unknown, headers: Record<string, string> = {}): Response {
  const err = toHttpError(e);
  return new Response(JSON.stringify(errorBody(err.code, err.message)), {
    status: err.status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

function toHttpError(e: unknown): HttpError {
  if (e instanceof HttpError) return e;
  if (isPolyLoopError(e, 'invalid_request')) return new HttpError(400, 'bad_request', e.message);
  const conflict = isPolyLoopError(e, 'invalid_input') || isPolyLoopError(e, 'run_locked');
  if (conflict) return new HttpError(409, 'conflict', (e as Error).message);
  return new HttpError(500, 'internal', 'the chat turn could not be served');
}
