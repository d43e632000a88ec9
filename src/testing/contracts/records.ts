/**
 * Small, valid records of every kind, for store suites and fixtures. Each is a fresh object, so
 * a test may change its copy freely.
 * @module
 */
import { RECORD_VERSION } from '../../core/index.ts';
import { STEP_DEFAULTS } from '../../core/internal-entry.ts';
import type {
  ActionIntentRecord,
  ActionOutcome,
  ActionsIntentRecord,
  CallResultRecord,
  ModelCallIntentRecord,
  IntentRecord,
  LogRecord,
  ResultRecord,
  RunEndedRecord,
  RunStartedRecord,
  ResumedRecord,
  RunStore,
  StepRecord,
  StepWriteRecord,
} from '../../core/index.ts';

const v = RECORD_VERSION;

/** The SHA-256 of the canonical JSON of {@link started}'s snapshot: readers check it. */
const SNAPSHOT_HASH = 'ed0d7d5778506b77c2ebdf61e7d4001d26a46cc4c6e3fa6aa04e6b6b9532c59f';

/** A `run_started` record for `runId`. */
export function started(runId: string): RunStartedRecord {
  return {
    kind: 'run_started',
    v,
    runId,
    snapshot: { model: { model: 'm' }, budget: { maxSteps: 3 } },
    snapshotHash: SNAPSHOT_HASH,
    startedAt: '2026-01-01T00:00:00.000Z',
  };
}

/** The model-call intent of step `stepIndex`. */
export function modelIntent(stepIndex: number): ModelCallIntentRecord {
  return {
    kind: 'intent',
    v,
    intent: 'model_call',
    stepIndex,
    callSeq: stepIndex,
    resultId: `s${stepIndex}.model`,
    replayPolicy: 'safe',
  };
}

/** The action intent of step `stepIndex` (a `never` tool call). */
export function actionIntent(stepIndex: number): ActionIntentRecord {
  return {
    kind: 'intent',
    v,
    intent: 'action',
    stepIndex,
    resultId: `s${stepIndex}.action`,
    replayPolicy: 'never',
    decision: {
      kind: 'action',
      action: { kind: 'tool_call', name: 'echo', arguments: { text: 'hi' } },
      trajectoryRepr: 'echo(hi)',
      historyText: 'call echo',
    },
  };
}

/** The model-call result of step `stepIndex`. */
export function modelResult(stepIndex: number, text = 'reply'): ResultRecord {
  return {
    kind: 'result',
    v,
    resultId: `s${stepIndex}.model`,
    stepIndex,
    callSeq: stepIndex,
    reply: {
      callId: `c${stepIndex}`,
      text,
      reasoning: null,
      toolCalls: [],
      content: null,
      finishReason: 'stop',
      usage: { inputTokens: 10, outputTokens: 2 },
      providerMetadata: null,
    },
  };
}

/** A completed action step. */
export function stepRecord(stepIndex: number, observation = 'hi'): StepRecord {
  return {
    ...STEP_DEFAULTS,
    stepIndex,
    callSeq: stepIndex,
    modelCallId: `c${stepIndex}`,
    modelText: 'reply',
    decision: 'action',
    actionRepr: 'echo(hi)',
    historyText: 'call echo',
    observation,
    actionStatus: 'executed',
    usage: { inputTokens: 10, outputTokens: 2 },
    finishReason: 'stop',
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:01.000Z',
  };
}

/** The step write of step `stepIndex`: its action result and its step record. */
export function stepWrite(stepIndex: number, observation = 'hi'): StepWriteRecord {
  return {
    kind: 'step',
    v,
    step: stepRecord(stepIndex, observation),
    actionResult: { resultId: `s${stepIndex}.action`, outcome: executed(observation) },
  };
}

/** A `run_ended` record after `steps` action steps (the step budget spent), agreeing with them as readers check. */
export function ended(steps: number): RunEndedRecord {
  return {
    kind: 'run_ended',
    v,
    stopReason: 'max_steps',
    finalAnswer: null,
    steps,
    validActions: steps,
    eventDeliveryFailures: 0,
    usage: { inputTokens: 10 * steps, outputTokens: 2 * steps },
    endedAt: '2026-01-01T00:00:02.000Z',
  };
}

const CALLS = ['a', 'b', 'c'] as const;

/** The `actions` intent of step `stepIndex`: three `echo` calls, the second a `never` one. */
export function actionsIntent(stepIndex: number): ActionsIntentRecord {
  const call = (x: string) => ({
    action: { kind: 'tool_call' as const, id: `call-${x}`, name: 'echo', arguments: { text: x } },
    trajectoryRepr: `echo(${x})`,
  });
  return {
    kind: 'intent',
    v,
    intent: 'actions',
    stepIndex,
    resultId: `s${stepIndex}.actions`,
    decision: {
      kind: 'actions',
      calls: CALLS.map(call),
      historyText: CALLS.map((x) => `echo(${x})`).join('\n'),
    },
    calls: CALLS.map((_, j) => ({
      resultId: `s${stepIndex}.a${j}`,
      replayPolicy: j === 1 ? 'never' : 'safe',
      gate: null,
      skip: null,
    })),
  };
}

/** The outcome of call `j` of step `stepIndex`'s {@link actionsIntent}, as it lands. */
export function callResult(stepIndex: number, j: number, observation = `echoed ${CALLS[j] ?? j}`): CallResultRecord {
  return {
    kind: 'call_result',
    v,
    stepIndex,
    resultId: `s${stepIndex}.a${j}`,
    outcome: executed(observation),
    completedRun: false,
  };
}

/** The mark of a driver that took the run over at step `stepIndex`, going on as `resolution` says. */
export function resumedMark(stepIndex: number, resolution: ResumedRecord['resolution'] = null): ResumedRecord {
  return { kind: 'resumed', v, stepIndex, resolution, at: '2026-01-01T00:00:01.250Z' };
}

/** An `executed` outcome with `observation`, every flag at its default. */
function executed(observation: string): ActionOutcome {
  return {
    status: 'executed',
    observation,
    observationIsSynthetic: false,
    envReportedCompletion: false,
    observationTruncatedChars: 0,
  };
}

/** The step write of step `stepIndex`'s {@link actionsIntent}: no action result, the step listing each call. */
export function callsStepWrite(stepIndex: number): StepWriteRecord {
  const intent = actionsIntent(stepIndex);
  const calls = intent.decision.calls.map((c, j) => ({
    resultId: `s${stepIndex}.a${j}`,
    toolCallId: c.action.kind === 'tool_call' ? (c.action.id ?? null) : null,
    actionRepr: c.trajectoryRepr,
    ...callResult(stepIndex, j).outcome,
    toolCompletedRun: false,
  }));
  const step: StepRecord = {
    ...stepRecord(stepIndex),
    actionRepr: intent.decision.historyText,
    historyText: intent.decision.historyText,
    observation: null,
    calls,
  };
  return { kind: 'step', v, step, actionResult: null };
}

/** Write a full one-step run through every store method, in protocol order; returns what was written. */
export async function writeFullRun(store: RunStore, runId: string): Promise<LogRecord[]> {
  const recs: LogRecord[] = [started(runId), modelIntent(0), modelResult(0), actionIntent(0), stepWrite(0), ended(1)];
  await store.runStarted(runId, recs[0] as RunStartedRecord);
  await store.intent(runId, recs[1] as IntentRecord);
  await store.result(runId, 's0.model', recs[2] as ResultRecord);
  await store.intent(runId, recs[3] as IntentRecord);
  await store.step(runId, recs[4] as StepWriteRecord);
  await store.runEnded(runId, recs[5] as RunEndedRecord);
  return recs;
}
