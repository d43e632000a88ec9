/**
 * A failed run says why: `RunResult.error` carries the failure text of the step that
 * ended a run as `model_error`, `interpreter_error` or `env_error`, live and from the stored log.
 */
import { describe, expect, it } from 'vitest';
import { ModelCallError } from '../../../src/adapters/http.ts';
import { InMemoryStore, resume, run, ToolEnvironmentError } from '../../../src/core/index.ts';
import type { DecisionInterpreter, RunRequest, ToolSpec } from '../../../src/core/index.ts';
import { harness } from './fixtures.ts';

const unauthorized = new ModelCallError('invalid api key', {
  provider: 'openai',
  kind: 'http',
  status: 401,
  errorType: 'invalid_api_key',
  requestId: 'req_1',
});

const throwingInterpreter: DecisionInterpreter = {
  params: { interpreter: 'throws' },
  interpret() {
    throw new SyntaxError('the reply is not in my protocol');
  },
};

const disk: ToolSpec = {
  name: 'disk',
  description: 'Write to disk.',
  parameters: { type: 'object' },
  replayPolicy: 'safe',
  handler: async () => {
    throw new ToolEnvironmentError('the disk is read-only');
  },
};

type Case = {
  readonly stopReason: string;
  readonly opts: Omit<Parameters<typeof harness>[0] & object, 'store'>;
  readonly error: string;
};

const CASES: readonly Case[] = [
  {
    stopReason: 'model_error',
    opts: { script: () => Promise.reject(unauthorized) },
    error: 'ModelCallError: openai: invalid api key (status 401, invalid_api_key, request req_1)',
  },
  {
    stopReason: 'interpreter_error',
    opts: { script: ['{"final":"7"}'], interpreter: throwingInterpreter },
    error: 'SyntaxError: the reply is not in my protocol',
  },
  {
    stopReason: 'env_error',
    opts: { script: ['{"tool":"disk","args":{}}'], tools: [disk] },
    error: 'the disk is read-only',
  },
];

describe('RunResult.error', () => {
  it.each(CASES)(
    'a run that ends in $stopReason says why, and so does its stored result',
    async ({ stopReason, opts, error }) => {
      const store = new InMemoryStore();
      const h = harness({ ...opts, store });
      const result = await run(h.agent, h.request);
      expect(result.stopReason).toBe(stopReason);
      expect(result.finalAnswer).toBeNull();
      expect(result.error).toBe(error);
      expect(result.error).toBe(result.trajectory.at(-1)?.observation);
      // An ended run's stored result (resume executes nothing) derives the same text from its log.
      const again = await resume(harness({ ...opts, store }).agent, h.request);
      expect(again.error).toBe(error);
      expect(again).toEqual({ ...result, eventDeliveryFailures: again.eventDeliveryFailures });
    },
  );

  it('is null for a run that ends well, or on a budget', async () => {
    const answered = harness({ script: ['{"final":"7"}'] });
    expect(await run(answered.agent, answered.request)).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: '7',
      error: null,
    });
    const budget: RunRequest['budget'] = { maxSteps: 1, maxValidActions: 5, maxContextChars: 100_000 };
    const spent = harness({ script: ['not json'], request: { budget } });
    expect(await run(spent.agent, spent.request)).toMatchObject({ stopReason: 'max_steps', error: null });
  });

  it('is null while a run waits for a person', async () => {
    const h = harness({
      script: ['{"tool":"ask","args":{}}'],
      tools: [{ name: 'ask', description: 'Ask a person.', parameters: { type: 'object' }, answeredBy: 'human' }],
    });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('awaiting_input');
    expect(result.error).toBeNull();
    expect((await resume(h.agent, h.request)).error).toBeNull();
  });
});
