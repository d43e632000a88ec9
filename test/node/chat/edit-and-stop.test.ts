/**
 * A person in control of a chat turn, over real HTTP: `chatHandler` on a loopback server, the AI
 * SDK's own chat state machine with its `DefaultChatTransport`, turns in a `FileStore`. An approval
 * with edited arguments (a `data-polyloop-edit` part beside the approval response) runs them, and
 * the turn shows both what the model proposed and what ran; an edit the tool refuses is a clear
 * error with nothing written; `POST { id, stop }` ends a turn, shown as stopped with its reason —
 * after a restart too.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { DefaultChatTransport, validateUIMessages } from 'ai';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadChat } from '../../../src/chat/index.ts';
import { readRunLog, requestStop } from '../../../src/core/index.ts';
import type { JsonObject, LogRecord, Message, ToolSpec } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { chatModel, deferred, testChat, textOf, toolPart, UiChat } from './fixtures.ts';
import type { ChatModel, Say, TestChat } from './fixtures.ts';

const SEND: Say = { text: 'Sending.', call: { name: 'send_email', args: { to: 'a@b' } } };
const EDITED = 'A person changed the arguments of this call before it ran, to {"to":"c@d"}.\n';

/** `chatHandler` on 127.0.0.1 over a FileStore in `dir`, and a `DefaultChatTransport` that calls it over HTTP. */
type Host = {
  readonly chat: TestChat;
  readonly store: FileStore;
  readonly transport: DefaultChatTransport<UIMessage>;
  readonly post: (body: unknown) => Promise<Response>;
  readonly close: () => Promise<void>;
};

async function host(dir: string, model: ChatModel, tools: readonly ToolSpec[] = []): Promise<Host> {
  const store = new FileStore({ dir });
  const chat = testChat(model, { store, tools });
  const server = createServer(getRequestListener((req) => chat.handle(req)));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`;
  return {
    chat,
    store,
    transport: new DefaultChatTransport<UIMessage>({ api }),
    post: (body) =>
      fetch(api, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** The messages with a `data-polyloop-edit` part for `approvalId` (replacing one there) on the message asking it. */
function withEdit(messages: readonly UIMessage[], approvalId: string, args: unknown): UIMessage[] {
  const asks = (p: UIMessage['parts'][number]): boolean =>
    (p as { approval?: { id?: string } }).approval?.id === approvalId;
  const edit = { type: 'data-polyloop-edit', id: approvalId, data: { arguments: args } } as UIMessage['parts'][number];
  return messages.map((m) => {
    if (!m.parts.some(asks)) return m;
    const others = m.parts.filter((p) => !(p.type === 'data-polyloop-edit' && 'id' in p && p.id === approvalId));
    return { ...m, parts: [...others, edit] };
  });
}

function editPart(m: UIMessage): unknown {
  return m.parts.find((p) => p.type === 'data-polyloop-edit');
}

const lastToolResult = (messages: readonly Message[] | undefined): string | undefined =>
  messages?.at(-1)?.content.flatMap((b) => (b.type === 'tool_result' ? [b.text] : []))[0];

/** A tool that runs until its signal aborts, telling `reached` it started; `seen` gets the abort's reason. */
function slowTool(reached: () => void, seen: unknown[]): ToolSpec {
  return {
    name: 'slow',
    description: 'Takes its time.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    replayPolicy: 'safe',
    handler: (_args, { signal }) =>
      new Promise<string>((_, reject) => {
        reached();
        signal.addEventListener('abort', () => (seen.push(signal.reason), reject(signal.reason)), { once: true });
      }),
  };
}

async function approveEdited(ui: UiChat, args: unknown): Promise<void> {
  const id = toolPart(ui.last).approval?.id ?? '';
  ui.messages = withEdit(ui.messages, id, args);
  await ui.addToolApprovalResponse({ id, approved: true });
  await ui.sendMessage();
}

describe('edit on approval through the UI message stream', () => {
  it('runs the edited arguments; the tool part keeps the proposal and says what ran; a restart shows the same', async () => {
    const dir = await tempDir('polyloop-chat-edit-');
    const model = chatModel([SEND, { text: 'Sent.' }]);
    const h = await host(dir, model);
    const ui = new UiChat({ id: 'e1', transport: h.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    await approveEdited(ui, { to: 'c@d' });
    expect(ui.status).toBe('ready');
    const part = toolPart(ui.last);
    expect(part).toMatchObject({ type: 'tool-send_email', state: 'output-available', input: { to: 'a@b' } });
    expect(part).toMatchObject({ output: 'sent to c@d', approval: { id: 'chat:e1:1:s0.input', approved: true } });
    expect(part['resultProviderMetadata']).toEqual({ polyloop: { editedArguments: { to: 'c@d' } } });
    const data = { runId: 'chat:e1:1', resultId: 's0.input', toolCallId: part.toolCallId, toolName: 'send_email' };
    const edit = { ...data, proposed: { to: 'a@b' }, arguments: { to: 'c@d' } };
    expect(editPart(ui.last)).toEqual({ type: 'data-polyloop-edit', id: 'chat:e1:1:s0.input', data: edit });
    expect(textOf(ui.last)).toBe('Sending.Sent.');
    expect(h.chat.counters.send).toBe(1);
    // The model reads its own call as it made it, and the result saying what the person changed.
    const seen = model.seen[1];
    expect(JSON.stringify(seen?.at(-2))).toContain('"to":"a@b"');
    expect(lastToolResult(seen)).toBe(`${EDITED}sent to c@d`);
    const input = (await h.store.readLog('chat:e1:1')).find((r) => r.kind === 'input');
    expect(input).toMatchObject({ reply: { kind: 'approve', resultId: 's0.input', arguments: { to: 'c@d' } } });
    await h.close();
    const again = await host(dir, chatModel([]));
    const loaded = await loadChat(again.store, 'e1');
    expect(loaded[1]).toEqual(ui.last);
    await expect(validateUIMessages({ messages: loaded })).resolves.toHaveLength(2);
    expect(await again.transport.reconnectToStream({ chatId: 'e1' })).toBeNull();
    await again.close();
  });

  it('an edit the tool refuses is a 409 naming every problem, nothing written; the edit fixed, the same approval goes', async () => {
    const dir = await tempDir('polyloop-chat-edit-');
    const h = await host(dir, chatModel([SEND, { text: 'Sent.' }]));
    const ui = new UiChat({ id: 'e2', transport: h.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    const before = await h.store.readLog('chat:e2:1');
    await approveEdited(ui, { to: 5, cc: 'x@y' });
    expect(ui.status).toBe('error');
    const refused = JSON.parse(ui.error?.message ?? '{}') as { error: { code: string; message: string } };
    expect(refused.error.code).toBe('conflict');
    expect(refused.error.message).toContain('the edited arguments are refused');
    expect(refused.error.message).toContain('/to');
    expect(refused.error.message).toContain('cc');
    expect(await h.store.readLog('chat:e2:1')).toEqual(before);
    expect(h.chat.counters.send).toBe(0);
    // The page puts right what the person typed and sends the same approval again.
    ui.messages = withEdit(ui.messages, toolPart(ui.last).approval?.id ?? '', { to: 'c@d' });
    await ui.sendMessage();
    expect(ui.status).toBe('ready');
    expect(toolPart(ui.last)).toMatchObject({ state: 'output-available', output: 'sent to c@d' });
    expect(h.chat.counters.send).toBe(1);
    expect((await loadChat(h.store, 'e2'))[1]).toEqual(ui.last);
    await h.close();
  });

  it('an edit that is no object, or that goes with a denial, is refused (400, 409) and writes nothing', async () => {
    const dir = await tempDir('polyloop-chat-edit-');
    const h = await host(dir, chatModel([SEND, { text: 'Not sent.' }]));
    const ui = new UiChat({ id: 'e3', transport: h.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    const id = toolPart(ui.last).approval?.id ?? '';
    const before = await h.store.readLog('chat:e3:1');
    await approveEdited(ui, ['c@d']);
    expect(JSON.parse(ui.error?.message ?? '{}')).toMatchObject({ error: { code: 'bad_request' } });
    const denied = (messages: UIMessage[]): UIMessage[] =>
      withEdit(messages, id, { to: 'c@d' }).map((m) => ({
        ...m,
        parts: m.parts.map((p) => (isAsking(p, id) ? { ...p, approval: { id, approved: false } } : p)),
      })) as UIMessage[];
    const response = await h.post({ id: 'e3', messages: denied(ui.messages) });
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/denied/);
    expect(await h.store.readLog('chat:e3:1')).toEqual(before);
    expect(h.chat.counters.send).toBe(0);
    await h.close();
  });
});

describe('edit on approval of one call of several', () => {
  it('edits the second of two emails in one step: each part shows what ran, the first its own proposal', async () => {
    const two: Say = {
      calls: [
        { name: 'send_email', args: { to: 'a@b' }, id: 'm0' },
        { name: 'send_email', args: { to: 'x@y' }, id: 'm1' },
      ],
    };
    const chat = testChat(chatModel([two, { text: 'Both sent.' }]), { parallel: 2 });
    const ui = new UiChat({ id: 'e4', transport: chat.transport });
    await ui.sendMessage({ text: 'mail both' });
    const [first, second] = ui.last.parts.filter((p) => p.type === 'tool-send_email') as { approval: { id: string } }[];
    ui.messages = withEdit(ui.messages, second?.approval.id ?? '', { to: 'c@d' });
    await ui.addToolApprovalResponse({ id: first?.approval.id ?? '', approved: true });
    await ui.addToolApprovalResponse({ id: second?.approval.id ?? '', approved: true });
    await ui.sendMessage();
    const parts = ui.last.parts.filter((p) => p.type === 'tool-send_email');
    expect(parts[0]).toMatchObject({ input: { to: 'a@b' }, output: 'sent to a@b' });
    expect(parts[0]).not.toHaveProperty('resultProviderMetadata');
    expect(parts[1]).toMatchObject({ input: { to: 'x@y' }, output: 'sent to c@d' });
    expect(parts[1]).toMatchObject({ resultProviderMetadata: { polyloop: { editedArguments: { to: 'c@d' } } } });
    expect(editPart(ui.last)).toMatchObject({ data: { resultId: 's0.a1.input', proposed: { to: 'x@y' } } });
    expect(chat.counters.send).toBe(2);
    expect((await loadChat(chat.store, 'e4'))[1]).toEqual(ui.last);
  });
});

function isAsking(p: UIMessage['parts'][number], approvalId: string): boolean {
  return (p as { approval?: { id?: string } }).approval?.id === approvalId;
}

/** The turn's log ended as a stop ends it. */
function stoppedWith(log: readonly LogRecord[], reason: string): void {
  const ended = readRunLog(log).ended;
  expect(ended).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason } });
}

describe('stopping a chat turn', () => {
  it('POST { id, stop } ends a turn inside a slow tool: the stream finishes stopped with the reason, as after a restart', async () => {
    const dir = await tempDir('polyloop-chat-stop-');
    const reached = deferred();
    const aborts: unknown[] = [];
    const model = chatModel([{ text: 'Working on it.', call: { name: 'slow', args: {} } }]);
    const h = await host(dir, model, [slowTool(reached.resolve, aborts)]);
    const ui = new UiChat({ id: 's1', transport: h.transport });
    const sending = ui.sendMessage({ text: 'take your time' });
    await reached.promise;
    const response = await h.post({ id: 's1', stop: { reason: 'the customer left' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ runId: 'chat:s1:1', state: 'stopped' });
    await sending;
    expect(ui.status).toBe('ready');
    expect(aborts).toMatchObject([{ name: 'StopRequestedError' }]);
    const metadata = { runId: 'chat:s1:1', stopReason: 'cancelled', stopRequest: { reason: 'the customer left' } };
    expect(ui.last.metadata).toMatchObject(metadata);
    const stopped = { type: 'data-polyloop-stop', id: 'chat:s1:1:stop' };
    expect(ui.last.parts.at(-1)).toEqual({ ...stopped, data: { runId: 'chat:s1:1', reason: 'the customer left' } });
    const errorText = 'The turn was stopped before this tool call finished: the customer left';
    expect(toolPart(ui.last)).toMatchObject({ type: 'tool-slow', state: 'output-error', errorText });
    stoppedWith(await h.store.readLog('chat:s1:1'), 'the customer left');
    await h.close();
    const again = await host(dir, chatModel([]));
    const loaded = await loadChat(again.store, 's1');
    expect(loaded[1]).toEqual(ui.last);
    expect(await again.transport.reconnectToStream({ chatId: 's1' })).toBeNull();
    const late = await again.post({ id: 's1', stop: {} });
    expect(await late.json()).toEqual({ runId: 'chat:s1:1', state: 'ended' });
    await again.close();
  });

  it('a stop inside a model call ends the stream stopped; reloaded, the turn says so and holds no unrecorded text', async () => {
    const dir = await tempDir('polyloop-chat-stop-');
    const held = deferred();
    const gate = (_k: number, signal: AbortSignal): Promise<void> =>
      new Promise((_, reject) => {
        held.resolve();
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    const h = await host(dir, chatModel([{ text: 'A long answer that never ends.' }], { stream: true, gate }));
    const ui = new UiChat({ id: 's2', transport: h.transport });
    const sending = ui.sendMessage({ text: 'talk' });
    await held.promise;
    expect(await (await h.post({ id: 's2', runId: 'chat:s2:1', stop: {} })).json()).toMatchObject({ state: 'stopped' });
    await sending;
    expect(ui.last.metadata).toMatchObject({ stopReason: 'cancelled', stopRequest: {} });
    expect(textOf(ui.last)).toBe('A lo');
    await h.close();
    const again = await host(dir, chatModel([]));
    const [, assistant] = await loadChat(again.store, 's2');
    // The call was stopped before it replied: its text never became part of the turn.
    expect(assistant).toMatchObject({ metadata: { stopReason: 'cancelled', stopRequest: {} } });
    expect(assistant?.parts.at(-1)).toMatchObject({ type: 'data-polyloop-stop', data: { runId: 'chat:s2:1' } });
    expect(assistant && textOf(assistant)).toBe('');
    await again.close();
  });

  it('a stop while the turn waits for approval ends it now: the approval closes refused, nothing runs, a late approval changes nothing', async () => {
    const dir = await tempDir('polyloop-chat-stop-');
    const h = await host(dir, chatModel([SEND]));
    const ui = new UiChat({ id: 's3', transport: h.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    const response = await h.post({ id: 's3', stop: { reason: 'wrong address' } });
    expect(await response.json()).toEqual({ runId: 'chat:s3:1', state: 'stopped' });
    stoppedWith(await h.store.readLog('chat:s3:1'), 'wrong address');
    const loaded = await loadChat(h.store, 's3');
    const reason = 'The turn was stopped before this tool call finished: wrong address';
    expect(toolPart(loaded[1] as UIMessage)).toMatchObject({
      state: 'output-denied',
      approval: { approved: false, reason },
    });
    expect(loaded[1]?.metadata).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'wrong address' } });
    await expect(validateUIMessages({ messages: loaded })).resolves.toHaveLength(2);
    // The page that still shows the request approves it: the turn has ended, nothing runs.
    await ui.addToolApprovalResponse({ id: toolPart(ui.last).approval?.id ?? '', approved: true });
    await ui.sendMessage();
    expect(h.chat.counters.send).toBe(0);
    expect(await loadChat(h.store, 's3')).toEqual(loaded);
    await h.close();
  });

  it('a stop asked by another process (requestStop on its own FileStore) ends the turn the server drives', async () => {
    const dir = await tempDir('polyloop-chat-stop-');
    const reached = deferred();
    const aborts: unknown[] = [];
    const model = chatModel([{ text: 'Working.', call: { name: 'slow', args: {} } }]);
    const h = await host(dir, model, [slowTool(reached.resolve, aborts)]);
    const ui = new UiChat({ id: 's4', transport: h.transport });
    const sending = ui.sendMessage({ text: 'go' });
    await reached.promise;
    await requestStop(new FileStore({ dir }), 'chat:s4:1', 'from the command line');
    await sending;
    expect(ui.last.metadata).toMatchObject({
      stopReason: 'cancelled',
      stopRequest: { reason: 'from the command line' },
    });
    expect(aborts).toMatchObject([{ name: 'StopRequestedError' }]);
    await h.close();
  });

  it('refuses a stop of a chat without turns (400), of a turn not the latest (409), a malformed stop (400)', async () => {
    const dir = await tempDir('polyloop-chat-stop-');
    const h = await host(dir, chatModel([{ text: 'One.' }, { text: 'Two.' }]));
    expect((await h.post({ id: 'none', stop: {} })).status).toBe(400);
    const ui = new UiChat({ id: 's5', transport: h.transport });
    await ui.sendMessage({ text: 'one' });
    await ui.sendMessage({ text: 'two' });
    const old = await h.post({ id: 's5', runId: 'chat:s5:1', stop: {} });
    expect(old.status).toBe(409);
    expect(((await old.json()) as { error: { message: string } }).error.message).toContain('chat:s5:2');
    const bad: JsonObject[] = [
      { id: 's5', stop: { reason: 7 } },
      { id: 's5', stop: { because: 'x' } },
      { id: 's5', stop: true },
      { id: 's5', stop: {}, messages: [] },
      { id: 's5', stop: { reason: 'x'.repeat(2001) } },
    ];
    for (const body of bad) expect((await h.post(body)).status, JSON.stringify(body).slice(0, 80)).toBe(400);
    await h.close();
  });
});
