/**
 * `polyloop/chat` — PolyLoop speaks the AI SDK's UI message stream, so a chat page built with
 * `useChat` gets durable turns: each user message is one run with a deterministic run id, its
 * history comes from the previous turn's log (never from the client), approvals survive a crash
 * and a reload, and a reconnect replays the turn from its log and then follows it live.
 * `ai` is an optional peer dependency, used for its types only.
 *
 * @example
 * import { chatHandler } from 'polyloop/chat';
 * const request = ({ runId, goal, context }: ChatTurn) => ({ ...base, runId, context: { run: context, goal } });
 * const handle = chatHandler({ agent, store, request });
 * app.all('/api/chat/*', (c) => handle(c.req.raw)); // POST /api/chat, GET /api/chat/:chatId/stream
 * @module
 */
export { chatEngine } from './engine.ts';
export { chatHandler } from './handler.ts';
export { loadChat } from './load.ts';
export { localChatTransport } from './local-transport.ts';
export { toUIMessageStream } from './event-stream.ts';
export { chatRunId } from './turn-id.ts';
export type { ToUIMessageStreamOptions } from './event-stream.ts';
export type {
  ChatCallOptions,
  ChatEngine,
  ChatEngineOptions,
  ChatHandlerOptions,
  ChatOptions,
  ChatStopOptions,
  ChatStopResult,
  ChatTurn,
  LocalChatTransport,
  LocalChatTransportOptions,
} from './types.ts';
