import { validateUIMessages } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadChat } from '../../../src/chat/index.ts';
import { InMemoryStore, readRunLog } from '../../../src/core/index.ts';
import { chatModel, testChat, textOf, toolPart, UiChat } from './fixtures.ts';
import type { Say } from './fixtures.ts';

type Seen = readonly { role: string; content: readonly { type: string; text?: string }[] }[] | undefined;
const lastToolResult = (messages: Seen): string | undefined =>
  messages?.at(-1)?.content.find((b) => b.type === 'tool_result')?.text;

const SEND: Say = { text: 'Sending.', call: { name: 'send_email', args: { to: 'a@b' } } };

describe("human input through the AI SDK's own parts", () => {
  it('approve: the request shows, addToolApprovalResponse carries on the turn, the tool runs once', async () => {
    const chat = testChat(chatModel([SEND, { text: 'Sent.' }]));
    const ui = new UiChat({ id: 'a1', transport: chat.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    const asked = toolPart(ui.last);
    const approval = { id: 'chat:a1:1:s0.input' };
    expect(asked).toMatchObject({ type: 'tool-send_email', state: 'approval-requested', approval });
    expect(asked.input).toEqual({ to: 'a@b' });
    expect(chat.counters.send).toBe(0);
    await ui.addToolApprovalResponse({ id: asked.approval?.id ?? '', approved: true });
    await ui.sendMessage();
    expect(ui.status).toBe('ready');
    expect(ui.messages).toHaveLength(2);
    const done = { state: 'output-available', output: 'sent to a@b', approval: { approved: true } };
    expect(toolPart(ui.last)).toMatchObject(done);
    expect(textOf(ui.last)).toBe('Sending.Sent.');
    expect(chat.counters.send).toBe(1);
    const loaded = await loadChat(chat.store, 'a1');
    expect(loaded[1]).toEqual(ui.last);
    await expect(validateUIMessages({ messages: loaded })).resolves.toHaveLength(2);
  });

  it('deny: tool-output-denied, nothing runs, and the model reads the reason', async () => {
    const model = chatModel([{ call: { name: 'send_email', args: { to: 'a@b' } } }, { text: 'Not sent.' }]);
    const chat = testChat(model);
    const ui = new UiChat({ id: 'a2', transport: chat.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    const id = toolPart(ui.last).approval?.id ?? '';
    await ui.addToolApprovalResponse({ id, approved: false, reason: 'not today' });
    await ui.sendMessage();
    const denied = { state: 'output-denied', approval: { approved: false, reason: 'not today' } };
    expect(toolPart(ui.last)).toMatchObject(denied);
    expect(chat.counters.send).toBe(0);
    expect(lastToolResult(model.seen[1])).toBe('not today');
    const loaded = await loadChat(chat.store, 'a2');
    expect(loaded[1]).toEqual(ui.last);
    await expect(validateUIMessages({ messages: loaded })).resolves.toHaveLength(2);
  });

  it('a tool a person answers: the page fills the part with addToolOutput and the model reads the answer', async () => {
    const model = chatModel([{ call: { name: 'ask_user', args: { question: 'colour?' } } }, { text: 'Blue it is.' }]);
    const chat = testChat(model);
    const ui = new UiChat({ id: 'a3', transport: chat.transport });
    await ui.sendMessage({ text: 'pick a colour for me' });
    const part = toolPart(ui.last);
    expect(part).toMatchObject({ type: 'tool-ask_user', state: 'input-available', input: { question: 'colour?' } });
    await ui.addToolOutput({ tool: 'ask_user', toolCallId: part.toolCallId, output: 'blue' });
    await ui.sendMessage();
    expect(toolPart(ui.last)).toMatchObject({ state: 'output-available', output: 'blue' });
    expect(textOf(ui.last)).toBe('Blue it is.');
    expect(lastToolResult(model.seen[1])).toBe('blue');
    expect((await loadChat(chat.store, 'a3'))[1]).toEqual(ui.last);
  });

  it('an approval survives a reload and a new server: GET is 204, approving from the page finishes', async () => {
    const store = new InMemoryStore();
    const first = testChat(chatModel([SEND]), { store });
    const ui = new UiChat({ id: 'a4', transport: first.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    const second = testChat(chatModel([{ text: 'Sent.' }]), { store });
    const messages = await loadChat(store, 'a4');
    expect(messages[1]).toEqual(ui.last);
    expect(await second.transport.reconnectToStream({ chatId: 'a4' })).toBeNull();
    const reloaded = new UiChat({ id: 'a4', transport: second.transport, messages });
    await reloaded.addToolApprovalResponse({ id: toolPart(reloaded.last).approval?.id ?? '', approved: true });
    await reloaded.sendMessage();
    expect(toolPart(reloaded.last)).toMatchObject({ state: 'output-available', output: 'sent to a@b' });
    expect(textOf(reloaded.last)).toBe('Sending.Sent.');
    expect(second.counters.send + first.counters.send).toBe(1);
    expect((await loadChat(store, 'a4'))[1]).toEqual(reloaded.last);
  });

  it('a repeated approval POST streams what followed it again and runs nothing twice', async () => {
    const chat = testChat(chatModel([{ call: { name: 'send_email', args: { to: 'a@b' } } }, { text: 'Sent.' }]));
    const ui = new UiChat({ id: 'a5', transport: chat.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    await ui.addToolApprovalResponse({ id: toolPart(ui.last).approval?.id ?? '', approved: true });
    const answered = ui.messages.map((m) => JSON.parse(JSON.stringify(m)));
    await ui.sendMessage();
    const done = ui.last;
    const again = new UiChat({ id: 'a5', transport: chat.transport, messages: answered });
    await again.sendMessage();
    expect(again.last).toEqual(done);
    expect((await loadChat(chat.store, 'a5'))[1]).toEqual(done);
    expect(chat.counters.send).toBe(1);
  });

  it('a new message while an approval waits cancels that turn (its tool part ends denied), then runs', async () => {
    const model = chatModel([{ call: { name: 'send_email', args: { to: 'a@b' } } }, { text: 'OK, something else.' }]);
    const chat = testChat(model);
    const ui = new UiChat({ id: 'a6', transport: chat.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    await ui.sendMessage({ text: 'never mind' });
    expect(textOf(ui.last)).toBe('OK, something else.');
    expect(readRunLog(await chat.store.readLog('chat:a6:1')).ended?.stopReason).toBe('cancelled');
    expect(chat.counters.send).toBe(0);
    const loaded = await loadChat(chat.store, 'a6');
    expect(toolPart(loaded[1] as never)).toMatchObject({ state: 'output-denied' });
    await expect(validateUIMessages({ messages: loaded })).resolves.toHaveLength(4);
    expect(model.seen[1]?.map((m) => m.role)).toEqual(['system', 'user', 'user']);
  });
});
