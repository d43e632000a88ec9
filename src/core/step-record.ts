/**
 * The step record and the facts a run derives from its steps: the record built in canonical key
 * order, the outcome fields, the failure text of a failed run, a decision's summary line.
 * @module
 */
import { NO_USAGE } from './internal/stopping.ts';
import type {
  ActionOutcome,
  Decision,
  EndReason,
  ResultRecord,
  RunEvent,
  RunLogView,
  RunResult,
  StepRecord,
} from './types.ts';

/** A step record while its step runs: every field present, in the canonical key order (`STEP_FIELDS`). */
export type StepDraft = { -readonly [K in keyof StepRecord]: StepRecord[K] };

/**
 * A new step record with the defaults of every field (`STEP_DEFAULTS`, in its canonical key order:
 * one shape for every step, so encoding never reorders it). The step fills it in as it goes;
 * `endedAt` is set when it finishes. Written out as a literal, not spread from `STEP_DEFAULTS`: a
 * spread object is built slower and stays slower to fill and freeze (~6 µs a step in
 * `bench/compare-cores.ts`, a tenth of a step); test/node/core/step-record.test.ts holds the two
 * equal, key by key and in order.
 */
export function draftStep(stepIndex: number, startedAt: string): StepDraft {
  return {
    stepIndex,
    callSeq: stepIndex,
    modelCallId: null,
    modelText: null,
    reasoning: null,
    decision: 'model_error',
    actionRepr: null,
    historyText: null,
    historyContent: null,
    observation: null,
    observationIsSynthetic: false,
    actionStatus: null,
    envReportedCompletion: false,
    observationTruncatedChars: 0,
    finalAnswer: null,
    explanation: null,
    toolCallId: null,
    toolCompletedRun: false,
    usage: null,
    finishReason: null,
    startedAt,
    endedAt: startedAt,
  };
}

/** Copy an action outcome's fields into a step. */
export function setOutcome(step: StepDraft, o: ActionOutcome): void {
  step.observation = o.observation;
  step.observationIsSynthetic = o.observationIsSynthetic;
  step.actionStatus = o.status;
  step.envReportedCompletion = o.envReportedCompletion;
  step.observationTruncatedChars = o.observationTruncatedChars;
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

/**
 * The `decision` event of a step's fresh decision: its kind (`action` for several calls too), its
 * line, and for several calls each call's result id and action.
 */
export function decisionEvent(runId: string, stepIndex: number, decision: Decision): RunEvent {
  const summary = summarize(decision);
  if (decision.kind !== 'actions') return { type: 'decision', runId, stepIndex, decision: decision.kind, summary };
  const calls = decision.calls.map((c, j) => ({ resultId: `s${stepIndex}.a${j}`, action: c.action }));
  return { type: 'decision', runId, stepIndex, decision: 'action', summary, calls };
}

/** A decision in one line, for the `decision` event. */
export function summarize(decision: Decision): string {
  if (decision.kind === 'action') return decision.trajectoryRepr;
  if (decision.kind === 'final') return decision.answer;
  if (decision.kind === 'actions') return decision.calls.map((c) => c.trajectoryRepr).join('\n');
  return decision.explanation;
}

let lastMs = Number.NaN;
let lastIso = '';

/** Now, as the ISO 8601 string records carry (formatted once per millisecond: steps are faster than that). */
export function now(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/**
 * The result a log already holds: an ended run's (from its `run_ended` record), or an awaiting
 * run's (its open request). `view` must be one of the two.
 */
export function storedResult(runId: string, view: RunLogView): RunResult {
  const { ended, trajectory } = view;
  if (ended) {
    const { stopReason } = ended;
    return {
      runId,
      stopReason,
      finalAnswer: ended.finalAnswer,
      steps: ended.steps,
      validActions: ended.validActions,
      eventDeliveryFailures: ended.eventDeliveryFailures,
      trajectory,
      pending: null,
      usage: ended.usage ?? NO_USAGE,
      error: failureOf(stopReason, trajectory),
      ...(ended.stopRequest ? { stopRequest: ended.stopRequest } : {}),
    };
  }
  return {
    runId,
    stopReason: 'awaiting_input',
    finalAnswer: null,
    steps: view.steps,
    validActions: view.validActions,
    eventDeliveryFailures: 0,
    trajectory,
    pending: view.pending,
    usage: view.usage,
    error: null,
  };
}

/** Copy the model's reply into its step. */
export function setReply(step: StepDraft, r: ResultRecord['reply']): void {
  step.modelCallId = r.callId;
  step.modelText = r.text;
  step.reasoning = r.reasoning;
  step.usage = r.usage ?? null;
  step.finishReason = r.finishReason ?? null;
}
