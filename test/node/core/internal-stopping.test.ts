/**
 * The pure stop decision, table-driven and synchronous: the order of the conditions, counting,
 * the check before a model call.
 */
import { describe, expect, it } from 'vitest';
import { STOP_REASONS } from '../../../src/core/index.ts';
import type { Budget, StepRecord, StopReason } from '../../../src/core/index.ts';
import { countStep, countSteps, stopAfterStep, stopBeforeModelCall } from '../../../src/core/internal/stopping.ts';
import type { Counters } from '../../../src/core/internal/stopping.ts';
import { step } from './internal-step.ts';

const BUDGET: Budget = { maxSteps: 10, maxValidActions: 5, maxContextChars: 1000 };

type StopInput = { cancelled: boolean; step: StepRecord; counters: Counters; budget: Budget };

/** Each condition of the stop decision (in order) as a patch that makes it true, and whether it sets `decision`. */
const CONDITIONS: readonly { reason: StopReason; decides: boolean; apply: (i: StopInput) => StopInput }[] = [
  { reason: 'cancelled', decides: false, apply: (i) => ({ ...i, cancelled: true }) },
  { reason: 'model_error', decides: true, apply: (i) => ({ ...i, step: { ...i.step, decision: 'model_error' } }) },
  {
    reason: 'interpreter_error',
    decides: true,
    apply: (i) => ({ ...i, step: { ...i.step, decision: 'interpreter_error' } }),
  },
  {
    reason: 'final_answer',
    decides: true,
    apply: (i) => ({ ...i, step: { ...i.step, decision: 'final', finalAnswer: '42' } }),
  },
  { reason: 'env_error', decides: false, apply: (i) => ({ ...i, step: { ...i.step, actionStatus: 'env_error' } }) },
  {
    reason: 'env_completed',
    decides: false,
    apply: (i) => ({ ...i, step: { ...i.step, envReportedCompletion: true } }),
  },
  { reason: 'tool_completed', decides: false, apply: (i) => ({ ...i, step: { ...i.step, toolCompletedRun: true } }) },
  {
    reason: 'max_valid_actions',
    decides: false,
    apply: (i) => ({ ...i, counters: { ...i.counters, validActions: i.budget.maxValidActions } }),
  },
  {
    reason: 'max_steps',
    decides: false,
    apply: (i) => ({ ...i, counters: { ...i.counters, steps: i.budget.maxSteps } }),
  },
];

const calm = (): StopInput => ({
  cancelled: false,
  step: step(),
  counters: { steps: 3, validActions: 2, usage: { inputTokens: 0, outputTokens: 0 } },
  budget: BUDGET,
});

/** Apply conditions last-to-first, so the earliest one's `decision` is the one that stays. */
const withAll = (conds: readonly (typeof CONDITIONS)[number][]): StopInput =>
  [...conds].reverse().reduce((acc, c) => c.apply(acc), calm());

describe('internal/stopping: stopAfterStep order', () => {
  it('checks the conditions in the order of STOP_REASONS', () => {
    expect(CONDITIONS.map((c) => c.reason)).toEqual(STOP_REASONS.slice(0, CONDITIONS.length));
  });

  it('goes on when no condition holds', () => {
    expect(stopAfterStep(calm())).toBeNull();
  });

  it.each(CONDITIONS.map((c) => ({ reason: c.reason, c })))(
    'stops with $reason when only it holds',
    ({ reason, c }) => {
      expect(stopAfterStep(c.apply(calm()))).toBe(reason);
    },
  );

  // Two decision kinds cannot hold on one step (model_error vs interpreter_error vs final).
  const pairs = CONDITIONS.slice(0, -1)
    .map((earlier, i) => ({ earlier, later: CONDITIONS[i + 1]! }))
    .filter(({ earlier, later }) => !(earlier.decides && later.decides))
    .map((p) => ({ ...p, name: `${p.earlier.reason} before ${p.later.reason}` }));

  it.each(pairs)('$name when both hold', ({ earlier, later }) => {
    expect(stopAfterStep(withAll([earlier, later]))).toBe(earlier.reason);
  });

  it.each(CONDITIONS.map((c, i) => ({ reason: c.reason, from: CONDITIONS.slice(i) })))(
    '$reason wins over every later condition holding at once',
    ({ reason, from }) => {
      expect(stopAfterStep(withAll(from))).toBe(reason);
    },
  );

  it.each([
    {
      label: 'valid actions one below the budget',
      counters: { steps: 4, validActions: 4, usage: { inputTokens: 0, outputTokens: 0 } },
      budget: { ...BUDGET, maxValidActions: 5 },
      expected: null,
    },
    {
      label: 'valid actions equal to the budget',
      counters: { steps: 5, validActions: 5, usage: { inputTokens: 0, outputTokens: 0 } },
      budget: { ...BUDGET, maxValidActions: 5 },
      expected: 'max_valid_actions',
    },
    {
      label: 'steps one below the budget',
      counters: { steps: 9, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } },
      budget: { ...BUDGET, maxSteps: 10 },
      expected: null,
    },
    {
      label: 'steps equal to the budget',
      counters: { steps: 10, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } },
      budget: { ...BUDGET, maxSteps: 10 },
      expected: 'max_steps',
    },
    {
      label: 'tokens one below maxTotalTokens',
      counters: { steps: 1, validActions: 1, usage: { inputTokens: 99, outputTokens: 0 } },
      budget: { ...BUDGET, maxTotalTokens: 100 },
      expected: null,
    },
    {
      label: 'tokens equal to maxTotalTokens',
      counters: { steps: 1, validActions: 1, usage: { inputTokens: 100, outputTokens: 0 } },
      budget: { ...BUDGET, maxTotalTokens: 100 },
      expected: 'max_tokens',
    },
    {
      label: 'max_steps before max_tokens when both are spent',
      counters: { steps: 10, validActions: 0, usage: { inputTokens: 500, outputTokens: 0 } },
      budget: { ...BUDGET, maxSteps: 10, maxTotalTokens: 100 },
      expected: 'max_steps',
    },
    {
      label: 'no token limit without maxTotalTokens',
      counters: { steps: 1, validActions: 0, usage: { inputTokens: 10 ** 9, outputTokens: 0 } },
      budget: BUDGET,
      expected: null,
    },
    {
      label: 'both budgets of 1 spent by one step',
      counters: { steps: 1, validActions: 1, usage: { inputTokens: 0, outputTokens: 0 } },
      budget: { ...BUDGET, maxSteps: 1, maxValidActions: 1 },
      expected: 'max_valid_actions',
    },
  ] as const)('$label → $expected', ({ counters, budget, expected }) => {
    expect(stopAfterStep({ cancelled: false, step: step(), counters, budget })).toBe(expected);
  });

  it('decides from counters alone when there is no step (a resumed run at step 0)', () => {
    expect(
      stopAfterStep({
        cancelled: false,
        step: null,
        counters: { steps: 0, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } },
        budget: BUDGET,
      }),
    ).toBeNull();
    expect(
      stopAfterStep({
        cancelled: true,
        step: null,
        counters: { steps: 0, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } },
        budget: BUDGET,
      }),
    ).toBe('cancelled');
  });
});

describe('internal/stopping: counting', () => {
  it.each([
    { label: 'an executed action', patch: {}, validActions: 1 },
    {
      label: 'a not_executed action',
      patch: { actionStatus: 'not_executed', observationIsSynthetic: true },
      validActions: 0,
    },
    { label: 'an env_error action', patch: { actionStatus: 'env_error' }, validActions: 0 },
    {
      label: 'an invalid decision',
      patch: { decision: 'invalid', actionStatus: null, explanation: 'bad' },
      validActions: 0,
    },
    { label: 'a final answer', patch: { decision: 'final', actionStatus: null, finalAnswer: 'x' }, validActions: 0 },
    { label: 'a model error', patch: { decision: 'model_error', actionStatus: null }, validActions: 0 },
  ] as const)('$label counts as a step and adds $validActions valid actions', ({ patch, validActions }) => {
    expect(countStep({ steps: 2, validActions: 1, usage: { inputTokens: 0, outputTokens: 0 } }, step(patch))).toEqual({
      steps: 3,
      validActions: 1 + validActions,
      usage: { inputTokens: 0, outputTokens: 0 },
    });
  });

  it('counts a whole trajectory the same as step by step', () => {
    const steps = [
      step(),
      step({ decision: 'invalid', actionStatus: null }),
      step({ actionStatus: 'not_executed' }),
      step(),
      step({ actionStatus: 'env_error' }),
    ];
    expect(countSteps(steps)).toEqual({ steps: 5, validActions: 2, usage: { inputTokens: 0, outputTokens: 0 } });
    expect(countSteps([])).toEqual({ steps: 0, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } });
  });

  it('invalid and not_executed steps reach max_steps but never max_valid_actions', () => {
    const budget = { ...BUDGET, maxSteps: 4, maxValidActions: 1 };
    let counters: Counters = { steps: 0, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } };
    const reasons: (StopReason | null)[] = [];
    for (const s of [
      step({ decision: 'invalid', actionStatus: null }),
      step({ actionStatus: 'not_executed' }),
      step({ decision: 'invalid', actionStatus: null }),
      step({ actionStatus: 'not_executed' }),
    ]) {
      counters = countStep(counters, s);
      reasons.push(stopAfterStep({ cancelled: false, step: s, counters, budget }));
    }
    expect(reasons).toEqual([null, null, null, 'max_steps']);
    expect(counters).toEqual({ steps: 4, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } });
  });
});

describe('internal/stopping: stopBeforeModelCall', () => {
  it.each([
    { label: 'size well below the limit', cancelled: false, contextSize: 10, expected: null },
    { label: 'size equal to the limit', cancelled: false, contextSize: 1000, expected: null },
    { label: 'size one over the limit', cancelled: false, contextSize: 1001, expected: 'context_limit' },
    { label: 'cancelled below the limit', cancelled: true, contextSize: 10, expected: 'cancelled' },
    { label: 'cancelled and over the limit', cancelled: true, contextSize: 5000, expected: 'cancelled' },
  ] as const)('$label → $expected', ({ cancelled, contextSize, expected }) => {
    expect(stopBeforeModelCall({ cancelled, contextSize, budget: BUDGET })).toBe(expected);
  });
});
