import { describe, expect, it } from 'vitest';
import { InMemoryStore, resume, run } from '../../../src/core/index.ts';
import { conversationOf } from '../../../src/core/internal-entry.ts';
import { chatModel, SYSTEM, testChat } from './fixtures.ts';

const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });

describe('conversationOf: the history a run ended with', () => {
  it("is the context without system messages, each step's turns, then the final reply", async () => {
    const args = { a: 1, b: 2 };
    const call = { name: 'add', args, id: 't1' };
    const toolCall = { type: 'tool_call', id: 't1', name: 'add', arguments: args };
    const chat = testChat(chatModel([{ text: 'Adding.', call }, { text: 'Three.' }]));
    const store = new InMemoryStore();
    const agent = { ...chat.agent, store };
    const turn = { chatId: 'x', turn: 1, runId: 'r1', goal: [user('1+2?')], context: [user('earlier')] };
    await run(agent, chat.request(turn));
    expect(conversationOf(await store.readLog('r1'))).toEqual([
      user('earlier'),
      user('1+2?'),
      { role: 'assistant', content: [{ type: 'text', text: 'Adding.' }, toolCall] },
      { role: 'user', content: [{ type: 'tool_result', toolCallId: 't1', text: '3' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Three.' }] },
    ]);
    expect(JSON.stringify(conversationOf(await store.readLog('r1')))).not.toContain(JSON.stringify(SYSTEM.content));
  });

  it('of a run waiting for an approval holds its completed steps only, and of an empty log nothing', async () => {
    const chat = testChat(chatModel([{ text: 'Hi.', call: { name: 'send_email', args: { to: 'a@b' } } }]));
    const store = new InMemoryStore();
    const agent = { ...chat.agent, store };
    const request = chat.request({ chatId: 'x', turn: 1, runId: 'r2', goal: [user('mail a@b')], context: [] });
    const paused = await run(agent, request);
    expect(paused.stopReason).toBe('awaiting_input');
    expect(conversationOf(await store.readLog('r2'))).toEqual([user('mail a@b')]);
    expect(conversationOf([])).toEqual([]);
    await resume(agent, request, { input: { kind: 'cancel', resultId: paused.pending?.resultId ?? '' } });
    expect(conversationOf(await store.readLog('r2'))).toEqual([user('mail a@b')]);
  });
});
