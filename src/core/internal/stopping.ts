/**
 * The stop decision (pure, sync): the fixed order of docs/design/step.md#the-stop-decision, and the
 * counters it settles.
 * Everything it reads after a step is in the step record, so a resumed run at a step boundary
 * reaches the same decision as the process that wrote the step.
 * @module
 */
import type { Budget, EndReason, StepRecord, Usage } from '../types.ts';

/** Steps, valid actions and token usage (summed over the steps' model calls) so far. */
export type Counters = { readonly steps: number; readonly validActions: number; readonly usage: Usage };

/** No tokens yet. */
export const NO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0 });

/** `a + b`, count by count (an optional count appears when either side has it). */
export function addUsage(a: Usage, b: Usage | null | undefined): Usage {
  if (!b) return a;
  const opt = (k: 'cachedInputTokens' | 'reasoningTokens') =>
    a[k] === undefined && b[k] === undefined ? {} : { [k]: (a[k] ?? 0) + (b[k] ?? 0) };
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...opt('cachedInputTokens'),
    ...opt('reasoningTokens'),
  };
}

/**
 * Counters after one more step: every step counts; only `executed` outcomes are valid actions;
 * usage adds the step's model call's (nothing when the model reported none).
 */
export function countStep(counters: Counters, step: StepRecord): Counters {
  return {
    steps: counters.steps + 1,
    validActions: counters.validActions + validActionsOf(step),
    usage: addUsage(counters.usage, step.usage),
  };
}

/** A step's valid actions: one for an executed action; in a step with several calls, each executed call. */
function validActionsOf(step: StepRecord): number {
  if (step.calls === undefined) return step.actionStatus === 'executed' ? 1 : 0;
  let n = 0;
  for (const c of step.calls) if (c.status === 'executed') n++;
  return n;
}

/** Counters of a whole trajectory (used once, when a run is resumed). */
export function countSteps(steps: readonly StepRecord[]): Counters {
  return steps.reduce(countStep, { steps: 0, validActions: 0, usage: NO_USAGE });
}

/**
 * The stop reason after a step, or null to go on. Order:
 * cancelled, model_error, interpreter_error, final_answer, env_error, env_completed,
 * tool_completed, max_valid_actions, max_steps, max_tokens.
 */
export function stopAfterStep(input: {
  readonly cancelled: boolean;
  readonly step: StepRecord | null;
  readonly counters: Counters;
  readonly budget: Budget;
}): EndReason | null {
  const { cancelled, step, counters, budget } = input;
  if (cancelled) return 'cancelled';
  if (step?.decision === 'model_error') return 'model_error';
  if (step?.decision === 'interpreter_error') return 'interpreter_error';
  if (step?.decision === 'final') return 'final_answer';
  if (step?.actionStatus === 'env_error') return 'env_error';
  if (step?.envReportedCompletion === true) return 'env_completed';
  if (step?.toolCompletedRun === true) return 'tool_completed';
  if (counters.validActions >= budget.maxValidActions) return 'max_valid_actions';
  if (counters.steps >= budget.maxSteps) return 'max_steps';
  if (
    budget.maxTotalTokens !== undefined &&
    counters.usage.inputTokens + counters.usage.outputTokens >= budget.maxTotalTokens
  )
    return 'max_tokens';
  return null;
}

/** The stop reason before a model call, or null: cancellation first, then the context limit. */
export function stopBeforeModelCall(input: {
  readonly cancelled: boolean;
  readonly contextSize: number;
  readonly budget: Budget;
}): EndReason | null {
  if (input.cancelled) return 'cancelled';
  if (input.contextSize > input.budget.maxContextChars) return 'context_limit';
  return null;
}
