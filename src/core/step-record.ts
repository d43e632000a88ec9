/**
 * The step record and the facts a run derives from its steps: the record built in canonical key
 * order, the outcome fields, the failure text of a failed run, a decision's summary line.
 * @module
 */
import { NO_USAGE } from './internal/stopping.ts';
import type { ActionOutcome, Decision, EndReason, RunLogView, RunResult, StepRecord } from './types.ts';

/**
 * A step record in the canonical key order (`STEP_FIELDS`), built as one literal: one shape for
 * every step, so encoding never has to reorder it, and defaults for what `fields` leaves out.
 */
export function buildStep(stepIndex: number, startedAt: string, f: Partial<StepRecord> & Pick<StepRecord, 'decision'>): StepRecord {
  return {
    stepIndex,
    callSeq: stepIndex,
    modelCallId: f.modelCallId ?? null,
    modelText: f.modelText ?? null,
    reasoning: f.reasoning ?? null,
    decision: f.decision,
    actionRepr: f.actionRepr ?? null,
    historyText: f.historyText ?? null,
    historyContent: f.historyContent ?? null,
    observation: f.observation ?? null,
    observationIsSynthetic: f.observationIsSynthetic ?? false,
    actionStatus: f.actionStatus ?? null,
    envReportedCompletion: f.envReportedCompletion ?? false,
    observationTruncatedChars: f.observationTruncatedChars ?? 0,
    finalAnswer: f.finalAnswer ?? null,
    explanation: f.explanation ?? null,
    toolCallId: f.toolCallId ?? null,
    toolCompletedRun: f.toolCompletedRun ?? false,
    usage: f.usage ?? null,
    finishReason: f.finishReason ?? null,
    startedAt,
    endedAt: now(),
  };
}

export type FinishStep = (fields: Partial<StepRecord> & Pick<StepRecord, 'decision'>, actionResult: { resultId: string; outcome: ActionOutcome } | null) => Promise<StepRecord>;

/** A step's outcome fields, from an action outcome. */
export function outcomeFields(o: ActionOutcome): Partial<StepRecord> {
  return { observation: o.observation, observationIsSynthetic: o.observationIsSynthetic, actionStatus: o.status, envReportedCompletion: o.envReportedCompletion, observationTruncatedChars: o.observationTruncatedChars };
}

/**
 * `RunResult.error`: the observation of the step that ended a failed run — the model's or the
 * interpreter's error, or the failed action's — read from the trajectory, so an ended run's stored
 * result says the same without a record field.
 */
export function failureOf(stopReason: EndReason, trajectory: readonly StepRecord[]): string | null {
  if (stopReason !== 'model_error' && stopReason !== 'interpreter_error' && stopReason !== 'env_error') return null;
  return trajectory.at(-1)?.observation ?? null;
}

/** A decision in one line, for the `decision` event. */
export function summarize(decision: Decision): string {
  if (decision.kind === 'action') return decision.trajectoryRepr;
  if (decision.kind === 'final') return decision.answer;
  return decision.explanation;
}

/** Now, as the ISO 8601 string records carry. */
export function now(): string {
  return new Date().toISOString();
}

/**
 * The result a log already holds: an ended run's (from its `run_ended` record), or an awaiting
 * run's (its open request). `view` must be one of the two.
 */
export function storedResult(runId: string, view: RunLogView): RunResult {
  const { ended, trajectory } = view;
  if (ended) {
    const { stopReason } = ended;
    return { runId, stopReason, finalAnswer: ended.finalAnswer, steps: ended.steps, validActions: ended.validActions, eventDeliveryFailures: ended.eventDeliveryFailures, trajectory, pending: null, usage: ended.usage ?? NO_USAGE, error: failureOf(stopReason, trajectory) };
  }
  return { runId, stopReason: 'awaiting_input', finalAnswer: null, steps: view.steps, validActions: view.validActions, eventDeliveryFailures: 0, trajectory, pending: view.pending, usage: view.usage, error: null };
}
