import { describe, expect, it } from 'vitest';
import { chatModel, chunksOf, deferred, drain, post, send, testChat, toolPart } from './fixtures.ts';
import { UiChat, userMessage } from './fixtures.ts';
import { InMemoryStore } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import type { Say } from './fixtures.ts';

const SEND: Say = { text: 'Sending.', call: { name: 'send_email', args: { to: 'a@b' } } };
const SEND_AGAIN: Say = { text: 'And again.', call: { name: 'send_email', args: { to: 'c@d' }, id: 'c2' } };
const json = (value: unknown): Request =>
  new Request('http://chat.test/api/chat', {
    method: 'POST',
    body: JSON.stringify(value),
    headers: { 'content-type': 'application/json' },
  });

describe('a chat attacked by a hostile client or an unlucky user', () => {
  it('a repeated approval POST streams what followed it even when the turn now awaits a second approval', async () => {
    const chat = testChat(chatModel([SEND, SEND_AGAIN, { text: 'Sent.' }]));
    const ui = new UiChat({ id: 'v1', transport: chat.transport });
    await ui.sendMessage({ text: 'mail twice' });
    await ui.addToolApprovalResponse({ id: toolPart(ui.last).approval?.id ?? '', approved: true });
    const answered = ui.messages.map((m) => JSON.parse(JSON.stringify(m)));
    await ui.sendMessage();
    const res = await chat.handle(json({ id: 'v1', messages: answered }));
    expect(res.status).toBe(200);
    const again = await chat.transport.sendMessages({
      chatId: 'v1',
      messages: answered,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    const chunks = await chunksOf(again);
    const request = { type: 'tool-approval-request', approvalId: 'chat:v1:1:s1.input', toolCallId: 'c2' };
    expect(chunks).toContainEqual(request);
    expect(chat.counters.send).toBe(1);
    expect(chat.model.seen).toHaveLength(2);
  });

  it('a reconnect to a chat whose first turn failed before its log began answers 204', async () => {
    const store = faultyStore(new InMemoryStore(), { crashAfterWrites: 0 });
    const chat = testChat(chatModel([{ text: 'x' }]), { store });
    const chunks = await send(chat, 'v2', [userMessage('hi')]);
    expect(chunks.at(-1)).toMatchObject({ type: 'error' });
    const res = await chat.handle(new Request('http://chat.test/api/chat/v2/stream'));
    expect(res.status).toBe(204);
  });

  it('an input POSTed while the turn runs and awaits nothing is a 409, not a stream that drops it', async () => {
    const release = deferred();
    const model = chatModel([{ text: 'Working on it.' }], { gate: () => release.promise });
    const chat = testChat(model);
    const running = drain(await post(chat, 'v3', [userMessage('hi')]));
    const approve = { kind: 'approve', resultId: 's0.input' };
    const res = await chat.handle(json({ id: 'v3', runId: 'chat:v3:1', input: approve }));
    release.resolve();
    await running;
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('conflict');
  });

  it('a stale input reply sent again after the next turn asks the same request id is refused and sends nothing', async () => {
    const chat = testChat(chatModel([SEND, { text: 'Sent.' }, SEND_AGAIN, { text: 'Sent again.' }]));
    await send(chat, 'v5', [userMessage('mail a@b')]);
    const approve = { id: 'v5', runId: 'chat:v5:1', input: { kind: 'approve', resultId: 's0.input' } };
    const first = await chat.handle(json(approve));
    expect(first.status).toBe(200);
    await first.text();
    expect(chat.counters.send).toBe(1);
    const earlier = { id: 'a1', role: 'assistant', parts: [] };
    const asked = await send(chat, 'v5', [userMessage('mail a@b'), earlier as never, userMessage('now c@d')]);
    expect(asked).toContainEqual({ type: 'tool-approval-request', approvalId: 'chat:v5:2:s0.input', toolCallId: 'c2' });
    const before = (await chat.store.readLog('chat:v5:2')).length;
    const stale = await chat.handle(json(approve));
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe('conflict');
    const elsewhere = await chat.handle(json({ ...approve, runId: 'chat:other:2' }));
    expect(elsewhere.status).toBe(409);
    expect(chat.counters.send).toBe(1);
    expect(await chat.store.readLog('chat:v5:2')).toHaveLength(before);
  });

  it('an input reply without the runId of the turn it answers is a 400 bad_request naming runId', async () => {
    const chat = testChat(chatModel([SEND, { text: 'Sent.' }]));
    await send(chat, 'v6', [userMessage('mail a@b')]);
    const res = await chat.handle(json({ id: 'v6', input: { kind: 'approve', resultId: 's0.input' } }));
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(/runId/);
    expect(chat.counters.send).toBe(0);
  });

  it('an answer nested too deeply to write as text is a 400 bad_request and writes nothing', async () => {
    const chat = testChat(chatModel([{ call: { name: 'ask_user', args: { question: 'colour?' } } }, { text: 'OK.' }]));
    const ui = new UiChat({ id: 'v4', transport: chat.transport });
    await ui.sendMessage({ text: 'ask me' });
    const { toolCallId } = toolPart(ui.last);
    const filled = (p: Record<string, unknown>) =>
      p['toolCallId'] === toolCallId ? { ...p, state: 'output-available', output: 'DEEP' } : p;
    const last = { ...ui.last, parts: ui.last.parts.map((p) => filled(p as never)) };
    const depth = 100_000;
    const deep = '['.repeat(depth) + ']'.repeat(depth);
    const body = JSON.stringify({ id: 'v4', messages: [ui.messages[0], last] }).replace('"DEEP"', deep);
    const before = (await chat.store.readLog('chat:v4:1')).length;
    const res = await chat.handle(new Request('http://chat.test/api/chat', { method: 'POST', body }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    expect(await chat.store.readLog('chat:v4:1')).toHaveLength(before);
  });
});
