/**
 * Several tool calls in one step through aiSdkModel: the real `@ai-sdk/openai` and
 * `@ai-sdk/anthropic` providers (LanguageModelV4) against the loopback fakes, and hand-written V3
 * and V4 models whose reply holds three tool-call parts (generated, or streamed with interleaved
 * tool input). With `parallelToolCalls: 3` the provider is not told to make one call a turn, the
 * three calls run in one step, and the next call answers each in order; without it the call
 * options are the one-call ones they always were and three calls are an invalid step.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import { afterEach, describe, expect, it } from 'vitest';
import { aiSdkModel, aiSdkToolInterpreter } from '../../../src/adapters/ai-sdk.ts';
import type { AiSdkCallOptions } from '../../../src/adapters/ai-sdk.ts';
import type { AnthropicFake } from './anthropic-server.ts';
import type { OpenAIFake } from './openai-server.ts';
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

const ONE_CALL = { openai: { parallelToolCalls: false }, anthropic: { disableParallelToolUse: true } };
const SEVERAL_CALLS = { openai: { parallelToolCalls: true }, anthropic: { disableParallelToolUse: false } };

describe.each([false, true])('three parallel calls through aiSdkModel(@ai-sdk/openai) (stream: %s)', (stream) => {
  let fake: OpenAIFake | undefined;
  afterEach(() => fake?.close());
  const start = () =>
    startOpenAIFake([
      {
        kind: 'reply',
        id: 'chatcmpl-p0',
        text: null,
        toolCalls: CALLS.map((c) => ({ id: c.id, name: 'add', arguments: JSON.stringify(c.input) })),
      },
      { kind: 'reply', id: 'chatcmpl-p1', text: FINAL },
    ]);
  const model = (f: OpenAIFake) =>
    aiSdkModel(createOpenAI({ baseURL: f.baseURL, apiKey: 'test' }).chat('gpt-test'), { stream });
  const assistant = {
    role: 'assistant',
    content: null,
    tool_calls: CALLS.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: 'add', arguments: JSON.stringify(c.input) },
    })),
  };
  type Body = { messages: unknown[]; parallel_tool_calls?: unknown };

  it('sends parallel_tool_calls: true, runs all three in one step, and answers each with a tool message', async () => {
    fake = await start();
    expectThreeRan(await runWith(model(fake), aiSdkToolInterpreter(), 3));
    const bodies = fake.requests.map((r) => r.body as Body);
    expect(bodies.map((b) => b.parallel_tool_calls)).toEqual([true, true]);
    expect(bodies[1]!.messages.slice(3)).toEqual([
      assistant,
      ...CALLS.map((c) => ({ role: 'tool', tool_call_id: c.id, content: `Observation: ${c.sum}` })),
    ]);
  });

  it('without parallelToolCalls sends parallel_tool_calls: false and takes three calls as invalid', async () => {
    fake = await start();
    expectThreeRefused(await runWith(model(fake), aiSdkToolInterpreter()));
    const bodies = fake.requests.map((r) => r.body as Body);
    expect(bodies.map((b) => b.parallel_tool_calls)).toEqual([false, false]);
    expect(bodies[1]!.messages.slice(3)).toEqual([
      assistant,
      ...CALLS.map((c) => ({ role: 'tool', tool_call_id: c.id, content: THREE_AT_ONCE })),
    ]);
  });
});

describe.each([false, true])('three parallel calls through aiSdkModel(@ai-sdk/anthropic) (stream: %s)', (stream) => {
  let fake: AnthropicFake | undefined;
  afterEach(() => fake?.close());
  const start = () =>
    startAnthropicFake([
      {
        kind: 'reply',
        id: 'msg_p0',
        content: [
          { type: 'text', text: 'Three sums.' },
          ...CALLS.map((c) => ({ type: 'tool_use' as const, id: c.id, name: 'add', input: c.input })),
        ],
      },
      { kind: 'reply', id: 'msg_p1', content: [{ type: 'text', text: FINAL }] },
    ]);
  const model = (f: AnthropicFake) =>
    aiSdkModel(createAnthropic({ baseURL: f.baseURL, apiKey: 'test' })('claude-test'), { stream });
  const assistant = {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Three sums.' },
      ...CALLS.map((c) => ({ type: 'tool_use', id: c.id, name: 'add', input: c.input })),
    ],
  };
  type Body = { messages: unknown[]; tool_choice?: unknown };

  it('leaves parallel tool use allowed, runs all three in one step, and answers them in one user message', async () => {
    fake = await start();
    expectThreeRan(await runWith(model(fake), aiSdkToolInterpreter(), 3));
    const bodies = fake.requests.map((r) => r.body as Body);
    expect(bodies.map((b) => 'tool_choice' in b)).toEqual([false, false]);
    expect(bodies[1]!.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: GOAL }] },
      assistant,
      {
        role: 'user',
        content: CALLS.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: `Observation: ${c.sum}` })),
      },
    ]);
  });

  it('without parallelToolCalls disables parallel tool use and takes three calls as invalid', async () => {
    fake = await start();
    expectThreeRefused(await runWith(model(fake), aiSdkToolInterpreter()));
    const bodies = fake.requests.map((r) => r.body as Body);
    expect(bodies.map((b) => b.tool_choice)).toEqual(Array(2).fill({ type: 'auto', disable_parallel_tool_use: true }));
  });
});

/** The reply with three calls as a generate result, and as the parts of a stream (tool input interleaved). */
const THREE_PARTS = [
  { type: 'text', text: 'Three sums.' },
  ...CALLS.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: 'add', input: JSON.stringify(c.input) })),
];
const THREE_STREAM = [
  { type: 'stream-start', warnings: [] },
  { type: 'response-metadata', id: 'resp-p0' },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'Three sums.' },
  { type: 'text-end', id: 't' },
  ...CALLS.map((c) => ({ type: 'tool-input-start', id: c.id, toolName: 'add' })),
  ...CALLS.map((c) => ({ type: 'tool-input-delta', id: c.id, delta: JSON.stringify(c.input) })),
  ...CALLS.map((c) => ({ type: 'tool-input-end', id: c.id })),
  ...THREE_PARTS.slice(1),
  { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage() },
];
const FINAL_STREAM = [
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: FINAL },
  { type: 'text-end', id: 't' },
  { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage() },
];

function usage() {
  return { inputTokens: { total: 10 }, outputTokens: { total: 5 } };
}

const streamOf = (parts: readonly unknown[]) =>
  new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });

/** A hand-written model of `version` that replies with the three calls, then the answer; it keeps its call options. */
function handModel(version: 'v3' | 'v4', seen: AiSdkCallOptions[]): LanguageModelV3 | LanguageModelV4 {
  const results = [
    { content: THREE_PARTS, finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(), warnings: [] },
    {
      content: [{ type: 'text', text: FINAL }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: usage(),
      warnings: [],
    },
  ];
  const streams = [THREE_STREAM, FINAL_STREAM];
  return {
    specificationVersion: version,
    provider: 'hand.chat',
    modelId: `m-${version}`,
    supportedUrls: {},
    doGenerate: async (o: AiSdkCallOptions) => results[seen.push(o) - 1] as never,
    doStream: async (o: AiSdkCallOptions) => ({ stream: streamOf(streams[seen.push(o) - 1]!) }) as never,
  } as LanguageModelV3 | LanguageModelV4;
}

/** The prompt of the call after the three calls ran (or were refused), each answered by `answer`. */
function secondPrompt(answer: (c: (typeof CALLS)[number]) => string): unknown[] {
  return [
    ...SYSTEM.map((content) => ({ role: 'system', content })),
    { role: 'user', content: [{ type: 'text', text: GOAL }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Three sums.' },
        ...CALLS.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: 'add', input: c.input })),
      ],
    },
    {
      role: 'tool',
      content: CALLS.map((c) => ({
        type: 'tool-result',
        toolCallId: c.id,
        toolName: 'add',
        output: { type: 'text', value: answer(c) },
      })),
    },
  ];
}

describe.each([
  ['v3', false],
  ['v3', true],
  ['v4', false],
  ['v4', true],
] as const)('three tool-call parts from a hand-written %s model (stream: %s)', (version, stream) => {
  it('drops the one-call provider options, runs all three in one step, and answers each tool-call part in order', async () => {
    const seen: AiSdkCallOptions[] = [];
    expectThreeRan(await runWith(aiSdkModel(handModel(version, seen), { stream }), aiSdkToolInterpreter(), 3));
    expect(seen).toHaveLength(2);
    expect(seen.map((o) => o.providerOptions)).toEqual([SEVERAL_CALLS, SEVERAL_CALLS]);
    expect(seen[1]!.tools).toEqual([
      { type: 'function', name: 'add', description: ADD.description, inputSchema: ADD.parameters },
    ]);
    expect(seen[1]!.prompt).toEqual(secondPrompt((c) => `Observation: ${c.sum}`));
  });

  it('without parallelToolCalls asks for one call a turn and takes three tool-call parts as invalid', async () => {
    const seen: AiSdkCallOptions[] = [];
    expectThreeRefused(await runWith(aiSdkModel(handModel(version, seen), { stream }), aiSdkToolInterpreter()));
    expect(seen.map((o) => o.providerOptions)).toEqual([ONE_CALL, ONE_CALL]);
    expect(seen[1]!.prompt).toEqual(secondPrompt(() => THREE_AT_ONCE));
  });
});
