import { DefaultChatTransport } from 'ai';
import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadChat } from '../../../src/chat/index.ts';
import { InMemoryStore, readRunLog } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { assemble, chatModel, chunksOf, deferred, testChat, textOf, toolPart, UiChat, userMessage } from './fixtures.ts';
import type { Say } from './fixtures.ts';

const ADD_THEN_ANSWER: Say[] = [{ text: 'First I add the numbers.', call: { name: 'add', args: { a: 20, b: 22 } } }, { text: 'The sum is 42, as asked.' }];

/** The turn as an uninterrupted run streams it, on a fresh chat. */
async function uninterrupted(script: readonly Say[], chatId: string): Promise<UIMessage> {
  const chat = testChat(chatModel(script, { stream: true }));
  return assemble(await chunksOf(await chat.transport.sendMessages({ chatId, messages: [userMessage('go')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined })));
}

const deltasOf = (chunks: readonly UIMessageChunk[], id: string): number => chunks.filter((c) => c.type === 'text-delta' && c.id === id).length;

describe('reconnect: the turn so far from its log, then live', () => {
  it('a GET mid-turn replays each finished model call as one text part and follows the open one; nothing twice', async () => {
    const reached = deferred();
    const release = deferred();
    const model = chatModel(ADD_THEN_ANSWER, { stream: true, gate: async (k) => (k === 1 ? (reached.resolve(), release.promise) : undefined) });
    const chat = testChat(model);
    const posted = chunksOf(await chat.transport.sendMessages({ chatId: 'r1', messages: [userMessage('go')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    await reached.promise;
    const stream = await chat.transport.reconnectToStream({ chatId: 'r1' });
    expect(stream).not.toBeNull();
    const resumed = chunksOf(stream as ReadableStream<UIMessageChunk>);
    release.resolve();
    const [live, replayed] = await Promise.all([posted, resumed]);
    const expected = await uninterrupted(ADD_THEN_ANSWER, 'r1');
    expect(await assemble(live)).toEqual(expected);
    expect(await assemble(replayed)).toEqual(expected);
    expect((await loadChat(chat.store, 'r1'))[1]).toEqual(expected);
    expect(deltasOf(live, 's0.text')).toBeGreaterThan(1);
    expect(deltasOf(replayed, 's0.text')).toBe(1);
    expect(model.seen).toHaveLength(2);
  });

  it('a page reloaded mid-turn (loadChat, then useChat\'s resume) shows the finished turn once', async () => {
    const reached = deferred();
    const release = deferred();
    const chat = testChat(chatModel(ADD_THEN_ANSWER, { stream: true, gate: async (k) => (k === 1 ? (reached.resolve(), release.promise) : undefined) }));
    const before = new UiChat({ id: 'r2', transport: chat.transport });
    const sending = before.sendMessage({ text: 'go' });
    await reached.promise;
    const messages = await loadChat(chat.store, 'r2');
    expect(messages).toHaveLength(2);
    const after = new UiChat({ id: 'r2', transport: chat.transport, messages });
    const resuming = after.resumeStream();
    release.resolve();
    await Promise.all([sending, resuming]);
    expect(after.messages).toHaveLength(2);
    expect(after.last).toEqual(before.last);
    expect(textOf(after.last)).toBe('First I add the numbers.The sum is 42, as asked.');
  });

  it('a turn whose driver crashed mid-step is resumed by the GET of a new server and streams to its end', async () => {
    const inner = new InMemoryStore();
    // runStarted, the model intent, the result with the action intent: the step record never lands.
    const crashed = testChat(chatModel(ADD_THEN_ANSWER, { stream: true }), { store: faultyStore(inner, { crashAfterWrites: 3 }) });
    const dying = await chunksOf(await crashed.transport.sendMessages({ chatId: 'r3', messages: [userMessage('go')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    expect(dying.at(-1)).toMatchObject({ type: 'error' });
    expect(readRunLog(await inner.readLog('chat:r3:1')).state).toBe('in_flight');
    const restarted = testChat(chatModel(ADD_THEN_ANSWER.slice(1), { stream: true }), { store: inner });
    const stream = await restarted.transport.reconnectToStream({ chatId: 'r3' });
    const message = await assemble(await chunksOf(stream as ReadableStream<UIMessageChunk>));
    expect(message).toEqual(await uninterrupted(ADD_THEN_ANSWER, 'r3'));
    expect(await restarted.transport.reconnectToStream({ chatId: 'r3' })).toBeNull();
  });

  it('a `never` tool in flight at a crash is settled through its data-polyloop-settle part, never run again', async () => {
    const inner = new InMemoryStore();
    const script: Say[] = [{ text: 'Charging.', call: { name: 'charge', args: { cents: 500 } } }, { text: 'Charged.' }];
    const crashed = testChat(chatModel(script), { store: faultyStore(inner, { crashAfterWrites: 3 }) });
    await chunksOf(await crashed.transport.sendMessages({ chatId: 'r4', messages: [userMessage('charge me')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    expect(crashed.counters.charge).toBe(1);
    const restarted = testChat(chatModel(script.slice(1)), { store: inner });
    const waiting = await assemble(await chunksOf((await restarted.transport.reconnectToStream({ chatId: 'r4' })) as ReadableStream<UIMessageChunk>));
    const settle = waiting.parts.find((p) => p.type === 'data-polyloop-settle') as { id: string; data: { resultId: string; accepts: string[] } } | undefined;
    expect(settle?.data).toMatchObject({ resultId: 's0.settle', accepts: ['executed', 'retry', 'deny', 'cancel'] });
    expect(waiting.metadata).toMatchObject({ stopReason: 'awaiting_input' });
    expect(await restarted.transport.reconnectToStream({ chatId: 'r4' })).toBeNull();
    const answer = new DefaultChatTransport<UIMessage>({
      api: 'http://chat.test/api/chat',
      fetch: (url, init) => restarted.handle(new Request(String(url), init)),
      prepareSendMessagesRequest: ({ id }) => ({ body: { id, input: { kind: 'executed', resultId: 's0.settle', observation: 'charged' } } }),
    });
    const rest = await chunksOf(await answer.sendMessages({ chatId: 'r4', messages: [], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    const done = await assemble(rest, waiting);
    expect(toolPart(done)).toMatchObject({ state: 'output-available', output: 'charged' });
    expect(textOf(done)).toBe('Charging.Charged.');
    expect(restarted.counters.charge + crashed.counters.charge).toBe(1);
    expect((await loadChat(inner, 'r4'))[1]).toEqual(done);
  });

  it('while a `never` tool\'s turn runs, a repeated POST and a GET attach to it: the tool runs once, the model is called once a step', async () => {
    const reached = deferred();
    const release = deferred();
    const model = chatModel([{ call: { name: 'charge', args: { cents: 1 } } }, { text: 'Done charging.' }], { stream: true, gate: async (k) => (k === 1 ? (reached.resolve(), release.promise) : undefined) });
    const chat = testChat(model);
    const post = () => chat.transport.sendMessages({ chatId: 'r5', messages: [userMessage('charge')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
    const first = chunksOf(await post());
    await reached.promise;
    const second = chunksOf(await post());
    const third = chunksOf((await chat.transport.reconnectToStream({ chatId: 'r5' })) as ReadableStream<UIMessageChunk>);
    release.resolve();
    const messages = await Promise.all([first, second, third].map(async (c) => assemble(await c)));
    expect(messages[1]).toEqual(messages[0]);
    expect(messages[2]).toEqual(messages[0]);
    expect(chat.counters.charge).toBe(1);
    expect(model.seen).toHaveLength(2);
  });

  it('a settlement can be answered through its part too: data.reply on the data-polyloop-settle part, then a POST of the messages', async () => {
    const inner = new InMemoryStore();
    const script: Say[] = [{ call: { name: 'charge', args: { cents: 9 } } }, { text: 'Not charged, then.' }];
    const crashed = testChat(chatModel(script), { store: faultyStore(inner, { crashAfterWrites: 3 }) });
    await chunksOf(await crashed.transport.sendMessages({ chatId: 'r6', messages: [userMessage('charge')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    const restarted = testChat(chatModel(script.slice(1)), { store: inner });
    await chunksOf((await restarted.transport.reconnectToStream({ chatId: 'r6' })) as ReadableStream<UIMessageChunk>);
    const [user, waiting] = await loadChat(inner, 'r6');
    const answered: UIMessage = {
      ...(waiting as UIMessage),
      parts: (waiting as UIMessage).parts.map((p) => (p.type === 'data-polyloop-settle' ? { ...p, data: { ...(p.data as object), reply: { kind: 'deny', reason: 'it did not go through' } } } : p)),
    };
    const ui = new UiChat({ id: 'r6', transport: restarted.transport, messages: [user as UIMessage, answered] });
    await ui.sendMessage();
    expect(toolPart(ui.last)).toMatchObject({ state: 'output-error', errorText: 'it did not go through' });
    expect(textOf(ui.last)).toBe('Not charged, then.');
    expect(restarted.counters.charge).toBe(0);
    const settle = ui.last.parts.find((p) => p.type === 'data-polyloop-settle') as { data: { reply?: { kind: string } } } | undefined;
    expect(settle?.data.reply?.kind).toBe('deny');
  });
});
