/**
 * The chat engine: turns as runs, streams as replays of their logs followed live. Every chat
 * host (HTTP handler, in-page transport, a Worker route) wraps this one piece.
 * @module
 */
import type { ChatEngine, ChatEngineOptions } from './types.ts';

/**
 * The transport-free chat core: `post` a `DefaultChatTransport` body (or `{ id, input }`) and
 * get the turn's UI message stream; `reconnect` to the latest turn; `load` the conversation.
 * `chatHandler` and `localChatTransport` are thin wrappers over it.
 *
 * @example
 * const chat = chatEngine({ agent, store, request });
 * const stream = await chat.post(await req.json());
 */
export function chatEngine(options: ChatEngineOptions): ChatEngine {
  void options;
  throw new Error('chatEngine: not implemented yet');
}
