/** Shared pieces of the runs whose model replies with three tool calls at once (Web APIs only). */
import { expect } from 'vitest';
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { DecisionInterpreter, ModelCaller, RunResult } from '../../../src/core/index.ts';
import { collectingSink } from '../../../src/testing/index.ts';
import { request, SYNTHETIC } from './agent-fixtures.ts';

/** What the model is asked, as the fixture request assembles it. */
export const SYSTEM = ['You are a calculator. Use the add tool.', 'brevity\nAnswer briefly.'];
export const GOAL = 'What is (1+2)+4?';
export const FINAL = 'The sums are 3, 7 and 11.';
export const ADD = request('schema').tools.modelSchemas()[0]!;
export const THREE_AT_ONCE =
  'You called 3 tools at once ("add", "add", "add"), but exactly one tool call per turn is allowed. ' +
  'None of them ran. Call the one you need first; you will see its result before your next call.';

/** The three calls of one reply: add(1,2), add(3,4), add(5,6), whose observations are 3, 7 and 11. */
export const CALLS = [
  { id: 'call_a', input: { a: 1, b: 2 }, sum: '3' },
  { id: 'call_b', input: { a: 3, b: 4 }, sum: '7' },
  { id: 'call_c', input: { a: 5, b: 6 }, sum: '11' },
] as const;

export async function runWith(
  model: ModelCaller,
  interpreter: DecisionInterpreter,
  parallel?: number,
): Promise<RunResult> {
  const agent = defineAgent({
    model,
    interpreter,
    store: new InMemoryStore(),
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
  });
  return run(agent, { ...request('parallel'), ...(parallel === undefined ? {} : { parallelToolCalls: parallel }) });
}

/** The run ran the three calls in its first step, each with its own outcome, then answered. */
export function expectThreeRan(result: RunResult): void {
  expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: FINAL, steps: 2, validActions: 3 });
  expect(result.trajectory[0]!.calls!.map((c) => [c.resultId, c.toolCallId, c.status, c.observation])).toEqual(
    CALLS.map((c, j) => [`s0.a${j}`, c.id, 'executed', c.sum]),
  );
}

/** The run took the three calls as one invalid step, ran none, then answered. */
export function expectThreeRefused(result: RunResult): void {
  expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: FINAL, steps: 2, validActions: 0 });
  expect(result.trajectory[0]).toMatchObject({ decision: 'invalid', explanation: THREE_AT_ONCE });
  expect(result.trajectory[0]).not.toHaveProperty('calls');
}
