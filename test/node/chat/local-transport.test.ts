import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadChat, localChatTransport, toUIMessageStream } from '../../../src/chat/index.ts';
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { RunEvent } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { assemble, chatModel, chunksOf, send, testChat, textOf, toolPart, UiChat, userMessage } from './fixtures.ts';
import type { Say } from './fixtures.ts';

const SCRIPT: Say[] = [
  { text: 'Sending it now.', call: { name: 'send_email', args: { to: 'a@b' } } },
  { text: 'Sent, all done.' },
];

describe('localChatTransport: the turns run in the page', () => {
  it("carries a turn with an approval through the AI SDK's chat state, the same as over HTTP", async () => {
    const chat = testChat(chatModel(SCRIPT, { stream: true }));
    const store = new InMemoryStore();
    const transport = localChatTransport({ agent: chat.agent, store, request: chat.request });
    expect(transport.resumeStreamIsReplay).toBe(true);
    const ui = new UiChat({ id: 'l1', transport });
    await ui.sendMessage({ text: 'mail a@b' });
    await ui.addToolApprovalResponse({ id: toolPart(ui.last).approval?.id ?? '', approved: true });
    await ui.sendMessage();
    expect(toolPart(ui.last)).toMatchObject({ state: 'output-available', output: 'sent to a@b' });
    expect(textOf(ui.last)).toBe('Sending it now.Sent, all done.');
    expect((await loadChat(store, 'l1'))[1]).toEqual(ui.last);
  });

  it('a reload mid-turn: reconnectToStream of a new transport resumes the turn from its log', async () => {
    const inner = new InMemoryStore();
    const script: Say[] = [{ text: 'Adding.', call: { name: 'add', args: { a: 1, b: 2 } } }, { text: 'Three.' }];
    const crashed = testChat(chatModel(script));
    const store = faultyStore(inner, { crashAfterWrites: 3 });
    const dying = localChatTransport({ agent: crashed.agent, store, request: crashed.request });
    const before = new UiChat({ id: 'l2', transport: dying });
    await before.sendMessage({ text: '1+2' });
    expect(before.status).toBe('error');
    const again = testChat(chatModel(script.slice(1)));
    const transport = localChatTransport({ agent: again.agent, store: inner, request: again.request });
    const after = new UiChat({ id: 'l2', transport, messages: await loadChat(inner, 'l2') });
    await after.resumeStream();
    expect(after.messages).toHaveLength(2);
    expect(toolPart(after.last)).toMatchObject({ state: 'output-available', output: '3' });
    expect(textOf(after.last)).toBe('Adding.Three.');
    expect((await loadChat(inner, 'l2'))[1]).toEqual(after.last);
  });

  it('stop() ends a turn the page runs that waits for approval: loadChat shows it stopped, nothing ran', async () => {
    const chat = testChat(chatModel(SCRIPT));
    const store = new InMemoryStore();
    const transport = localChatTransport({ agent: chat.agent, store, request: chat.request });
    const ui = new UiChat({ id: 'l3', transport });
    await ui.sendMessage({ text: 'mail a@b' });
    expect(await transport.stop('l3', { reason: 'not now' })).toEqual({ runId: 'chat:l3:1', state: 'stopped' });
    const [, assistant] = await loadChat(store, 'l3');
    expect(assistant?.metadata).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'not now' } });
    expect(toolPart(assistant as never)).toMatchObject({ state: 'output-denied' });
    expect(chat.counters.send).toBe(0);
    expect(await transport.stop('l3')).toEqual({ runId: 'chat:l3:1', state: 'ended' });
  });
});

describe("toUIMessageStream: a run's own events as chunks", () => {
  it('assembles the message chatHandler streams for the same turn', async () => {
    const viaHandler = testChat(chatModel(SCRIPT.slice(1), { stream: true }));
    const expected = await assemble(await send(viaHandler, 'e1', [userMessage('go')]));
    const own = testChat(chatModel(SCRIPT.slice(1), { stream: true }));
    const events = new TransformStream<RunEvent, RunEvent>();
    const writer = events.writable.getWriter();
    const sink = { params: {}, deliver: (e: RunEvent) => writer.write(e) };
    const agent = defineAgent({ ...own.agent, store: new InMemoryStore(), events: sink });
    const chunks = chunksOf(toUIMessageStream(events.readable, { messageId: 'chat:e1:1:assistant' }));
    const goal = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'go' }] }];
    await run(agent, own.request({ chatId: 'e1', turn: 1, runId: 'chat:e1:1', goal, context: [] }));
    await writer.close();
    const got: UIMessageChunk[] = await chunks;
    expect(got.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(await assemble(got)).toEqual(expected);
  });
});
