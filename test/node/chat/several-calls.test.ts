/**
 * A turn whose model makes several tool calls in one reply (`parallelToolCalls` above 1): one tool
 * part per call, in the provider's order, live and from the log; one approval request per gated
 * call, answered through the AI SDK's parts in any order and in any number of POSTs.
 */
import type { UIMessage, UIMessageChunk } from 'ai';
import { validateUIMessages } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadChat, toUIMessageStream } from '../../../src/chat/index.ts';
import { defineAgent, InMemoryStore, readRunLog, run } from '../../../src/core/index.ts';
import type { Message, ModelCall, ModelReply, RunEvent } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { assemble, chatModel, chunksOf, reconnect, send, testChat, textOf, toolParts } from './fixtures.ts';
import { UiChat, userMessage } from './fixtures.ts';
import type { ChatModel, Say, TestChat } from './fixtures.ts';

const MAIL_TWO: Say = {
  text: 'Mailing both.',
  calls: [
    { name: 'send_email', args: { to: 'a@b' }, id: 'm1' },
    { name: 'add', args: { a: 1, b: 2 }, id: 'm2' },
    { name: 'send_email', args: { to: 'c@d' }, id: 'm3' },
  ],
};
const SCRIPT: Say[] = [MAIL_TWO, { text: 'Done.' }];

const json = (value: unknown): Request =>
  new Request('http://chat.test/api/chat', {
    method: 'POST',
    body: JSON.stringify(value),
    headers: { 'content-type': 'application/json' },
  });

/** Each tool part as `[type, toolCallId, state]`. */
const shape = (m: UIMessage): string[][] => toolParts(m).map((p) => [String(p['type']), p.toolCallId, p.state]);

/** The approval id of the tool part `toolCallId`. */
const approvalOf = (m: UIMessage, toolCallId: string): string =>
  toolParts(m).find((p) => p.toolCallId === toolCallId)?.approval?.id ?? '';

/** The tool results of the last message a model call was shown, as `[toolCallId, text]`. */
const toolResults = (messages: readonly Message[] | undefined): [string, string][] =>
  (messages?.at(-1)?.content ?? []).flatMap((b) => (b.type === 'tool_result' ? [[b.toolCallId, b.text]] : []));

/** loadChat gives the page's assistant message, and the AI SDK accepts the whole conversation. */
async function expectLoaded(chat: TestChat, chatId: string, last: UIMessage): Promise<void> {
  const loaded = await loadChat(chat.store, chatId);
  expect(loaded.at(-1)).toEqual(last);
  await expect(validateUIMessages({ messages: loaded })).resolves.toHaveLength(loaded.length);
}

async function asked(chatId: string): Promise<{ chat: TestChat; ui: UiChat }> {
  const chat = testChat(chatModel(SCRIPT), { parallel: 3 });
  const ui = new UiChat({ id: chatId, transport: chat.transport });
  await ui.sendMessage({ text: 'mail a@b and c@d, and add 1 and 2' });
  return { chat, ui };
}

describe('a turn with several tool calls in one step', () => {
  it("shows one tool part per call in the provider's order, an approval request on each gated call", async () => {
    const { chat, ui } = await asked('p1');
    expect(shape(ui.last)).toEqual([
      ['tool-send_email', 'm1', 'approval-requested'],
      ['tool-add', 'm2', 'input-available'],
      ['tool-send_email', 'm3', 'approval-requested'],
    ]);
    expect(toolParts(ui.last).map((p) => p['input'])).toEqual([{ to: 'a@b' }, { a: 1, b: 2 }, { to: 'c@d' }]);
    expect([approvalOf(ui.last, 'm1'), approvalOf(ui.last, 'm3')]).toEqual([
      'chat:p1:1:s0.a0.input',
      'chat:p1:1:s0.a2.input',
    ]);
    expect(ui.last.metadata).toMatchObject({ stopReason: 'awaiting_input' });
    expect(chat.counters).toEqual({ add: 0, charge: 0, send: 0 });
    await expectLoaded(chat, 'p1', ui.last);
  });

  it('approve the second call first, then deny the first: each reply reaches its request; POST two ends', async () => {
    const { chat, ui } = await asked('p2');
    await ui.addToolApprovalResponse({ id: approvalOf(ui.last, 'm3'), approved: true });
    await ui.sendMessage();
    expect(ui.status).toBe('ready');
    expect(shape(ui.last)).toEqual([
      ['tool-send_email', 'm1', 'approval-requested'],
      ['tool-add', 'm2', 'input-available'],
      ['tool-send_email', 'm3', 'approval-responded'],
    ]);
    expect(chat.counters).toEqual({ add: 0, charge: 0, send: 0 });
    const open = readRunLog(await chat.store.readLog('chat:p2:1')).openRequests.map((r) => r.resultId);
    expect(open).toEqual(['s0.a0.input']);
    await expectLoaded(chat, 'p2', ui.last);

    await ui.addToolApprovalResponse({ id: approvalOf(ui.last, 'm1'), approved: false, reason: 'not a@b' });
    await ui.sendMessage();
    expect(shape(ui.last)).toEqual([
      ['tool-send_email', 'm1', 'output-denied'],
      ['tool-add', 'm2', 'output-available'],
      ['tool-send_email', 'm3', 'output-available'],
    ]);
    expect(toolParts(ui.last).map((p) => p['output'] ?? null)).toEqual([null, '3', 'sent to c@d']);
    expect(toolParts(ui.last)[0]?.['approval']).toMatchObject({ approved: false, reason: 'not a@b' });
    expect(textOf(ui.last)).toBe('Mailing both.Done.');
    expect(ui.messages).toHaveLength(2);
    expect(chat.counters).toEqual({ add: 1, charge: 0, send: 1 });
    expect(toolResults(chat.model.seen[1])).toEqual([
      ['m1', 'not a@b'],
      ['m2', '3'],
      ['m3', 'sent to c@d'],
    ]);
    await expectLoaded(chat, 'p2', ui.last);
    // A repeated POST of the turn replays it from its log: the same message.
    const replayed = await assemble(await send(chat, 'p2', [userMessage('mail a@b and c@d, and add 1 and 2')]));
    expect(replayed).toEqual(ui.last);
  });

  it('both approvals in one POST (as sendAutomaticallyWhen sends them) run the step at once', async () => {
    const { chat, ui } = await asked('p3');
    await ui.addToolApprovalResponse({ id: approvalOf(ui.last, 'm1'), approved: true });
    await ui.addToolApprovalResponse({ id: approvalOf(ui.last, 'm3'), approved: true });
    await ui.sendMessage();
    expect(shape(ui.last).map(([, , state]) => state)).toEqual([
      'output-available',
      'output-available',
      'output-available',
    ]);
    expect(textOf(ui.last)).toBe('Mailing both.Done.');
    expect(chat.counters).toEqual({ add: 1, charge: 0, send: 2 });
    await expectLoaded(chat, 'p3', ui.last);
  });

  it('a tool a person answers and an approval in one step: both filled on the page, one POST', async () => {
    const both: Say = {
      calls: [
        { name: 'ask_user', args: { question: 'colour?' }, id: 'q1' },
        { name: 'send_email', args: { to: 'a@b' }, id: 'q2' },
      ],
    };
    const chat = testChat(chatModel([both, { text: 'Blue, and sent.' }]), { parallel: 2 });
    const ui = new UiChat({ id: 'p4', transport: chat.transport });
    await ui.sendMessage({ text: 'ask me, then mail a@b' });
    expect(shape(ui.last)).toEqual([
      ['tool-ask_user', 'q1', 'input-available'],
      ['tool-send_email', 'q2', 'approval-requested'],
    ]);
    await ui.addToolOutput({ tool: 'ask_user', toolCallId: 'q1', output: 'blue' });
    await ui.addToolApprovalResponse({ id: approvalOf(ui.last, 'q2'), approved: true });
    await ui.sendMessage();
    expect(toolParts(ui.last).map((p) => [p.state, p['output']])).toEqual([
      ['output-available', 'blue'],
      ['output-available', 'sent to a@b'],
    ]);
    expect(toolResults(chat.model.seen[1])).toEqual([
      ['q1', 'blue'],
      ['q2', 'sent to a@b'],
    ]);
    await expectLoaded(chat, 'p4', ui.last);
  });

  it('{ id, runId, input } answers any open request of the step; one not open is a 409, nothing written', async () => {
    const { chat } = await asked('p5');
    const reply = (resultId: string) => ({ id: 'p5', runId: 'chat:p5:1', input: { kind: 'approve', resultId } });
    const second = await chat.handle(json(reply('s0.a2.input')));
    expect(second.status).toBe(200);
    await second.text();
    const before = await chat.store.readLog('chat:p5:1');
    expect(readRunLog(before).openRequests.map((r) => r.resultId)).toEqual(['s0.a0.input']);
    const notOpen = await chat.handle(json(reply('s0.a1.input')));
    expect(notOpen.status).toBe(409);
    expect(await chat.store.readLog('chat:p5:1')).toHaveLength(before.length);
    const first = await chat.handle(json(reply('s0.a0.input')));
    expect(first.status).toBe(200);
    await first.text();
    expect(chat.counters).toEqual({ add: 1, charge: 0, send: 2 });
    expect(readRunLog(await chat.store.readLog('chat:p5:1')).ended?.stopReason).toBe('final_answer');
  });

  it('a new message while two approvals wait cancels that turn: every tool part of the step ends', async () => {
    const chat = testChat(chatModel([MAIL_TWO, { text: 'OK, something else.' }]), { parallel: 3 });
    const ui = new UiChat({ id: 'p6', transport: chat.transport });
    await ui.sendMessage({ text: 'mail a@b and c@d' });
    await ui.sendMessage({ text: 'never mind' });
    expect(textOf(ui.last)).toBe('OK, something else.');
    expect(readRunLog(await chat.store.readLog('chat:p6:1')).ended?.stopReason).toBe('cancelled');
    expect(chat.counters).toEqual({ add: 0, charge: 0, send: 0 });
    const loaded = await loadChat(chat.store, 'p6');
    expect(shape(loaded[1] as UIMessage).map(([, , state]) => state)).toEqual([
      'output-denied',
      'output-error',
      'output-denied',
    ]);
    await expect(validateUIMessages({ messages: loaded })).resolves.toHaveLength(4);
  });

  it("the next turn's context holds every call and answers each in order", async () => {
    const chat = testChat(chatModel([...SCRIPT, { text: 'You are welcome.' }]), { parallel: 3 });
    const ui = new UiChat({ id: 'p7', transport: chat.transport });
    await ui.sendMessage({ text: 'mail a@b and c@d' });
    await ui.addToolApprovalResponse({ id: approvalOf(ui.last, 'm1'), approved: true });
    await ui.addToolApprovalResponse({ id: approvalOf(ui.last, 'm3'), approved: true });
    await ui.sendMessage();
    await ui.sendMessage({ text: 'thanks' });
    const seen = chat.model.seen[2] ?? [];
    expect(seen.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    const calls = seen[2]?.content.flatMap((b) => (b.type === 'tool_call' ? [b.id] : []));
    expect(calls).toEqual(['m1', 'm2', 'm3']);
    expect(toolResults(seen.slice(0, 4))).toEqual([
      ['m1', 'sent to a@b'],
      ['m2', '3'],
      ['m3', 'sent to c@d'],
    ]);
    await expectLoaded(chat, 'p7', ui.last);
  });
});

type Call = { readonly id: string; readonly name: string; readonly arguments: Record<string, number> };
const add = (id: string, a: number, b: number): Call => ({ id, name: 'add', arguments: { a, b } });
const ADD_THREE = [add('k1', 1, 2), add('k2', 3, 4), add('k3', 5, 6)];

/**
 * A model whose reply is a function of what it is shown (a resumed turn may call it again): the
 * `calls` in one reply (three `add` calls by default), then, once it reads their results, one
 * text. Text streams in.
 */
function callsModel(calls: readonly Call[] = ADD_THREE): ChatModel {
  const seen: Message[][] = [];
  return {
    params: Object.freeze({ model: 'calls' }),
    seen,
    left: () => 0,
    async call(call: ModelCall): Promise<ModelReply> {
      seen.push(structuredClone([...call.messages]));
      const answered = call.messages.at(-1)?.content.some((b) => b.type === 'tool_result') === true;
      const text = answered ? 'The sums are in.' : 'Adding three pairs.';
      for (const word of text.match(/\S+\s*/g) ?? []) call.onDelta?.(word);
      const toolCalls = answered ? [] : calls;
      return { callId: null, text, reasoning: null, toolCalls, usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
}

describe('a turn with several calls interrupted at every write', () => {
  it('a reconnect resumes it from its log and the page gets the message of the uninterrupted turn', async () => {
    const whole = testChat(callsModel(), { parallel: 2 });
    const expected = await assemble(await send(whole, 'w0', [userMessage('go')]));
    expect(toolParts(expected).map((p) => [p.toolCallId, p['output']])).toEqual([
      ['k1', '3'],
      ['k2', '7'],
      ['k3', '11'],
    ]);
    const writes = (await whole.store.readLog('chat:w0:1')).length;
    for (let n = 1; n < writes; n++) {
      const inner = new InMemoryStore();
      const crashed = testChat(callsModel(), { parallel: 2, store: faultyStore(inner, { crashAfterWrites: n }) });
      const dying = await send(crashed, 'w0', [userMessage('go')]);
      if (dying.at(-1)?.type !== 'error') continue;
      const restarted = testChat(callsModel(), { parallel: 2, store: inner });
      const message = await assemble((await reconnect(restarted, 'w0')) ?? []);
      expect(message, `crash after write ${n}`).toEqual(expected);
      expect((await loadChat(inner, 'w0'))[1], `loaded after write ${n}`).toEqual(expected);
    }
  });
});

describe('a call in doubt at a crash in a step with several', () => {
  it("asks its own settlement; the person's reply is carried out and nothing runs twice", async () => {
    const calls = [add('k1', 1, 2), { id: 'k2', name: 'charge', arguments: { cents: 500 } }];
    const inner = new InMemoryStore();
    // The third write: the model's result and the actions intent land, the charge runs, its outcome is lost.
    const crashed = testChat(callsModel(calls), { parallel: 2, store: faultyStore(inner, { crashAfterWrites: 3 }) });
    await send(crashed, 's1', [userMessage('go')]);
    expect(crashed.counters.charge).toBe(1);
    const restarted = testChat(callsModel(calls), { parallel: 2, store: inner });
    const waiting = await assemble((await reconnect(restarted, 's1')) ?? []);
    expect(readRunLog(await inner.readLog('chat:s1:1')).openRequests.map((r) => r.resultId)).toEqual(['s0.a1.settle']);
    expect(shape(waiting)).toEqual([
      ['tool-add', 'k1', 'input-available'],
      ['tool-charge', 'k2', 'input-available'],
    ]);
    type Settle = { type: 'data-polyloop-settle'; id: string; data: object };
    const settle = waiting.parts.find((p) => p.type === 'data-polyloop-settle') as Settle;
    expect(settle).toMatchObject({ id: 'chat:s1:1:s0.a1.settle', data: { resultId: 's0.a1.settle' } });
    const reply = { kind: 'executed', observation: 'charged once' };
    const parts = waiting.parts.map((p) => (p === settle ? { ...settle, data: { ...settle.data, reply } } : p));
    const [user] = await loadChat(inner, 's1');
    const ui = new UiChat({
      id: 's1',
      transport: restarted.transport,
      messages: [user as UIMessage, { ...waiting, parts }],
    });
    await ui.sendMessage();
    expect(toolParts(ui.last).map((p) => [p.state, p['output']])).toEqual([
      ['output-available', '3'],
      ['output-available', 'charged once'],
    ]);
    expect(crashed.counters.charge + restarted.counters.charge).toBe(1);
    await expectLoaded(restarted, 's1', ui.last);
  });
});

describe("toUIMessageStream: a step with several calls from a run's own events", () => {
  it('gives the tool parts the log gives, in the provider order, each approval request on its own part', async () => {
    const own = testChat(chatModel(SCRIPT, { stream: true }), { parallel: 3 });
    const events = new TransformStream<RunEvent, RunEvent>();
    const writer = events.writable.getWriter();
    const seen: RunEvent[] = [];
    const deliver = (e: RunEvent): Promise<void> => {
      seen.push(e);
      return writer.write(e);
    };
    const sink = { params: {}, deliver };
    const store = new InMemoryStore();
    const agent = defineAgent({ ...own.agent, store, events: sink });
    const chunks = chunksOf(toUIMessageStream(events.readable, { messageId: 'chat:e2:1:assistant' }));
    const goal = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'go' }] }];
    await run(agent, own.request({ chatId: 'e2', turn: 1, runId: 'chat:e2:1', goal, context: [] }));
    await writer.close();
    const got: UIMessageChunk[] = await chunks;
    const tools = got.flatMap((c) =>
      c.type.startsWith('tool-') && 'toolCallId' in c ? [`${c.type} ${c.toolCallId}`] : [],
    );
    expect(tools).toEqual([
      'tool-input-available m1',
      'tool-input-available m2',
      'tool-input-available m3',
      'tool-approval-request m1',
      'tool-approval-request m3',
    ]);
    expect(got.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    // The decision event names every call before any is asked about or runs: what a live stream shows first.
    const decision = seen.find((e) => e.type === 'decision');
    const named = decision?.type === 'decision' ? decision.calls?.map((c) => [c.resultId, c.action]) : undefined;
    expect(named?.map(([resultId]) => resultId)).toEqual(['s0.a0', 's0.a1', 's0.a2']);
    expect(seen.indexOf(decision as RunEvent)).toBeLessThan(seen.findIndex((e) => e.type === 'input_requested'));
    const [, fromLog] = await loadChat(store, 'e2');
    expect(await assemble(got)).toEqual(fromLog);
  });
});
