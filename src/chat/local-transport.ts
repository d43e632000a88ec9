/**
 * `localChatTransport`: the chat engine as a `ChatTransport`, so a page runs its turns itself.
 * @module
 */
import type { UIMessageChunk } from 'ai';
import { chatEngine } from './engine.ts';
import { checkChatOptions, LOCAL_TRANSPORT_KEYS } from './options.ts';
import type { LocalChatTransport, LocalChatTransportOptions } from './types.ts';

/**
 * A `ChatTransport` that runs each turn in the page (usually on an `IndexedDBStore`):
 * `sendMessages` posts to the chat engine, `reconnectToStream` continues a turn a reload
 * interrupted (its log replayed, then the turn resumed and followed). Replays start from the
 * turn's beginning (`resumeStreamIsReplay: true`). Errors reject `sendMessages` as the engine
 * throws them (`InvalidRequestError`, `InvalidInputError`, `RunLockedError`). `stop(chatId, {
 * reason })` stops the chat's latest turn (`useChat`'s own `stop()` only stops following it).
 *
 * @example
 * const transport = localChatTransport({ agent, store: new IndexedDBStore({ dbName: 'chat' }), request });
 * const chat = useChat({ id, transport, messages: await loadChat(store, id), resume: true });
 */
export function localChatTransport(options: LocalChatTransportOptions): LocalChatTransport {
  checkChatOptions(options, LOCAL_TRANSPORT_KEYS, 'localChatTransport');
  const engine = chatEngine(options);
  return {
    resumeStreamIsReplay: true,
    async sendMessages({ chatId, messages, trigger, messageId, abortSignal, body }) {
      const extra = typeof body === 'object' && body !== null ? body : {};
      const posted = { ...extra, id: chatId, messages, trigger, messageId };
      return copies(await engine.post(posted, abortSignal ? { signal: abortSignal } : {}));
    },
    async reconnectToStream({ chatId, abortSignal }) {
      const stream = await engine.reconnect(chatId, abortSignal ? { signal: abortSignal } : {});
      return stream === null ? null : copies(stream);
    },
    stop: (chatId, stopOptions) => engine.stop(chatId, stopOptions),
  };
}

/**
 * Each chunk copied: the AI SDK keeps data chunks as message parts and changes them in place,
 * and a chunk object is shared by every stream of a turn (HTTP gets copies by serialising).
 */
function copies(stream: ReadableStream<UIMessageChunk>): ReadableStream<UIMessageChunk> {
  const copy = new TransformStream<UIMessageChunk, UIMessageChunk>({
    transform: (chunk, c) => c.enqueue(structuredClone(chunk)),
  });
  return stream.pipeThrough(copy);
}
