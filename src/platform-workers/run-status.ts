/**
 * What the HTTP surface reports about a run: thin mappings of the one reading of its log
 * (`readRunLog`, docs/design/run-log.md#one-reader), never a second classification of the records.
 * @module
 */
import { childRunsOf, LogCodec } from '../core/index.ts';
import { readReadablePrefix } from '../core/internal-entry.ts';
import type { LogRecord, RunLogView, StepRecord, StopReason } from '../core/index.ts';
import type { RunStatus, RunTrajectory } from '../core/internal-entry.ts';

// The bodies are written once, with the viewer's server, in src/core/http-bodies.ts.
export type { RunStatus, RunTrajectory } from '../core/internal-entry.ts';

/**
 * What the run object answers instead of a status, trajectory or log when
 * the run's log cannot be read (`unreadable`: the error's name and message).
 */
export type UnreadableLog = { readonly runId: string; readonly unreadable: string };

/**
 * The status a view reports: `ended` with the outcome of its `run_ended` record; `awaiting_input`
 * with its open requests; every other state (not started, at a step boundary, in flight — also a
 * reply that landed and is being carried out) is `running`, counted over the steps so far. Each
 * with the sub-agent runs the log names (`children`).
 */
export function statusOf(runId: string, view: RunLogView): RunStatus {
  const { steps, validActions } = view;
  switch (view.state) {
    case 'ended': {
      // readRunLog gives `ended` exactly when the run_ended record is there.
      const ended = view.ended as NonNullable<RunLogView['ended']>;
      const { stopReason, finalAnswer } = ended;
      const error = failureOf(stopReason, view.trajectory);
      return {
        runId,
        status: 'ended',
        stopReason,
        finalAnswer,
        steps: ended.steps,
        validActions: ended.validActions,
        pending: null,
        openRequests: [],
        error,
        children: childRunsOf(view),
      };
    }
    case 'awaiting_input':
      return {
        runId,
        status: 'awaiting_input',
        stopReason: null,
        finalAnswer: null,
        steps,
        validActions,
        pending: view.pending,
        openRequests: view.openRequests,
        error: null,
        children: childRunsOf(view),
      };
    case 'not_started':
    case 'at_boundary':
    case 'in_flight':
      return {
        runId,
        status: 'running',
        stopReason: null,
        finalAnswer: null,
        steps,
        validActions,
        pending: null,
        openRequests: [],
        error: null,
        children: childRunsOf(view),
      };
  }
}

/** `RunResult.error` of an ended run, as `run` and `resume` derive it: the last step's observation of a failed run. */
function failureOf(stopReason: StopReason, trajectory: readonly StepRecord[]): string | null {
  if (stopReason !== 'model_error' && stopReason !== 'interpreter_error' && stopReason !== 'env_error') return null;
  return trajectory.at(-1)?.observation ?? null;
}

/** The status of a halted run: the steps of what could be read, no outcome, and why it halted. */
export function haltedStatusOf(runId: string, view: RunLogView, why: string): RunStatus {
  return {
    runId,
    status: 'halted',
    stopReason: null,
    finalAnswer: null,
    steps: view.steps,
    validActions: view.validActions,
    pending: null,
    openRequests: [],
    error: why,
    children: childRunsOf(view),
  };
}

/** The trajectory (every completed step, in order) a view holds. */
export function trajectoryOf(runId: string, view: RunLogView): RunTrajectory {
  return { runId, steps: view.trajectory };
}

/**
 * The reading of the longest prefix of a stored log (encoded records, in order) that decodes and
 * that `readRunLog` accepts: for reporting how far a run with a refused log got.
 */
export function readablePrefixView(lines: readonly string[]): RunLogView {
  const records: LogRecord[] = [];
  const codec = new LogCodec();
  for (const line of lines) {
    try {
      records.push(codec.decode(line));
    } catch {
      break;
    }
  }
  return readReadablePrefix(records).view;
}
