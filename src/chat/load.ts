/**
 * `loadChat`: a chat's whole conversation as UI messages, rebuilt from its turns' logs.
 * @module
 */
import type { RunStore } from '../core/index.ts';
import type { UIMessage } from 'ai';

/**
 * Every turn of the chat as UI messages — per turn the user's message and the assistant's (text,
 * reasoning, tool parts with their states, approvals) — read from the turns' logs, so a page
 * reload needs no second message store. Turns are read from 1 up to the first that does not
 * exist. `[]` for an unknown chat; `InvalidRequestError` for a malformed chat id.
 *
 * @example
 * const chat = useChat({ id, messages: await loadChat(store, id), resume: true });
 */
export async function loadChat(store: RunStore, chatId: string): Promise<UIMessage[]> {
  void store;
  void chatId;
  throw new Error('loadChat: not implemented yet');
}
