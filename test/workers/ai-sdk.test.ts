/**
 * aiSdkModel inside workerd: the real `@ai-sdk/openai` and `@ai-sdk/anthropic` providers bundled
 * into the Worker, reaching the provider fakes (hono apps in the same isolate) through their
 * `fetch` option — workerd tests cannot open a loopback socket; the Node project covers real HTTP.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { describe, expect, it } from 'vitest';
import { aiSdkModel } from '../../src/adapters/ai-sdk.ts';
import { ANTHROPIC_SCRIPT, OPENAI_SCRIPT } from '../node/adapters/agent-fixtures.ts';
import { CUT_SCRIPT, runThrough, via } from '../node/adapters/ai-sdk-fixtures.ts';
import { createAnthropicFake } from '../node/adapters/anthropic-server.ts';
import { createOpenAIFake } from '../node/adapters/openai-server.ts';

describe.each([false, true])('aiSdkModel inside workerd (stream: %s)', (stream) => {
  it('runs an agent through @ai-sdk/openai with tool calls to its final answer, usage summed', async () => {
    const fake = createOpenAIFake([...OPENAI_SCRIPT]);
    const model = aiSdkModel(
      createOpenAI({ baseURL: 'http://fake.openai/v1', apiKey: 'test', fetch: via(fake.app) }).chat('gpt-test'),
      { stream },
    );
    const { result, deltas } = await runThrough(model);
    expect(result).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'The answer is 7.',
      steps: 4,
      validActions: 2,
      usage: { inputTokens: 40, outputTokens: 20 },
    });
    if (stream) expect(deltas.join('')).toBe('Adding 3 and 4.The answer is 7.');
  });

  it('runs an agent through @ai-sdk/anthropic, sending signed thinking back', async () => {
    const fake = createAnthropicFake([...ANTHROPIC_SCRIPT]);
    const model = aiSdkModel(
      createAnthropic({ baseURL: 'http://fake.anthropic/v1', apiKey: 'test', fetch: via(fake.app) })('claude-test'),
      { stream },
    );
    const { result } = await runThrough(model);
    expect(result).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'The answer is 7.',
      steps: 4,
      usage: { inputTokens: 48, outputTokens: 24 },
    });
    const second = fake.requests[1]!.body as { messages: { content: unknown[] }[] };
    expect(second.messages[1]!.content[0]).toEqual({
      type: 'thinking',
      thinking: 'First add 1 and 2.',
      signature: 'sig-0',
    });
  });

  it('never takes a cut-off reply as the final answer', async () => {
    const fake = createOpenAIFake([...CUT_SCRIPT]);
    const model = aiSdkModel(
      createOpenAI({ baseURL: 'http://fake.openai/v1', apiKey: 'test', fetch: via(fake.app) }).chat('gpt-test'),
      { stream },
    );
    const { result } = await runThrough(model);
    expect(result.trajectory.map((s) => [s.decision, s.finishReason])).toEqual([
      ['invalid', 'length'],
      ['final', 'stop'],
    ]);
  });
});
