/**
 * `localChatTransport`: the chat engine as a `ChatTransport`, so a page runs its turns itself.
 * @module
 */
import type { ChatTransport, UIMessage } from 'ai';
import type { LocalChatTransportOptions } from './types.ts';

/**
 * A `ChatTransport` that runs each turn in the page (usually on an `IndexedDBStore`):
 * `sendMessages` posts to the chat engine, `reconnectToStream` continues a turn a reload
 * interrupted (its log replayed, then the turn resumed and followed). Replays start from the
 * turn's beginning (`resumeStreamIsReplay: true`).
 *
 * @example
 * const transport = localChatTransport({ agent, store: new IndexedDBStore({ dbName: 'chat' }), request });
 * const chat = useChat({ id, transport, messages: await loadChat(store, id), resume: true });
 */
export function localChatTransport(options: LocalChatTransportOptions): ChatTransport<UIMessage> {
  void options;
  throw new Error('localChatTransport: not implemented yet');
}
