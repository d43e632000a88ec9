/**
 * `chatHandler`: the chat engine behind a Web-standard `Request → Response` function, speaking
 * the UI message stream protocol over SSE.
 * @module
 */
import type { ChatHandlerOptions } from './types.ts';

/**
 * A fetch-style handler for `useChat`'s `DefaultChatTransport`: `POST <base>` with the
 * transport's body streams the turn (`x-vercel-ai-ui-message-stream: v1`, SSE, `data: [DONE]`
 * last); `GET <base>/:chatId/stream` reconnects (`204` when no turn runs). Errors are JSON
 * `{ error: { code, message } }`: `400 bad_request`, `404 not_found`, `405`, `409 conflict`,
 * `413 payload_too_large`.
 *
 * @example
 * const handle = chatHandler({ agent, store: new FileStore({ dir: './chats' }), request });
 * app.post('/api/chat', (c) => handle(c.req.raw));
 * app.get('/api/chat/:id/stream', (c) => handle(c.req.raw));
 */
export function chatHandler(options: ChatHandlerOptions): (req: Request) => Promise<Response> {
  void options;
  throw new Error('chatHandler: not implemented yet');
}
