import { DefaultChatTransport } from 'ai';
import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadChat } from '../../../src/chat/index.ts';
import { InMemoryStore, readRunLog } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { assemble, chatModel, chunksOf, deferred, post, reconnect, send, testChat } from './fixtures.ts';
import { textOf, toolPart, UiChat, userMessage } from './fixtures.ts';
import type { TestChat } from './fixtures.ts';
import type { Say } from './fixtures.ts';

const ADD_THEN_ANSWER: Say[] = [
  { text: 'First I add the numbers.', call: { name: 'add', args: { a: 20, b: 22 } } },
  { text: 'The sum is 42, as asked.' },
];

/** The turn as an uninterrupted run streams it, on a fresh chat. */
async function uninterrupted(script: readonly Say[], chatId: string): Promise<UIMessage> {
  return assemble(await send(testChat(chatModel(script, { stream: true })), chatId, [userMessage('go')]));
}

/** A gate that holds call `k` (mid-text, for a streaming model) until released. */
function holdCall(k: number) {
  const reached = deferred();
  const release = deferred();
  const gate = async (callSeq: number): Promise<void> => {
    if (callSeq !== k) return;
    reached.resolve();
    await release.promise;
  };
  return { gate, reached: reached.promise, release: () => release.resolve() };
}

/** GET `…/:chatId/stream`, attached to the turn once this resolves. */
async function attached(chat: TestChat, chatId: string): Promise<ReadableStream<UIMessageChunk>> {
  const stream = await chat.transport.reconnectToStream({ chatId });
  if (stream === null) throw new Error('no turn to reconnect to');
  return stream;
}

const deltasOf = (chunks: readonly UIMessageChunk[], id: string): number =>
  chunks.filter((c) => c.type === 'text-delta' && c.id === id).length;

/** A turn crashed after `writes` store writes; the store it leaves and the chat that crashed. */
async function crashedTurn(script: readonly Say[], chatId: string, writes: number) {
  const inner = new InMemoryStore();
  const store = faultyStore(inner, { crashAfterWrites: writes });
  const crashed = testChat(chatModel(script, { stream: true }), { store });
  const dying = await send(crashed, chatId, [userMessage('go')]);
  return { inner, crashed, dying };
}

describe('reconnect: the turn so far from its log, then live', () => {
  it('a GET mid-turn replays each finished model call as one text part, then follows: nothing twice', async () => {
    const hold = holdCall(1);
    const model = chatModel(ADD_THEN_ANSWER, { stream: true, gate: hold.gate });
    const chat = testChat(model);
    const posted = chunksOf(await post(chat, 'r1', [userMessage('go')]));
    await hold.reached;
    const resumed = chunksOf(await attached(chat, 'r1'));
    hold.release();
    const [live, replayed] = await Promise.all([posted, resumed]);
    const expected = await uninterrupted(ADD_THEN_ANSWER, 'r1');
    expect(await assemble(live)).toEqual(expected);
    expect(await assemble(replayed ?? [])).toEqual(expected);
    expect((await loadChat(chat.store, 'r1'))[1]).toEqual(expected);
    expect(deltasOf(live, 's0.text')).toBeGreaterThan(1);
    expect(deltasOf(replayed ?? [], 's0.text')).toBe(1);
    expect(model.seen).toHaveLength(2);
  });

  it("a page reloaded mid-turn (loadChat, then useChat's resume) shows the finished turn once", async () => {
    const hold = holdCall(1);
    const chat = testChat(chatModel(ADD_THEN_ANSWER, { stream: true, gate: hold.gate }));
    const before = new UiChat({ id: 'r2', transport: chat.transport });
    const sending = before.sendMessage({ text: 'go' });
    await hold.reached;
    const messages = await loadChat(chat.store, 'r2');
    expect(messages).toHaveLength(2);
    const after = new UiChat({ id: 'r2', transport: chat.transport, messages });
    const resuming = after.resumeStream();
    hold.release();
    await Promise.all([sending, resuming]);
    expect(after.messages).toHaveLength(2);
    expect(after.last).toEqual(before.last);
    expect(textOf(after.last)).toBe('First I add the numbers.The sum is 42, as asked.');
  });

  it('a turn whose driver crashed mid-step is resumed by the GET of a new server and streams to its end', async () => {
    // runStarted, the model intent, the result with the action intent: the step record never lands.
    const { inner, dying } = await crashedTurn(ADD_THEN_ANSWER, 'r3', 3);
    expect(dying.at(-1)).toMatchObject({ type: 'error' });
    expect(readRunLog(await inner.readLog('chat:r3:1')).state).toBe('in_flight');
    const restarted = testChat(chatModel(ADD_THEN_ANSWER.slice(1), { stream: true }), { store: inner });
    const message = await assemble((await reconnect(restarted, 'r3')) ?? []);
    expect(message).toEqual(await uninterrupted(ADD_THEN_ANSWER, 'r3'));
    expect(await reconnect(restarted, 'r3')).toBeNull();
  });

  it('a turn a later driver took over reads back whole after the reload: its log marks the takeover, the page shows none', async () => {
    const { inner } = await crashedTurn(ADD_THEN_ANSWER, 'r3b', 3);
    const restarted = testChat(chatModel(ADD_THEN_ANSWER.slice(1), { stream: true }), { store: inner });
    await assemble((await reconnect(restarted, 'r3b')) ?? []);
    const log = await inner.readLog('chat:r3b:1');
    expect(readRunLog(log).resumes).toMatchObject([{ stepIndex: 0, resolution: 'replay_action' }]);
    const messages = await loadChat(inner, 'r3b');
    expect(messages[1]).toEqual(await uninterrupted(ADD_THEN_ANSWER, 'r3b'));
  });

  it('a `never` tool in flight at a crash is settled through its data part, never run again', async () => {
    const script: Say[] = [{ text: 'Charging.', call: { name: 'charge', args: { cents: 500 } } }, { text: 'Charged.' }];
    const { inner, crashed } = await crashedTurn(script, 'r4', 3);
    expect(crashed.counters.charge).toBe(1);
    const restarted = testChat(chatModel(script.slice(1)), { store: inner });
    const waiting = await assemble((await reconnect(restarted, 'r4')) ?? []);
    const settle = waiting.parts.find((p) => p.type === 'data-polyloop-settle') as { data: unknown } | undefined;
    expect(settle?.data).toMatchObject({ resultId: 's0.settle', accepts: ['executed', 'retry', 'deny', 'cancel'] });
    expect(waiting.metadata).toMatchObject({ stopReason: 'awaiting_input' });
    expect(await reconnect(restarted, 'r4')).toBeNull();
    const input = { kind: 'executed', resultId: 's0.settle', observation: 'charged' };
    const answer = new DefaultChatTransport<UIMessage>({
      api: 'http://chat.test/api/chat',
      fetch: (url, init) => restarted.handle(new Request(String(url), init)),
      prepareSendMessagesRequest: ({ id }) => ({ body: { id, runId: 'chat:r4:1', input } }),
    });
    const trigger = 'submit-message';
    const none = { messageId: undefined, abortSignal: undefined };
    const sent = answer.sendMessages({ chatId: 'r4', messages: [], trigger, ...none });
    const rest = await chunksOf(await sent);
    const done = await assemble(rest, waiting);
    expect(toolPart(done)).toMatchObject({ state: 'output-available', output: 'charged' });
    expect(textOf(done)).toBe('Charging.Charged.');
    expect(restarted.counters.charge + crashed.counters.charge).toBe(1);
    expect((await loadChat(inner, 'r4'))[1]).toEqual(done);
  });

  it('a repeated POST and a GET attach to a running turn: its `never` tool runs once', async () => {
    const hold = holdCall(1);
    const script: Say[] = [{ call: { name: 'charge', args: { cents: 1 } } }, { text: 'Done charging.' }];
    const model = chatModel(script, { stream: true, gate: hold.gate });
    const chat = testChat(model);
    const first = chunksOf(await post(chat, 'r5', [userMessage('charge')]));
    await hold.reached;
    const second = chunksOf(await post(chat, 'r5', [userMessage('charge')]));
    const third = chunksOf(await attached(chat, 'r5'));
    hold.release();
    const messages = await Promise.all([first, second, third].map(async (c) => assemble((await c) ?? [])));
    expect(messages[1]).toEqual(messages[0]);
    expect(messages[2]).toEqual(messages[0]);
    expect(chat.counters.charge).toBe(1);
    expect(model.seen).toHaveLength(2);
  });

  it('a settlement can be answered through its part too: data.reply set, then a POST of the messages', async () => {
    const script: Say[] = [{ call: { name: 'charge', args: { cents: 9 } } }, { text: 'Not charged, then.' }];
    const { inner } = await crashedTurn(script, 'r6', 3);
    const restarted = testChat(chatModel(script.slice(1)), { store: inner });
    await reconnect(restarted, 'r6');
    const [user, waiting] = (await loadChat(inner, 'r6')) as [UIMessage, UIMessage];
    const reply = { kind: 'deny', reason: 'it did not go through' };
    const answer = (p: UIMessage['parts'][number]) => ({ ...p, data: { ...(p as { data: object }).data, reply } });
    const parts = waiting.parts.map((p) => (p.type === 'data-polyloop-settle' ? answer(p) : p));
    const ui = new UiChat({ id: 'r6', transport: restarted.transport, messages: [user, { ...waiting, parts }] });
    await ui.sendMessage();
    expect(toolPart(ui.last)).toMatchObject({ state: 'output-error', errorText: 'it did not go through' });
    expect(textOf(ui.last)).toBe('Not charged, then.');
    expect(restarted.counters.charge).toBe(0);
    const settle = ui.last.parts.find((p) => p.type === 'data-polyloop-settle');
    expect(settle).toMatchObject({ data: { reply: { kind: 'deny' } } });
  });
});
