/**
 * `jsonActionInterpreter` reads any reply text a model can produce: JSON text whose `args` a run
 * cannot store (a number past the double range reads as Infinity, nesting past the limit) is an
 * invalid reply the model can correct, not an interpreter error that ends the run.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, jsonActionInterpreter, readRunLog, run, ToolRegistry } from '../../../src/core/index.ts';
import { harness } from './fixtures.ts';

const ctx = { tools: ToolRegistry.of([]) };

const nestedArgs = (depth: number): string =>
  `{"tool":"note","args":{"text":"a","d":${'['.repeat(depth)}${']'.repeat(depth)}}}`;

describe('jsonActionInterpreter with args a run cannot store', () => {
  it.each([
    ['a number past the double range (1e400 reads as Infinity)', '{"tool":"note","args":{"text":"a","n":1e400}}'],
    ['a negative one (-1e400)', '{"tool":"note","args":{"text":"a","n":[-1e400]}}'],
    ['args nested past the limit', nestedArgs(98)],
  ])('reads %s as an invalid reply, and the run goes on to its final answer', async (_label, text) => {
    const decision = jsonActionInterpreter().interpret({ callId: null, text, reasoning: null }, ctx);
    expect(decision.kind).toBe('invalid');
    expect(decision.kind === 'invalid' && decision.explanation).toMatch(/^Your reply's args\.(n|d)/);
    const store = new InMemoryStore();
    const h = harness({ script: [text, '{"final":"done"}'], store });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(result.trajectory.map((s) => s.decision)).toEqual(['invalid', 'final']);
    expect(readRunLog(await store.readLog('run-1')).trajectory).toEqual(result.trajectory);
  });

  it('still reads args nested as deep as a decision may hold them as an action', () => {
    const decision = jsonActionInterpreter().interpret({ callId: null, text: nestedArgs(97), reasoning: null }, ctx);
    expect(decision.kind).toBe('action');
  });
});
