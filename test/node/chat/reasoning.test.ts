/**
 * Reasoning that streams: `model_delta` with `kind: 'reasoning'` becomes `reasoning-start` /
 * `reasoning-delta` / `reasoning-end` before the step's text, live, on a stream that joins
 * mid-reasoning, and from a run's own events; a replay still sends each finished call's
 * reasoning as one delta; and every way assembles what `loadChat` gives.
 */
import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadChat, toUIMessageStream } from '../../../src/chat/index.ts';
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { RunEvent } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { assemble, chatModel, chunksOf, deferred, post, reconnect, send, testChat, userMessage } from './fixtures.ts';
import type { Say } from './fixtures.ts';

const THINK_THEN_ADD: Say[] = [
  {
    reasoning: 'The user wants a sum; the add tool does it.',
    text: 'Let me add.',
    call: { name: 'add', args: { a: 2, b: 3 } },
  },
  { reasoning: 'The tool said 5, so I answer that.', text: 'It is 5.' },
];

const PARTS = ['step-start', 'reasoning', 'text', 'tool-add', 'step-start', 'reasoning', 'text'];

/** The turn as an uninterrupted streaming run shows it, on a fresh chat. */
async function uninterrupted(chatId: string, text = '2+3?') {
  return assemble(await send(testChat(chatModel(THINK_THEN_ADD, { stream: true })), chatId, [userMessage(text)]));
}

/** The chunk types of one part id, in order. */
const typesOf = (chunks: readonly UIMessageChunk[], id: string): string[] =>
  chunks.flatMap((c) => ('id' in c && c.id === id ? [c.type] : []));

/** Where the first chunk of `type` with `id` is. */
const at = (chunks: readonly UIMessageChunk[], type: string, id: string): number =>
  chunks.findIndex((c) => c.type === type && 'id' in c && c.id === id);

describe('reasoning that streams', () => {
  it("reaches the live stream as reasoning-start, its deltas and reasoning-end, before the step's text", async () => {
    const chat = testChat(chatModel(THINK_THEN_ADD, { stream: true }));
    const chunks = await send(chat, 'k1', [userMessage('2+3?')]);
    for (const i of [0, 1]) {
      const types = typesOf(chunks, `s${i}.reasoning`);
      expect(types[0]).toBe('reasoning-start');
      expect(types.at(-1)).toBe('reasoning-end');
      expect(types.filter((t) => t === 'reasoning-start')).toHaveLength(1);
      expect(types.filter((t) => t === 'reasoning-end')).toHaveLength(1);
      expect(types.filter((t) => t === 'reasoning-delta').length).toBeGreaterThan(1);
      expect(at(chunks, 'reasoning-end', `s${i}.reasoning`)).toBeLessThan(at(chunks, 'text-start', `s${i}.text`));
      const said = chunks.flatMap((c) => (c.type === 'reasoning-delta' && c.id === `s${i}.reasoning` ? [c.delta] : []));
      expect(said.join('')).toBe(THINK_THEN_ADD[i]!.reasoning);
    }
    const message = await assemble(chunks);
    expect(message.parts.map((p) => p.type)).toEqual(PARTS);
    expect(message.parts[1]).toMatchObject({ type: 'reasoning', text: THINK_THEN_ADD[0]!.reasoning, state: 'done' });
    expect((await loadChat(chat.store, 'k1'))[1]).toEqual(message);
  });

  it("a new server's GET replays a crashed turn's finished call, reasoning as one delta, then the rest", async () => {
    const inner = new InMemoryStore();
    // runStarted, the model intent, the result with the action intent: the step record never lands.
    const store = faultyStore(inner, { crashAfterWrites: 3 });
    const crashed = testChat(chatModel(THINK_THEN_ADD, { stream: true }), { store });
    expect((await send(crashed, 'k2', [userMessage('2+3?')])).at(-1)).toMatchObject({ type: 'error' });
    const restarted = testChat(chatModel(THINK_THEN_ADD.slice(1), { stream: true }), { store: inner });
    const replayed = (await reconnect(restarted, 'k2')) ?? [];
    expect(typesOf(replayed, 's0.reasoning')).toEqual(['reasoning-start', 'reasoning-delta', 'reasoning-end']);
    expect(at(replayed, 'reasoning-end', 's0.reasoning')).toBeLessThan(at(replayed, 'text-start', 's0.text'));
    expect(typesOf(replayed, 's1.reasoning').filter((t) => t === 'reasoning-delta').length).toBeGreaterThan(1);
    expect(at(replayed, 'reasoning-end', 's1.reasoning')).toBeLessThan(at(replayed, 'text-start', 's1.text'));
    const message = await assemble(replayed);
    expect(message.parts.map((p) => p.type)).toEqual(PARTS);
    expect((await loadChat(inner, 'k2'))[1]).toEqual(message);
    expect(message).toEqual(await uninterrupted('k2'));
  });

  it('a stream that joins mid-reasoning gets the reasoning so far in one delta, then the rest', async () => {
    const reached = deferred();
    const release = deferred();
    const gate = async (k: number): Promise<void> => {
      if (k !== 0) return;
      reached.resolve();
      await release.promise;
    };
    const chat = testChat(chatModel(THINK_THEN_ADD, { stream: true, gate, holdIn: 'reasoning' }));
    const posted = chunksOf(await post(chat, 'k4', [userMessage('2+3?')]));
    await reached.promise;
    const joining = await chat.transport.reconnectToStream({ chatId: 'k4' });
    if (joining === null) throw new Error('no turn to join');
    const joined = chunksOf(joining);
    release.resolve();
    const [live, late] = await Promise.all([posted, joined]);
    const expected = (await loadChat(chat.store, 'k4'))[1];
    expect(await assemble(live)).toEqual(expected);
    expect(await assemble(late)).toEqual(expected);
    expect(typesOf(late, 's0.reasoning').slice(0, 2)).toEqual(['reasoning-start', 'reasoning-delta']);
    expect(typesOf(late, 's0.reasoning').filter((t) => t === 'reasoning-start')).toHaveLength(1);
    expect((await assemble(late)).parts.map((p) => p.type)).toEqual(PARTS);
  });

  it("toUIMessageStream shows a run's reasoning deltas before its text, as chatHandler does", async () => {
    const expected = await uninterrupted('k5', 'go');
    const own = testChat(chatModel(THINK_THEN_ADD, { stream: true }));
    const events = new TransformStream<RunEvent, RunEvent>();
    const writer = events.writable.getWriter();
    const sink = { params: {}, deliver: (e: RunEvent) => writer.write(e) };
    const agent = defineAgent({ ...own.agent, store: new InMemoryStore(), events: sink });
    const chunks = chunksOf(toUIMessageStream(events.readable, { messageId: 'chat:k5:1:assistant' }));
    const goal = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'go' }] }];
    const turn = { chatId: 'k5', turn: 1, runId: 'chat:k5:1', goal, context: [] };
    await run(agent, own.request(turn)).finally(() => writer.close());
    const got = await chunks;
    expect(at(got, 'reasoning-end', 's0.reasoning')).toBeLessThan(at(got, 'text-start', 's0.text'));
    expect(typesOf(got, 's0.reasoning').filter((t) => t === 'reasoning-delta').length).toBeGreaterThan(1);
    expect(await assemble(got)).toEqual(expected);
  });
});
