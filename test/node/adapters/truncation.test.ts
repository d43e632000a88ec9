/**
 * Truncation through each adapter over loopback HTTP: when the fake stops a reply at
 * the token limit (`finish_reason: "length"`, `stop_reason: "max_tokens"`), the run never ends
 * with the cut text as its answer nor runs the cut call; the model reads why and tries again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { DecisionInterpreter, ModelCaller } from '../../../src/core/index.ts';
import { collectingSink } from '../../../src/testing/index.ts';
import { request, SYNTHETIC } from './agent-fixtures.ts';
import { startAnthropicFake, startOpenAIFake } from './serve.ts';

const CUT = 'Your reply was cut off at the output token limit before it ended.';

type Fake = { readonly baseURL: string; readonly requests: { readonly body: unknown }[]; close(): Promise<void> };
type Subject = readonly [string, () => Promise<Fake>, (baseURL: string) => ModelCaller, () => DecisionInterpreter];

const SUBJECTS: Subject[] = [false, true].flatMap((stream): Subject[] => [
  [
    `openAIModel (stream: ${stream})`,
    () =>
      startOpenAIFake([
        { kind: 'reply', id: 'c0', text: 'The answer is', finishReason: 'length' },
        {
          kind: 'reply',
          id: 'c1',
          text: null,
          toolCalls: [{ id: 'call_1', name: 'add', arguments: '{"a":1,"b":2}' }],
          finishReason: 'length',
        },
        { kind: 'reply', id: 'c2', text: 'The answer is 7.' },
      ]),
    (baseURL) => openAIModel({ model: 'gpt-test', baseURL, stream, body: { store: true, max_completion_tokens: 4 } }),
    openAIToolInterpreter,
  ],
  [
    `anthropicModel (stream: ${stream})`,
    () =>
      startAnthropicFake([
        { kind: 'reply', id: 'm0', content: [{ type: 'text', text: 'The answer is' }], stopReason: 'max_tokens' },
        {
          kind: 'reply',
          id: 'm1',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'add', input: { a: 1, b: 2 } }],
          stopReason: 'max_tokens',
        },
        { kind: 'reply', id: 'm2', content: [{ type: 'text', text: 'The answer is 7.' }] },
      ]),
    (baseURL) => anthropicModel({ model: 'claude-test', baseURL, maxTokens: 4, stream }),
    anthropicToolInterpreter,
  ],
]);

let fake: Fake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe.each(SUBJECTS)('a reply cut off at the token limit through %s', (_name, start, makeModel, makeInterpreter) => {
  it('is never the final answer nor a tool call that runs; the model is told and answers in full next', async () => {
    fake = await start();
    let ran = 0;
    const base = request('t1');
    const executor = {
      ...base.executor,
      execute: (...args: Parameters<typeof base.executor.execute>) => (ran++, base.executor.execute(...args)),
    };
    const agent = defineAgent({
      model: makeModel(fake.baseURL),
      interpreter: makeInterpreter(),
      store: new InMemoryStore(),
      events: collectingSink(),
      syntheticObservations: SYNTHETIC,
    });
    const result = await run(agent, { ...base, executor });
    expect(result).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'The answer is 7.',
      steps: 3,
      validActions: 0,
    });
    expect(ran).toBe(0);
    expect(result.trajectory.map((s) => [s.decision, s.finishReason])).toEqual([
      ['invalid', 'length'],
      ['invalid', 'length'],
      ['final', 'stop'],
    ]);
    expect(result.trajectory[0]!.explanation).toContain(`${CUT} It was not taken as your final answer.`);
    expect(result.trajectory[1]!.explanation).toContain(`${CUT} No tool ran.`);
    // The model reads each explanation on its next call (as text, or as the cut call's result).
    expect(JSON.stringify(fake.requests[1]!.body)).toContain(CUT);
    expect(JSON.stringify(fake.requests[2]!.body).split(CUT)).toHaveLength(3);
  });
});
