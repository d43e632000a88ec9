/**
 * Against the real providers: runs only when a key is set (never in CI without one).
 * OPENAI_API_KEY (+ optional OPENAI_BASE_URL, OPENAI_MODEL); ANTHROPIC_API_KEY (+ optional ANTHROPIC_MODEL).
 */
import { describe, expect, it } from 'vitest';
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { DecisionInterpreter, ModelCaller } from '../../../src/core/index.ts';
import { collectingSink } from '../../../src/testing/index.ts';
import { machineHas } from '../../support/machine.ts';
import { request, SYNTHETIC } from './agent-fixtures.ts';

const env = process.env;

async function solve(model: ModelCaller, interpreter: DecisionInterpreter) {
  const agent = defineAgent({
    model,
    interpreter,
    store: new InMemoryStore(),
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
  });
  return run(agent, { ...request('live'), modelBinding: {} });
}

const openAIKey = machineHas(
  Boolean(env['OPENAI_API_KEY']),
  'openAIModel against the real API runs with OPENAI_API_KEY set',
);
const anthropicKey = machineHas(
  Boolean(env['ANTHROPIC_API_KEY']),
  'anthropicModel against the real API runs with ANTHROPIC_API_KEY set',
);

describe.runIf(openAIKey)('openAIModel against the real API', () => {
  it.each([false, true])(
    'solves (1+2)+4 with the add tool (stream: %s)',
    async (stream) => {
      const model = openAIModel({
        model: env['OPENAI_MODEL'] ?? 'gpt-4.1-mini',
        apiKey: env['OPENAI_API_KEY'] ?? '',
        baseURL: env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1',
        stream,
      });
      const result = await solve(model, openAIToolInterpreter());
      expect(result.stopReason).toBe('final_answer');
      expect(result.validActions).toBeGreaterThanOrEqual(1);
      expect(result.finalAnswer).toContain('7');
    },
    120_000,
  );
});

describe.runIf(anthropicKey)('anthropicModel against the real API', () => {
  it.each([false, true])(
    'solves (1+2)+4 with the add tool (stream: %s)',
    async (stream) => {
      const model = anthropicModel({
        model: env['ANTHROPIC_MODEL'] ?? 'claude-haiku-4-5',
        apiKey: env['ANTHROPIC_API_KEY'] ?? '',
        maxTokens: 1024,
        stream,
      });
      const result = await solve(model, anthropicToolInterpreter());
      expect(result.stopReason).toBe('final_answer');
      expect(result.validActions).toBeGreaterThanOrEqual(1);
      expect(result.finalAnswer).toContain('7');
    },
    120_000,
  );
});
