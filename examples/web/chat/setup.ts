/**
 * What the chat page talks to, chosen by its URL: `?mode=local` runs the turns in this tab
 * (`localChatTransport` over IndexedDB), `?api=<base>&token=<t>` sends them to a server
 * (`DefaultChatTransport`, `Authorization: Bearer <t>`). `?chat=<id>` names the conversation
 * (a new id is put into the URL when there is none, so a reload finds the same chat). Both
 * modes can stop the chat's running turn: the transport's `stop` in the tab, `POST <base>`
 * with `{ id, stop: { reason } }` on a server.
 */
import { DefaultChatTransport } from 'ai';
import type { ChatTransport, UIMessage } from 'ai';
import { loadChat, localChatTransport } from '../../../src/chat/index.ts';
import type { ChatStopResult } from '../../../src/chat/index.ts';
import { silentSink } from '../../../src/core/index.ts';
import { IndexedDBStore } from '../../../src/platform-web/index.ts';
import { chatAgent } from './agent.ts';
import type { Email, HoldPoint } from './agent.ts';

/** The localStorage key of the local mode's outbox: every email `send_email` sent, in order. */
export const OUTBOX_KEY = 'polyloop-chat-outbox';
/** The localStorage key that holds a turn at `point` while it is set (for tests and demos). */
export const holdKey = (point: HoldPoint): string => `polyloop-chat-hold:${point}`;

/** The page's chat: its id, where its turns run, and the conversation so far. */
export type ChatSetup = {
  readonly mode: 'local' | 'remote';
  readonly chatId: string;
  readonly transport: ChatTransport<UIMessage>;
  /** The conversation rebuilt from the turns' logs (local) or fetched from the server (remote, when it offers it). */
  readonly initial: UIMessage[];
  /** Where the turns run, for the page's header. */
  readonly where: string;
  /** Stop the chat's latest turn (`runId`: the one the page shows; refused when a later one exists). */
  readonly stop: (runId: string | undefined, reason: string) => Promise<ChatStopResult>;
  /** The conversation as the logs have it now (after a stop that ended a turn no stream followed). */
  readonly load: () => Promise<UIMessage[]>;
};

/** Thrown for a request the chat refused (its message is the server's or the engine's): what a person can put right. */
export class RefusedError extends Error {
  override readonly name = 'RefusedError';
}

/** The emails the local mode sent (localStorage: outside the run, like a real outbox). */
export function outbox(): Email[] {
  try {
    const sent = JSON.parse(localStorage.getItem(OUTBOX_KEY) ?? '[]') as unknown;
    return Array.isArray(sent) ? (sent as Email[]) : [];
  } catch {
    return [];
  }
}

/** The chat id of the URL, or a new one written into it (replaceState: a reload keeps it). */
function chatIdOf(url: URL): string {
  const given = url.searchParams.get('chat');
  if (given !== null && given !== '') return given;
  const id = `c${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
  url.searchParams.set('chat', id);
  history.replaceState(null, '', url);
  return id;
}

function localSetup(url: URL, chatId: string): Promise<ChatSetup> {
  const store = new IndexedDBStore({ dbName: 'polyloop-chat-example' });
  const delayMs = Number(url.searchParams.get('delay') ?? '60');
  const { agent, request } = chatAgent(store, silentSink(), {
    delayMs: Number.isFinite(delayMs) && delayMs >= 0 ? delayMs : 60,
    sendEmail: (email) => localStorage.setItem(OUTBOX_KEY, JSON.stringify([...outbox(), email])),
    held: (point) => localStorage.getItem(holdKey(point)) !== null,
  });
  const transport = localChatTransport({ agent, store, request });
  const where = 'this tab (IndexedDB)';
  const stop = (runId: string | undefined, reason: string): Promise<ChatStopResult> =>
    transport.stop(chatId, { ...(runId === undefined ? {} : { runId }), ...(reason === '' ? {} : { reason }) });
  const load = (): Promise<UIMessage[]> => loadChat(store, chatId);
  return load().then((initial) => ({ mode: 'local', chatId, transport, initial, where, stop, load }));
}

/**
 * The conversation from the server: `GET <api>/<chatId>/messages` (the Node example serves it
 * with `loadChat`). A server without that route gives `[]`; `useChat({ resume: true })` still
 * follows a turn that is running.
 */
async function fetchMessages(api: string, chatId: string, headers: Record<string, string>): Promise<UIMessage[]> {
  try {
    const res = await fetch(`${api}/${encodeURIComponent(chatId)}/messages`, { headers });
    if (!res.ok) return [];
    const body = (await res.json()) as unknown;
    return Array.isArray(body) ? (body as UIMessage[]) : [];
  } catch {
    return [];
  }
}

/** `POST <api>` with `{ id, stop: { reason }, runId }`: chatHandler stops the turn and says how it went. */
async function postStop(api: string, body: unknown, headers: Record<string, string>): Promise<ChatStopResult> {
  const res = await fetch(api, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  if (!res.ok) throw new RefusedError(answer?.error?.message ?? `the stop was refused (${res.status})`);
  return answer as ChatStopResult;
}

async function remoteSetup(url: URL, api: string, chatId: string): Promise<ChatSetup> {
  const token = url.searchParams.get('token');
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  // DefaultChatTransport reconnects with GET <api>/<chatId>/stream, the route chatHandler serves.
  const transport = new DefaultChatTransport<UIMessage>({ api, headers });
  const stop = (runId: string | undefined, reason: string): Promise<ChatStopResult> =>
    postStop(
      api,
      { id: chatId, ...(runId === undefined ? {} : { runId }), stop: reason === '' ? {} : { reason } },
      headers,
    );
  const load = (): Promise<UIMessage[]> => fetchMessages(api, chatId, headers);
  return { mode: 'remote', chatId, transport, initial: await load(), where: api, stop, load };
}

/** The page's chat, from `location`. */
export function chatSetup(href: string): Promise<ChatSetup> {
  const url = new URL(href);
  const chatId = chatIdOf(url);
  const api = url.searchParams.get('api');
  if (api !== null && api !== '' && url.searchParams.get('mode') !== 'local') {
    return remoteSetup(url, api.replace(/\/+$/, ''), chatId);
  }
  return localSetup(url, chatId);
}
