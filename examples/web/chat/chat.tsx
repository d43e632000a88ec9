/**
 * The chat page: the AI SDK's real `useChat` over PolyLoop's durable turns, in the tab
 * (`?mode=local`) or on a server (`?api=<base>&token=<t>`). On load it restores the conversation
 * from the turns' logs and follows a turn that is still running (`resume: true`); a stream the
 * network cut (a server that died) is reconnected until the server answers again. A person may
 * approve a call with other arguments (a `data-polyloop-edit` part beside the approval) and stop
 * the running turn (Stop: the chat's stop, not `useChat`'s, which would only stop following it).
 * Bundle: `npm run example:chat-page` (see README.md).
 */
import { useChat } from '@ai-sdk/react';
import type { UseChatHelpers } from '@ai-sdk/react';
import type { UIMessage } from 'ai';
import { useEffect, useRef, useState } from 'react';
import type { JSX, RefObject } from 'react';
import { createRoot } from 'react-dom/client';
import { chatRunId } from '../../../src/chat/index.ts';
import type { JsonObject } from '../../../src/core/index.ts';
import { MessageView } from './parts.tsx';
import type { PartActions, SettleReply } from './parts.tsx';
import { chatSetup, outbox } from './setup.ts';
import type { ChatSetup } from './setup.ts';

type Part = UIMessage['parts'][number];

/** A network failure (a fetch refused, a stream cut short): worth reconnecting to. */
function isNetworkError(e: Error | undefined): boolean {
  return e !== undefined && (e.name === 'TypeError' || /network|fetch|terminated/i.test(e.message));
}

/** How many reconnects in a row before the page stops trying (the button still works). */
const MAX_RECONNECTS = 120;

/**
 * A request the chat refused, in words (a server's `{ error: { message } }` body, or the error the
 * in-tab engine threw), or null for any other failure: a refusal is for the person to put right.
 */
function refusal(e: Error | undefined): string | null {
  if (e === undefined) return null;
  if (e.name === 'InvalidInputError' || e.name === 'InvalidRequestError') return e.message;
  try {
    const body = JSON.parse(e.message) as { error?: { code?: string; message?: string } };
    const code = body.error?.code;
    return code === 'conflict' || code === 'bad_request' ? (body.error?.message ?? null) : null;
  } catch {
    return null;
  }
}

const asks = (p: Part, approvalId: string): boolean =>
  'approval' in p && (p.approval as { id?: string } | undefined)?.id === approvalId;

/** The messages with the approval's `data-polyloop-edit` part (the person's arguments) on the message asking it. */
function withEdit(messages: UIMessage[], approvalId: string, args: JsonObject): UIMessage[] {
  const edit = { type: 'data-polyloop-edit', id: approvalId, data: { arguments: args } } as Part;
  return messages.map((m) => {
    if (!m.parts.some((p) => asks(p, approvalId))) return m;
    const others = m.parts.filter((p) => !(p.type === 'data-polyloop-edit' && 'id' in p && p.id === approvalId));
    return { ...m, parts: [...others, edit] };
  });
}

/** The messages with an approval the server refused asked again: its edit part gone, its part waiting. */
function askedAgain(messages: UIMessage[], approvalId: string): UIMessage[] {
  return messages.map((m) => ({
    ...m,
    parts: m.parts.flatMap((p): Part[] => {
      if (p.type === 'data-polyloop-edit' && 'id' in p && p.id === approvalId) return [];
      if (!asks(p, approvalId) || !('approval' in p) || p.approval === undefined) return [p];
      const { approved: _a, reason: _r, ...approval } = p.approval as Record<string, unknown>;
      return [{ ...p, state: 'approval-requested', approval } as Part];
    }),
  }));
}

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

/**
 * The part actions: each changes the last assistant message, then sends it back (the turn
 * continues). `failure` holds the error of the last request (useChat's `onError`).
 */
function useActions(chat: UseChatHelpers<UIMessage>, failure: RefObject<Error | null>): PartActions {
  const { addToolApprovalResponse, addToolOutput, setMessages, sendMessage } = chat;
  const drafts = useRef(new Map<string, string>());
  return {
    approve: (id, approved, reason) =>
      void (async () => {
        await addToolApprovalResponse(reason === '' ? { id, approved } : { id, approved, reason });
        await sendMessage();
      })(),
    approveEdited: (id, args) =>
      void (async () => {
        // The edit rides in the message, beside the approval: a retry of the same message carries it again.
        setMessages((messages) => withEdit(messages, id, args));
        await addToolApprovalResponse({ id, approved: true });
        failure.current = null;
        await sendMessage();
        // Refused (arguments the tool does not take): ask again, with what the person typed, to be put right.
        if (refusal(failure.current ?? undefined) === null) return drafts.current.delete(id);
        drafts.current.set(id, JSON.stringify(args, null, 2));
        setMessages((messages) => askedAgain(messages, id));
      })(),
    draftOf: (id) => drafts.current.get(id),
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

/** The run id of the turn the page shows last: a turn per user message (see docs/chat.md), none before the first. */
function lastRunId(chatId: string, messages: readonly UIMessage[]): string | undefined {
  const turn = messages.filter((m) => m.role === 'user').length;
  return turn === 0 ? undefined : chatRunId(chatId, turn);
}

/**
 * Stop: the chat's stop of its latest turn, with a reason. A turn streaming here ends its stream
 * itself (`finish`, metadata `stopRequest`); one no stream follows (it waited for a person) is
 * read again from the logs.
 */
function StopControl({ setup, chat }: { setup: ChatSetup; chat: UseChatHelpers<UIMessage> }): JSX.Element {
  const [reason, setReason] = useState('');
  const [said, setSaid] = useState('');
  const { messages, status, setMessages } = chat;
  const stop = async (): Promise<void> => {
    const following = status === 'submitted' || status === 'streaming';
    try {
      const done = await setup.stop(lastRunId(setup.chatId, messages), reason.trim());
      setSaid(done.state);
      if (!following) setMessages(await setup.load());
    } catch (e) {
      setSaid(`refused: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  return (
    <span className="stop">
      <input
        id="stop-reason"
        placeholder="why stop (optional)"
        value={reason}
        onChange={(e) => setReason(e.target.value)}
      />
      <button id="stop" disabled={messages.length === 0} onClick={() => void stop()}>
        Stop
      </button>
      {said !== '' && <span id="stop-state">{said}</span>}
    </span>
  );
}

function Chat({ setup }: { setup: ChatSetup }): JSX.Element {
  const { chatId: id, transport, initial } = setup;
  const failure = useRef<Error | null>(null);
  const onError = (e: Error): void => void (failure.current = e);
  const chat = useChat<UIMessage>({ id, transport, messages: initial, resume: true, onError });
  const { messages, status, error, sendMessage, resumeStream } = chat;
  const actions = useActions(chat, failure);
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
        <StopControl setup={setup} chat={chat} />
        <a href={newChatHref()}>New chat</a>
        {sent !== null && (
          <span>
            emails sent: <b id="outbox-count">{sent}</b>
          </span>
        )}
      </header>
      {error && <p id="error">{refusal(error) ?? error.message}</p>}
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
