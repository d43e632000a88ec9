/**
 * The chat page: the AI SDK's real `useChat` over PolyLoop's durable turns, in the tab
 * (`?mode=local`) or on a server (`?api=<base>&token=<t>`). On load it restores the conversation
 * from the turns' logs and follows a turn that is still running (`resume: true`); a stream the
 * network cut (a server that died) is reconnected until the server answers again.
 * Bundle: `npm run example:chat-page` (see README.md).
 */
import { useChat } from '@ai-sdk/react';
import type { UseChatHelpers } from '@ai-sdk/react';
import type { UIMessage } from 'ai';
import { useEffect, useRef, useState } from 'react';
import type { JSX } from 'react';
import { createRoot } from 'react-dom/client';
import { MessageView } from './parts.tsx';
import type { PartActions, SettleReply } from './parts.tsx';
import { chatSetup, outbox } from './setup.ts';
import type { ChatSetup } from './setup.ts';

/** A network failure (a fetch refused, a stream cut short): worth reconnecting to. */
function isNetworkError(e: Error | undefined): boolean {
  return e !== undefined && (e.name === 'TypeError' || /network|fetch|terminated/i.test(e.message));
}

/** How many reconnects in a row before the page stops trying (the button still works). */
const MAX_RECONNECTS = 120;

function Composer({ busy, send }: { busy: boolean; send: (text: string) => void }): JSX.Element {
  const [text, setText] = useState('');
  return (
    <form
      id="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (busy || text.trim() === '') return;
        send(text.trim());
        setText('');
      }}
    >
      <input
        id="prompt"
        placeholder='Try "weather in Oslo", "email bob@example.com", "ask me"'
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <button id="send" disabled={busy}>
        Send
      </button>
    </form>
  );
}

/** The part actions: each changes the last assistant message, then sends it back (the turn continues). */
function useActions(chat: UseChatHelpers<UIMessage>): PartActions {
  const { addToolApprovalResponse, addToolOutput, setMessages, sendMessage } = chat;
  return {
    approve: (id, approved, reason) =>
      void (async () => {
        await addToolApprovalResponse(reason === '' ? { id, approved } : { id, approved, reason });
        await sendMessage();
      })(),
    answer: (tool, toolCallId, text) =>
      void (async () => {
        await addToolOutput({ tool, toolCallId, output: text });
        await sendMessage();
      })(),
    settle: (partId: string, reply: SettleReply) => {
      // The reply rides in the settle part's data; the server reads it from the message sent back.
      const answered = (p: UIMessage['parts'][number]): UIMessage['parts'][number] => {
        if (p.type !== 'data-polyloop-settle' || !('id' in p) || p.id !== partId) return p;
        return { ...p, data: { ...(p.data as object), reply } };
      };
      setMessages((messages) => messages.map((m) => ({ ...m, parts: m.parts.map(answered) })));
      void sendMessage();
    },
  };
}

function Chat({ setup }: { setup: ChatSetup }): JSX.Element {
  const { chatId: id, transport, initial } = setup;
  const chat = useChat<UIMessage>({ id, transport, messages: initial, resume: true });
  const { messages, status, error, sendMessage, resumeStream } = chat;
  const actions = useActions(chat);
  const reconnects = useRef(0);
  useEffect(() => {
    if (status === 'streaming') reconnects.current = 0;
    if (status !== 'error' || !isNetworkError(error) || reconnects.current >= MAX_RECONNECTS) return;
    // The server went away mid-turn: ask again until it is back; its GET …/stream follows the turn.
    const timer = setTimeout(() => {
      reconnects.current++;
      void resumeStream();
    }, 500);
    return () => clearTimeout(timer);
  }, [status, error, resumeStream]);
  const busy = status === 'submitted' || status === 'streaming';
  const sent = setup.mode === 'local' ? outbox().length : null;
  return (
    <main id="chat" data-status={status} data-mode={setup.mode} data-chat={setup.chatId}>
      <header className="bar">
        <span>
          chat <code id="chat-id">{setup.chatId}</code> in {setup.where}
        </span>
        <span id="status" className={`pill ${status}`}>
          {status}
        </span>
        <button id="reconnect" onClick={() => void resumeStream()}>
          Reconnect
        </button>
        <a href={newChatHref()}>New chat</a>
        {sent !== null && (
          <span>
            emails sent: <b id="outbox-count">{sent}</b>
          </span>
        )}
      </header>
      {error && <p id="error">{error.message}</p>}
      <ol id="messages">
        {messages.map((m, i) => (
          <MessageView key={m.id} message={m} actions={actions} awaiting={!busy && i === messages.length - 1} />
        ))}
      </ol>
      <Composer busy={busy} send={(text) => void sendMessage({ text })} />
    </main>
  );
}

function newChatHref(): string {
  const url = new URL(location.href);
  url.searchParams.delete('chat');
  return url.href;
}

function App(): JSX.Element {
  const [setup, setSetup] = useState<ChatSetup | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    chatSetup(location.href).then(setSetup, (e: unknown) => setFailed(e instanceof Error ? e.message : String(e)));
  }, []);
  if (failed !== null) return <p id="error">The chat could not start: {failed}</p>;
  if (setup === null) return <p>Loading the conversation…</p>;
  return <Chat setup={setup} />;
}

const root = document.getElementById('root');
if (root) createRoot(root).render(<App />);
