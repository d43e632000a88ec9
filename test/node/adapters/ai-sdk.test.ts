/**
 * aiSdkModel over the real AI SDK providers (`@ai-sdk/openai`, `@ai-sdk/anthropic`), pointed
 * through their `baseURL` at the loopback fakes of each wire format: full runs with tool calls,
 * plain and streaming, usage totals, a cut-off reply, the token budget, the crash law with the
 * provider prompts compared byte for byte, and the seam contracts.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiSdkModel, aiSdkToolInterpreter } from '../../../src/adapters/ai-sdk.ts';
import { defineAgent } from '../../../src/core/index.ts';
import {
  collectingSink,
  crashAtEveryWrite,
  decisionInterpreterContract,
  modelCallerContract,
} from '../../../src/testing/index.ts';
import type { ModelScenario } from '../../../src/testing/index.ts';
import { describeContract } from '../../contract/vitest-suite.ts';
import { ANTHROPIC_SCRIPT, EMPTY, MULTI, OPENAI_SCRIPT, request, SYNTHETIC } from './agent-fixtures.ts';
import { CUT_SCRIPT, runThrough } from './ai-sdk-fixtures.ts';
import type { AnthropicFake } from './anthropic-server.ts';
import type { OpenAIFake } from './openai-server.ts';
import { startAnthropicFake, startOpenAIFake } from './serve.ts';

const openAIChat = (fake: OpenAIFake, fetch?: typeof globalThis.fetch) =>
  createOpenAI({ baseURL: fake.baseURL, apiKey: 'test', ...(fetch ? { fetch } : {}) }).chat('gpt-test');
const anthropicMessages = (fake: AnthropicFake) =>
  createAnthropic({ baseURL: fake.baseURL, apiKey: 'test' })('claude-test');

describe.each([false, true])('a run through aiSdkModel(@ai-sdk/openai) on the OpenAI fake (stream: %s)', (stream) => {
  let fake: OpenAIFake;
  beforeAll(async () => {
    fake = await startOpenAIFake([...OPENAI_SCRIPT, ...CUT_SCRIPT]);
  });
  afterAll(() => fake.close());

  it('answers a tool call, refuses two calls at once, and ends with the final answer', async () => {
    const model = aiSdkModel(openAIChat(fake), { stream });
    expect(model.params).toMatchObject({
      adapter: 'ai-sdk',
      provider: 'openai.chat',
      model: 'openai.chat:gpt-test',
      specificationVersion: 'v4',
      stream,
    });
    const { result, deltas } = await runThrough(model);
    expect(result).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'The answer is 7.',
      steps: 4,
      validActions: 2,
    });
    expect(
      result.trajectory.map((s) => [s.decision, s.modelCallId, s.observation ?? s.explanation, s.finishReason]),
    ).toEqual([
      ['action', 'chatcmpl-0', '3', 'tool_calls'],
      ['invalid', 'chatcmpl-1', MULTI, 'tool_calls'],
      ['action', 'chatcmpl-2', '7', 'tool_calls'],
      ['final', 'chatcmpl-3', null, 'stop'],
    ]);
    const bodies = fake.requests.map((r) => r.body as { messages: unknown[]; parallel_tool_calls?: unknown });
    expect(bodies.map((b) => b.parallel_tool_calls)).toEqual([false, false, false, false]);
    expect(bodies[1]!.messages.slice(3)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }],
      },
      { role: 'tool', tool_call_id: 'call_0', content: 'Observation: 3' },
    ]);
    if (stream) expect(deltas.join('')).toBe('Adding 3 and 4.The answer is 7.');
    else expect(deltas).toEqual([]);
    // The fake reports 10 input and 5 output tokens per call (a stream's last chunk, with include_usage).
    expect(result.usage).toMatchObject({ inputTokens: 40, outputTokens: 20 });
  });

  it('never takes a reply cut off at the token limit as the final answer', async () => {
    const { result } = await runThrough(aiSdkModel(openAIChat(fake), { stream }), { runId: 'cut' });
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'The answer is 7.', steps: 2 });
    expect(result.trajectory[0]).toMatchObject({
      decision: 'invalid',
      finishReason: 'length',
      explanation: expect.stringContaining('cut off'),
      modelText: 'The answer is',
    });
  });
});

describe.each([false, true])(
  'a run through aiSdkModel(@ai-sdk/anthropic) on the Anthropic fake (stream: %s)',
  (stream) => {
    let fake: AnthropicFake;
    beforeAll(async () => {
      fake = await startAnthropicFake([...ANTHROPIC_SCRIPT, ...ANTHROPIC_SCRIPT.slice(0, 2)]);
    });
    afterAll(() => fake.close());

    it('sends signed thinking back and sums usage to the fake counts', async () => {
      const model = aiSdkModel(anthropicMessages(fake), { stream });
      const { result, deltas, thoughts, events } = await runThrough(model);
      expect(result).toMatchObject({
        stopReason: 'final_answer',
        finalAnswer: 'The answer is 7.',
        steps: 4,
        validActions: 2,
      });
      expect(result.trajectory.map((s) => [s.decision, s.modelCallId, s.observation ?? s.explanation])).toEqual([
        ['action', 'msg_0', '3'],
        ['invalid', 'msg_1', EMPTY],
        ['action', 'msg_2', '7'],
        ['final', 'msg_3', null],
      ]);
      const bodies = fake.requests.map(
        (r) => r.body as { system?: unknown; messages: unknown[]; tool_choice?: unknown },
      );
      expect(bodies[0]!.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
      expect(bodies[0]!.system).toEqual([
        { type: 'text', text: 'You are a calculator. Use the add tool.' },
        { type: 'text', text: 'brevity\nAnswer briefly.' },
      ]);
      expect(bodies[1]!.messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'First add 1 and 2.', signature: 'sig-0' },
            { type: 'tool_use', id: 'toolu_0', name: 'add', input: { a: 1, b: 2 } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'Observation: 3' }] },
      ]);
      if (stream) expect(deltas.join('')).toBe('Now 3+4.The answer is 7.');
      // The first step's thinking streams as reasoning deltas, all before the step's call finishes.
      expect(thoughts.join('')).toBe(stream ? 'First add 1 and 2.' : '');
      const firstFinish = events.findIndex((e) => e.type === 'model_call_finished');
      const thoughtsAt = events.flatMap((e, i) => (e.type === 'model_delta' && e.kind === 'reasoning' ? [i] : []));
      if (stream) expect(Math.max(...thoughtsAt)).toBeLessThan(firstFinish);
      expect(result.trajectory[0]!.reasoning).toBe('First add 1 and 2.');
      // The fake reports 12 input and 6 output tokens per call, in bodies and in streams.
      expect(result.usage).toMatchObject({ inputTokens: 48, outputTokens: 24 });
      expect(result.trajectory.map((s) => s.usage)).toEqual(
        Array(4).fill({ inputTokens: 12, outputTokens: 6, cachedInputTokens: 0 }),
      );
    });

    it('stops with max_tokens at the step whose running total reaches maxTotalTokens', async () => {
      const { result } = await runThrough(aiSdkModel(anthropicMessages(fake), { stream }), {
        runId: 'budget',
        budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000, maxTotalTokens: 36 },
      });
      expect(result).toMatchObject({
        stopReason: 'max_tokens',
        steps: 2,
        usage: { inputTokens: 24, outputTokens: 12 },
      });
    });
  },
);

describe('the crash law through aiSdkModel(@ai-sdk/openai)', () => {
  let fake: OpenAIFake;
  beforeAll(async () => {
    fake = await startOpenAIFake([...OPENAI_SCRIPT], { deterministic: true });
  });
  afterAll(() => fake.close());

  it('ends every crashed-and-resumed run like the uninterrupted one, sending byte-identical prompts', async () => {
    const sent: string[] = [];
    const recording: typeof globalThis.fetch = (input, init) => {
      sent.push(String(init?.body));
      return fetch(input, init);
    };
    const report = await crashAtEveryWrite({
      setup: (store) => ({
        agent: defineAgent({
          model: aiSdkModel(openAIChat(fake, recording)),
          interpreter: aiSdkToolInterpreter(),
          store,
          events: collectingSink(),
          syntheticObservations: SYNTHETIC,
        }),
        request: request('crash'),
      }),
    });
    expect(report.failures).toEqual([]);
    expect(report.reference).toMatchObject({ stopReason: 'final_answer', steps: 4 });
    expect(report.cases.length).toBeGreaterThan(10);
    const reference = sent.slice(0, 4);
    expect(new Set(reference).size).toBe(4);
    expect(sent.length).toBeGreaterThan(4 * report.cases.length);
    expect([...new Set(sent)].sort()).toEqual([...reference].sort());
  });
});

describe.each([false, true])('aiSdkModel through the seam contract (stream: %s)', (stream) => {
  let fake: OpenAIFake;
  beforeAll(async () => {
    fake = await startOpenAIFake();
  });
  afterAll(() => fake.close());
  const turn = (scenario: ModelScenario) =>
    scenario === 'hang'
      ? ({ kind: 'hang' } as const)
      : ({
          kind: 'reply',
          text: 'Adding.',
          toolCalls: [{ id: 'call_9', name: 'add', arguments: '{"a":3,"b":4}' }],
        } as const);
  describeContract(
    modelCallerContract({
      name: `aiSdkModel(@ai-sdk/openai)${stream ? ' (streaming)' : ''} on the loopback fake`,
      makeModel: (scenario) => {
        fake.turns.length = 0;
        fake.turns.push(turn(scenario));
        return aiSdkModel(openAIChat(fake), { stream });
      },
    }),
  );
});

describeContract(decisionInterpreterContract({ name: 'aiSdkToolInterpreter', makeInterpreter: aiSdkToolInterpreter }));
