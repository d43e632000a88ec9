/**
 * Several tool calls in one step through openAIModel and anthropicModel, against their loopback
 * fakes: a run with `parallelToolCalls: 3` asks the provider for parallel calls, runs the three
 * calls of one reply in one step, and the next request answers all three in the order and shape
 * the provider requires. Without it the request is the one-call request it always was, and a
 * reply with three calls is an invalid step whose calls are each answered with the explanation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import type { AnthropicFake, AnthropicTurn } from './anthropic-server.ts';
import type { OpenAIFake, OpenAITurn } from './openai-server.ts';
import {
  ADD,
  CALLS,
  expectThreeRan,
  expectThreeRefused,
  FINAL,
  GOAL,
  runWith,
  SYSTEM,
  THREE_AT_ONCE,
} from './parallel-fixtures.ts';
import { startAnthropicFake, startOpenAIFake } from './serve.ts';

const openAIScript = (): OpenAITurn[] => [
  {
    kind: 'reply',
    id: 'chatcmpl-p0',
    text: null,
    toolCalls: CALLS.map((c) => ({ id: c.id, name: 'add', arguments: JSON.stringify(c.input) })),
  },
  { kind: 'reply', id: 'chatcmpl-p1', text: FINAL },
];

/** A Chat Completions request body of this run, in the order the adapter writes its fields. */
function openAIBody(messages: unknown[], parallel: boolean, stream: boolean): Record<string, unknown> {
  return {
    store: true,
    model: 'gpt-test',
    messages: [...SYSTEM.map((content) => ({ role: 'system', content })), { role: 'user', content: GOAL }, ...messages],
    tools: [{ type: 'function', function: { name: 'add', description: ADD.description, parameters: ADD.parameters } }],
    parallel_tool_calls: parallel,
    metadata: { user_id: 'u-1' },
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

/** The assistant turn holding the three calls, in Chat Completions shape. */
const OPENAI_ASSISTANT = {
  role: 'assistant',
  content: null,
  tool_calls: CALLS.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: 'add', arguments: JSON.stringify(c.input) },
  })),
};

describe.each([false, true])('three parallel calls through openAIModel (stream: %s)', (stream) => {
  let fake: OpenAIFake | undefined;
  afterEach(() => fake?.close());
  const model = (baseURL: string) => openAIModel({ model: 'gpt-test', baseURL, stream, body: { store: true } });

  it('asks for parallel calls, runs all three in one step, and answers each with a tool message, in order', async () => {
    fake = await startOpenAIFake(openAIScript());
    expectThreeRan(await runWith(model(fake.baseURL), openAIToolInterpreter(), 3));
    const bodies = fake.requests.map((r) => r.body);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toEqual(openAIBody([], true, stream));
    expect(bodies[1]).toEqual(
      openAIBody(
        [
          OPENAI_ASSISTANT,
          ...CALLS.map((c) => ({ role: 'tool', tool_call_id: c.id, content: `Observation: ${c.sum}` })),
        ],
        true,
        stream,
      ),
    );
  });

  it('leaves parallel_tool_calls out under parallelToolCalls: "omit", and still runs all three', async () => {
    fake = await startOpenAIFake(openAIScript());
    const omitting = openAIModel({
      model: 'gpt-test',
      baseURL: fake.baseURL,
      stream,
      body: { store: true },
      parallelToolCalls: 'omit',
    });
    expectThreeRan(await runWith(omitting, openAIToolInterpreter(), 3));
    expect(fake.requests.map((r) => 'parallel_tool_calls' in r.body)).toEqual([false, false]);
  });

  it('without parallelToolCalls sends the one-call request, byte for byte, and takes three calls as invalid', async () => {
    fake = await startOpenAIFake(openAIScript());
    expectThreeRefused(await runWith(model(fake.baseURL), openAIToolInterpreter()));
    const bodies = fake.requests.map((r) => JSON.stringify(r.body));
    expect(bodies[0]).toBe(JSON.stringify(openAIBody([], false, stream)));
    const refused = CALLS.map((c) => ({ role: 'tool', tool_call_id: c.id, content: THREE_AT_ONCE }));
    expect(bodies[1]).toBe(JSON.stringify(openAIBody([OPENAI_ASSISTANT, ...refused], false, stream)));
  });
});

const anthropicScript = (): AnthropicTurn[] => [
  {
    kind: 'reply',
    id: 'msg_p0',
    content: [
      { type: 'text', text: 'Three sums.' },
      ...CALLS.map((c) => ({ type: 'tool_use' as const, id: c.id, name: 'add', input: c.input })),
    ],
  },
  { kind: 'reply', id: 'msg_p1', content: [{ type: 'text', text: FINAL }] },
];

/** A Messages request body of this run, in the order the adapter writes its fields. */
function anthropicBody(messages: unknown[], parallel: boolean, stream: boolean): Record<string, unknown> {
  return {
    model: 'claude-test',
    max_tokens: 512,
    messages: [{ role: 'user', content: [{ type: 'text', text: GOAL }] }, ...messages],
    system: SYSTEM.map((text) => ({ type: 'text', text })),
    tools: [{ name: 'add', description: ADD.description, input_schema: { ...ADD.parameters, type: 'object' } }],
    tool_choice: { type: 'auto', disable_parallel_tool_use: !parallel },
    metadata: { user_id: 'u-1' },
    ...(stream ? { stream: true } : {}),
  };
}

/** The assistant turn holding the three calls, as Messages content blocks. */
const ANTHROPIC_ASSISTANT = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Three sums.' },
    ...CALLS.map((c) => ({ type: 'tool_use', id: c.id, name: 'add', input: c.input })),
  ],
};

describe.each([false, true])('three parallel calls through anthropicModel (stream: %s)', (stream) => {
  let fake: AnthropicFake | undefined;
  afterEach(() => fake?.close());
  const model = (baseURL: string) => anthropicModel({ model: 'claude-test', baseURL, maxTokens: 512, stream });

  it('allows parallel tool use, runs all three in one step, and answers them in one user message, in order', async () => {
    fake = await startAnthropicFake(anthropicScript());
    expectThreeRan(await runWith(model(fake.baseURL), anthropicToolInterpreter(), 3));
    const bodies = fake.requests.map((r) => r.body);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toEqual(anthropicBody([], true, stream));
    const results = CALLS.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: `Observation: ${c.sum}` }));
    expect(bodies[1]).toEqual(anthropicBody([ANTHROPIC_ASSISTANT, { role: 'user', content: results }], true, stream));
  });

  it('without parallelToolCalls sends the one-call request, byte for byte, and takes three calls as invalid', async () => {
    fake = await startAnthropicFake(anthropicScript());
    expectThreeRefused(await runWith(model(fake.baseURL), anthropicToolInterpreter()));
    const bodies = fake.requests.map((r) => JSON.stringify(r.body));
    expect(bodies[0]).toBe(JSON.stringify(anthropicBody([], false, stream)));
    const refused = CALLS.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: THREE_AT_ONCE }));
    const answered = anthropicBody([ANTHROPIC_ASSISTANT, { role: 'user', content: refused }], false, stream);
    expect(bodies[1]).toBe(JSON.stringify(answered));
  });
});
