/**
 * What the HTTP surface reports about a run, computed from its log.
 * @module
 */
import type { LogRecord, StepRecord, StopReason } from '../core/index.ts';

/**
 * `GET /runs/:id` body (SPEC §6). Before its first record a run is `running` with `steps: 0`.
 * `halted`: the run object gave up driving the run (its log is unreadable, or the library refused
 * to resume it); `error` says why, and appears only then.
 */
export type RunStatus = {
  readonly runId: string;
  readonly status: 'running' | 'ended' | 'halted';
  readonly error?: string;
  readonly stopReason: StopReason | null;
  readonly finalAnswer: string | null;
  readonly steps: number;
  readonly validActions: number;
};

/** What the run object answers instead of a status or trajectory when the run's log cannot be read (`why`: the error's name and message). */
export type UnreadableLog = { readonly runId: string; readonly unreadable: string };

/** `GET /runs/:id/trajectory` body (SPEC §6). */
export type RunTrajectory = { readonly runId: string; readonly steps: readonly StepRecord[] };

/** The status of a run from its log: the `run_ended` record when there is one, counted steps otherwise. */
export function statusFromLog(runId: string, log: readonly LogRecord[]): RunStatus {
  let steps = 0;
  let validActions = 0;
  for (const rec of log) {
    if (rec.kind === 'run_ended') {
      return { runId, status: 'ended', stopReason: rec.stopReason, finalAnswer: rec.finalAnswer, steps: rec.steps, validActions: rec.validActions };
    }
    if (rec.kind === 'step') {
      steps++;
      if (rec.step.actionStatus === 'executed') validActions++;
    }
  }
  return { runId, status: 'running', stopReason: null, finalAnswer: null, steps, validActions };
}

/** The trajectory (every step record, in order) of a run from its log. */
export function trajectoryFromLog(runId: string, log: readonly LogRecord[]): RunTrajectory {
  const steps: StepRecord[] = [];
  for (const rec of log) if (rec.kind === 'step') steps.push(rec.step);
  return { runId, steps };
}

/** The status of a halted run: steps counted over the records that could be read, no outcome, and why it halted. */
export function haltedStatus(runId: string, readable: readonly LogRecord[], why: string): RunStatus {
  const { steps, validActions } = statusFromLog(runId, readable.filter((r) => r.kind !== 'run_ended'));
  return { runId, status: 'halted', stopReason: null, finalAnswer: null, steps, validActions, error: why };
}
