/**
 * Token usage through the real adapters over loopback HTTP: a multi-step run's `usage` equals the
 * fake provider's own counts, each step records its call's usage and finish reason, and
 * `budget.maxTotalTokens` stops the run with `max_tokens` at the step that crosses it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { DecisionInterpreter, ModelCaller, RunRequest } from '../../../src/core/index.ts';
import { collectingSink } from '../../../src/testing/index.ts';
import {
  ANTHROPIC_USAGE_SCRIPT,
  anthropicTotals,
  OPENAI_USAGE_SCRIPT,
  openAITotals,
  request,
  SYNTHETIC,
} from './agent-fixtures.ts';
import { startAnthropicFake, startOpenAIFake } from './serve.ts';

type Fake = {
  readonly baseURL: string;
  readonly requests: unknown[];
  readonly reportedUsage: Record<string, unknown>[];
  close(): Promise<void>;
};
type Subject = {
  readonly name: string;
  readonly start: () => Promise<Fake>;
  readonly model: (baseURL: string) => ModelCaller;
  readonly interpreter: () => DecisionInterpreter;
  readonly totals: (reported: readonly Record<string, unknown>[]) => {
    readonly inputTokens: number;
    readonly outputTokens: number;
  };
  readonly finishReasons: readonly string[];
  /** A budget the third step's tokens cross, and the first two do not. */
  readonly budgetCrossedAtStep3: number;
};

const SUBJECTS: Subject[] = [false, true].flatMap((stream) => [
  {
    name: `openAIModel (stream: ${stream})`,
    start: () => startOpenAIFake([...OPENAI_USAGE_SCRIPT]),
    model: (baseURL: string) => openAIModel({ model: 'gpt-test', baseURL, stream, body: { store: true } }),
    interpreter: openAIToolInterpreter,
    totals: openAITotals,
    finishReasons: ['tool_calls', 'tool_calls', 'tool_calls', 'stop'],
    // Steps use 112, 175 and 220 tokens: 287 after two, 507 after three.
    budgetCrossedAtStep3: 400,
  },
  {
    name: `anthropicModel (stream: ${stream})`,
    start: () => startAnthropicFake([...ANTHROPIC_USAGE_SCRIPT]),
    model: (baseURL: string) => anthropicModel({ model: 'claude-test', baseURL, maxTokens: 512, stream }),
    interpreter: anthropicToolInterpreter,
    totals: anthropicTotals,
    finishReasons: ['tool_calls', 'stop', 'tool_calls', 'stop'],
    // Steps use 1154, 1056 and 1094 tokens (cache reads and writes count as input): 2210 after two, 3304 after three.
    budgetCrossedAtStep3: 3000,
  },
]);

let fake: Fake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function runWith(subject: Subject, req: RunRequest) {
  fake = await subject.start();
  const agent = defineAgent({
    model: subject.model(fake.baseURL),
    interpreter: subject.interpreter(),
    store: new InMemoryStore(),
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
  });
  return { result: await run(agent, req), fake };
}

describe.each(SUBJECTS)('token usage of a run through $name', (subject) => {
  it("totals the usage over four steps to exactly the fake provider's own counts", async () => {
    const { result, fake } = await runWith(subject, request('u1'));
    expect(result).toMatchObject({ stopReason: 'final_answer', steps: 4 });
    expect(fake.reportedUsage).toHaveLength(4);
    expect(result.usage).toEqual(subject.totals(fake.reportedUsage));
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });

  it("records each step's own usage and finish reason", async () => {
    const { result, fake } = await runWith(subject, request('u2'));
    expect(result.trajectory.map((s) => s.finishReason)).toEqual(subject.finishReasons);
    const own = fake.reportedUsage.map((u) => subject.totals([u])).map((t) => [t.inputTokens, t.outputTokens]);
    expect(result.trajectory.map((s) => [s.usage?.inputTokens, s.usage?.outputTokens])).toEqual(own);
  });

  it('stops with max_tokens after the step whose tokens reach budget.maxTotalTokens, calling the model no more', async () => {
    const base = request('u3');
    const { result, fake } = await runWith(subject, {
      ...base,
      budget: { ...base.budget, maxTotalTokens: subject.budgetCrossedAtStep3 },
    });
    expect(result).toMatchObject({ stopReason: 'max_tokens', steps: 3, finalAnswer: null });
    expect(fake.requests).toHaveLength(3);
    expect(result.usage).toEqual(subject.totals(fake.reportedUsage));
    expect(result.usage.inputTokens + result.usage.outputTokens).toBeGreaterThanOrEqual(subject.budgetCrossedAtStep3);
  });
});
