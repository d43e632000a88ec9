/**
 * Opaque blocks through the Anthropic adapter: a `redacted_thinking` block comes back
 * as `{ type: 'opaque', provider: 'anthropic', data }` in the reply and the step's history, and
 * goes back byte for byte in the next request's assistant turn — plain and streamed. Opaque
 * blocks of another provider never reach a prompt.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { toAnthropicMessages } from '../../../src/adapters/anthropic-wire.ts';
import { toOpenAIMessages } from '../../../src/adapters/openai-wire.ts';
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { Message } from '../../../src/core/index.ts';
import { collectingSink } from '../../../src/testing/index.ts';
import { request, SYNTHETIC } from './agent-fixtures.ts';
import type { AnthropicFake } from './anthropic-server.ts';
import { txt } from './helpers.ts';
import { startAnthropicFake } from './serve.ts';

const DATA =
  'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabZmxojBsMK2ZqGEwhGqqZLa==';
const REDACTED = { type: 'redacted_thinking', data: DATA } as const;

let fake: AnthropicFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe.each([false, true])('redacted thinking through anthropicModel (stream: %s)', (stream) => {
  it('becomes an opaque block and goes back byte-identically in the next request', async () => {
    fake = await startAnthropicFake([
      {
        kind: 'reply',
        id: 'msg_r0',
        content: [
          { type: 'thinking', thinking: 'Add first.', signature: 'sig-r' },
          REDACTED,
          { type: 'tool_use', id: 'toolu_r', name: 'add', input: { a: 1, b: 2 } },
        ],
      },
      { kind: 'reply', id: 'msg_r1', content: [{ type: 'text', text: 'The answer is 7.' }] },
    ]);
    const model = anthropicModel({ model: 'claude-test', baseURL: fake.baseURL, maxTokens: 512, stream });
    const agent = defineAgent({
      model,
      interpreter: anthropicToolInterpreter(),
      store: new InMemoryStore(),
      events: collectingSink(),
      syntheticObservations: SYNTHETIC,
    });
    const result = await run(agent, request('rt1'));
    expect(result).toMatchObject({ stopReason: 'final_answer', steps: 2, validActions: 1 });
    expect(result.trajectory[0]!.historyContent).toEqual([
      { type: 'reasoning', text: 'Add first.', signature: 'sig-r' },
      { type: 'opaque', provider: 'anthropic', data: REDACTED },
      { type: 'tool_call', id: 'toolu_r', name: 'add', arguments: { a: 1, b: 2 } },
    ]);
    const second = fake.requests[1]!.body as { messages: { role: string; content: unknown[] }[] };
    const assistant = second.messages.find((m) => m.role === 'assistant')!;
    expect(JSON.stringify(assistant.content[1])).toBe(JSON.stringify(REDACTED));
    expect(assistant.content.map((b) => (b as { type: string }).type)).toEqual([
      'thinking',
      'redacted_thinking',
      'tool_use',
    ]);
  });
});

describe('opaque blocks in a prompt', () => {
  const history: Message[] = [
    txt('user', 'What is 1+2?'),
    {
      role: 'assistant',
      content: [
        { type: 'opaque', provider: 'anthropic', data: REDACTED },
        { type: 'opaque', provider: 'google', data: { thoughtSignature: 'abc' } },
        { type: 'text', text: 'It is 3.' },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'opaque', provider: 'anthropic', data: REDACTED },
        { type: 'text', text: 'Thanks.' },
      ],
    },
  ];

  it("keeps Anthropic's own in an assistant turn and drops another provider's, and any in a user turn", () => {
    expect(toAnthropicMessages(history).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is 1+2?' }] },
      { role: 'assistant', content: [REDACTED, { type: 'text', text: 'It is 3.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Thanks.' }] },
    ]);
  });

  it('are dropped by the OpenAI adapter, which has no field for them', () => {
    expect(toOpenAIMessages(history)).toEqual([
      { role: 'user', content: 'What is 1+2?' },
      { role: 'assistant', content: 'It is 3.' },
      { role: 'user', content: 'Thanks.' },
    ]);
  });
});
