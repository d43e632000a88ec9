/**
 * A person in control of a run from outside its driver (docs/design/control.md): `requestStop`
 * asks whichever process or tab drives a run to end it, and `forkRun` starts a new run from a step
 * of an existing one without running anything again.
 * @module
 */
import { Cancellation } from './cancellation.ts';
import { InvalidRequestError, isPolyLoopError, RunNotFoundError } from './errors.ts';
import { guardedRead } from './lease.ts';
import type { Lease } from './lease.ts';
import { Outbox } from './outbox.ts';
import { checkOptionKeys } from './options.ts';
import type { OptionKeys } from './options.ts';
import type { RunStore, StoreWarning } from './ports.ts';
import type { AgentDefinition, RunRequest } from './request.ts';
import { importRun, readRunLog } from './run-log.ts';
import { encodeLog } from './serialization.ts';
import { executeAction } from './session-seams.ts';
import { RunWrites } from './session-writes.ts';
import { startedEvent } from './takeover.ts';
import { RegistryExecutor } from './tools.ts';
import type { LogRecord, RunLogView, RunResult, RunStartedRecord, StopRequest } from './types.ts';

/** The longest stop reason kept: it is stored in the run's last record and shown to people. */
export const MAX_STOP_REASON_CHARS = 2_000;

/**
 * Ask a run to stop, from any process or tab that opens its store. Whoever drives the run sees
 * the request within a second: its model call, its action's handler and its wait for a person are
 * aborted (each handler's `signal` aborts with `StopRequestedError`), and `run`/`resume` resolve
 * with `stopReason: 'cancelled'` and `stopRequest: { reason }` within the run's `cancelGraceMs`
 * (plus that second). A run no driver holds — one awaiting input, or one whose process died — ends
 * so at its next `resume`, before any model call or action (input given then is not carried out).
 *
 * Does nothing to a run that has ended. Rejects with `RunNotFoundError` for a run without a log,
 * `InvalidRequestError` for a store that keeps no stop requests (no `requestStop` method) or a
 * reason that is not a string, `StoreError` when the store fails.
 *
 * @example
 * await requestStop(new FileStore({ dir: './runs' }), 'run-1', 'the customer cancelled the order');
 */
export async function requestStop(store: RunStore, runId: string, reason?: string): Promise<void> {
  if (typeof runId !== 'string' || runId === '')
    throw new InvalidRequestError('requestStop: the run id must be a non-empty string');
  if (reason !== undefined && typeof reason !== 'string')
    throw new InvalidRequestError('requestStop: the reason must be a string when given');
  if (reason !== undefined && reason.length > MAX_STOP_REASON_CHARS)
    throw new InvalidRequestError(`requestStop: the reason is longer than ${MAX_STOP_REASON_CHARS} characters`);
  if (typeof store?.requestStop !== 'function')
    throw new InvalidRequestError('requestStop: this store keeps no stop requests (it has no requestStop method)');
  const view = readRunLog(await guardedRead(runId, 'readLog', () => store.readLog(runId)));
  if (view.state === 'not_started') throw new RunNotFoundError(runId);
  if (view.ended) return;
  const stop = reason === undefined ? {} : { reason };
  await guardedRead(runId, 'requestStop', () =>
    (store.requestStop as NonNullable<RunStore['requestStop']>)(runId, stop),
  );
}

/**
 * End a run that was asked to stop while no driver held it: `run_ended` (`cancelled`, with the
 * request) is its only write — no model call, no action, no reply carried out, whatever the run
 * awaited and whatever its code is now.
 */
export async function endOnStop(
  agent: AgentDefinition,
  view: RunLogView,
  stop: StopRequest,
  run: {
    readonly runId: string;
    readonly cancel: Cancellation;
    readonly lease: Lease | null;
    readonly warnings: readonly StoreWarning[];
    /** The run's request, to reach the sub-agents it waits on; null when the log and the agent give none. */
    readonly request: RunRequest | null;
  },
): Promise<RunResult> {
  const { runId } = run;
  const out = new Outbox(agent.store, agent.events, runId, run.cancel);
  const writes = new RunWrites(out, agent.store, runId, run.cancel.signal, run.lease);
  try {
    // This driver only ends the run (no resumed mark): its sink still hears it started, as any later driver's.
    await out.emit(startedEvent(view, runId, view.trajectory.length));
    for (const w of run.warnings) await out.emit({ type: 'warning', runId, code: w.code, message: w.message });
    if (run.request) await cancelWaitingChildren(run.request, view);
    const counters = { steps: view.steps, validActions: view.validActions, usage: view.usage };
    return await writes.end('cancelled', counters, [...view.trajectory], stop);
  } finally {
    out.close();
  }
}

/**
 * Carry a cancel to each sub-agent the run waits on, before the run ends on a stop: no child is
 * left asking a person a question no one will be shown, nor one a person could still approve on
 * its own. Each child ends `cancelled`, as when a person cancels its request. Best effort, within
 * the run's grace period: a child that cannot be reached (its code changed, its store fails) stays
 * as it is, and the run ends all the same.
 */
export async function cancelWaitingChildren(req: RunRequest, from: RunLogView | RunStore): Promise<void> {
  // A driver ending mid-step reads what its step has written: the records, not its own state, say who waits.
  const view =
    'openRequests' in from
      ? from
      : await from
          .readLog(req.runId)
          .then(readRunLog)
          .catch(() => null);
  if (view === null) return;
  const ex = req.executor;
  const waiting = view.openRequests.filter(
    (q) =>
      q.kind === 'child' && q.child && q.decision && ex instanceof RegistryExecutor && ex.runsChild(q.decision.action),
  );
  if (waiting.length === 0) return;
  // The run's own signal has aborted: the children hear the cancel under a signal of their own.
  const cancel = new Cancellation(AbortSignal.timeout(req.cancelGraceMs), 0);
  try {
    await Promise.all(
      waiting.map(async (q) => {
        const asked = q.child as NonNullable<typeof q.child>;
        // The child's run id is the run's id and the action that runs it (`s3.action`, `s3.a1`).
        const action = asked.runId.slice(req.runId.length + 1);
        const answer = { reply: { kind: 'cancel' as const, resultId: q.resultId }, asked };
        const decision = q.decision as NonNullable<typeof q.decision>;
        await executeAction(req, cancel, decision, q.stepIndex, action, { answer, upgrade: null }).catch(noop);
      }),
    );
  } finally {
    cancel.dispose();
  }
}

function noop(): void {}

/** The stop request an abort reason carries (`StopRequestedError`), or null for any other abort. */
export function stopRequestOf(reason: unknown): StopRequest | null {
  if (!isPolyLoopError(reason, 'stop_requested')) return null;
  const { stop } = reason as { stop?: { reason?: unknown } };
  return typeof stop?.reason === 'string' ? { reason: stop.reason } : {};
}

/** Options of {@link forkRun}. */
export type ForkOptions = {
  /** The first step the fork runs itself: the steps before it are copied, and the model is asked again here. */
  readonly atStep: number;
  /** The fork's run id: must have no log in the store it goes to. */
  readonly newRunId: string;
  /** Where the fork is written; the source's store when absent. */
  readonly into?: RunStore;
};

const FORK_OPTIONS: OptionKeys<ForkOptions> = { atStep: true, newRunId: true, into: true };

/**
 * Start a new run from a step of an existing one. Its log holds `run_started` (the new id,
 * `forkedFrom: { runId, atStep }`, the source's identity) and the records of the steps before
 * `atStep`, so resuming it asks the model again at `atStep` and runs nothing before it again. When
 * the source awaits a person at `atStep`, the fork holds that step's records too and awaits the
 * same request: approve in one, deny in the other. The source is only read.
 *
 * Refuses, writing nothing: `atStep` past the run's last step (or at a step in flight that awaits
 * no approval or answer: a settlement, or a sub-agent's question), a `newRunId` with a log
 * (`RunExistsError`), a target store that cannot hold the records; `RunNotFoundError` for a source
 * without a log.
 *
 * @example
 * await forkRun(store, 'run-1', { atStep: 3, newRunId: 'run-1-retry' });
 * await resume(agent, 'run-1-retry');
 */
export async function forkRun(store: RunStore, runId: string, opts: ForkOptions): Promise<void> {
  checkOptionKeys(opts, FORK_OPTIONS, 'forkRun');
  const { atStep, newRunId } = opts;
  if (opts.into !== undefined) checkStore(opts.into);
  const into = opts.into ?? store;
  if (!Number.isSafeInteger(atStep) || atStep < 0)
    throw new InvalidRequestError('forkRun: atStep must be a non-negative integer');
  if (typeof newRunId !== 'string' || newRunId === '')
    throw new InvalidRequestError('forkRun: newRunId must be a non-empty string');
  if (newRunId === runId && into === store)
    throw new InvalidRequestError('forkRun: newRunId must differ from the source run in the same store');
  const records = await guardedRead(runId, 'readLog', () => store.readLog(runId));
  const view = readRunLog(records);
  if (view.state === 'not_started' || !view.started) throw new RunNotFoundError(runId);
  const kept = forkedRecords(records, view, atStep);
  const started: RunStartedRecord = { ...view.started, runId: newRunId, forkedFrom: { runId, atStep } };
  const ndjson = encodeLog([started, ...kept]);
  await importRun(into, newRunId, ndjson);
}

/** The methods every store has: a fork is written through them. */
const STORE_METHODS = ['runStarted', 'intent', 'result', 'step', 'readLog', 'runEnded'] as const;

/** Refuse an `into` that is no store, naming what it lacks, before anything is read or written. */
function checkStore(into: unknown): void {
  const o = into as Record<string, unknown> | null;
  const missing = typeof o === 'object' && o !== null ? STORE_METHODS.filter((m) => typeof o[m] !== 'function') : null;
  if (missing === null || missing.length > 0)
    throw new InvalidRequestError(
      `forkRun: into must be a RunStore${missing === null ? '' : `; it has no ${missing.join(', ')}`}`,
    );
}

/** The source's records a fork at `atStep` keeps, `run_started` aside. */
function forkedRecords(records: readonly LogRecord[], view: RunLogView, atStep: number): LogRecord[] {
  const completed = view.trajectory.length;
  if (atStep < completed) return records.filter((r) => r.kind !== 'run_started' && !atOrAfter(r, atStep));
  if (atStep === completed && view.state === 'awaiting_input') {
    const asked = view.openRequests.find((q) => q.kind !== 'approval' && q.kind !== 'answer');
    if (asked)
      throw new InvalidRequestError(
        `forkRun: step ${atStep} awaits ${asked.kind === 'child' ? "a sub-agent's question" : 'a settlement'} ` +
          `(${asked.resultId}), which a fork cannot take over; answer it first, or fork at an earlier step`,
      );
    return records.filter((r) => r.kind !== 'run_started' && r.kind !== 'run_ended');
  }
  const last = completed === 0 ? 'it has no completed step' : `its last completed step is ${completed - 1}`;
  throw new InvalidRequestError(
    `forkRun: run ${JSON.stringify(view.runId)} cannot be forked at step ${atStep}: ${last}` +
      (view.state === 'awaiting_input' || view.state === 'in_flight' ? ` and step ${completed} is not complete` : ''),
  );
}

/** Whether a record belongs to step `atStep` or later (or is the run's end). */
function atOrAfter(r: LogRecord, atStep: number): boolean {
  switch (r.kind) {
    case 'run_ended':
      return true;
    case 'step':
      return r.step.stepIndex >= atStep;
    case 'run_started':
      return false;
    default:
      return r.stepIndex >= atStep;
  }
}
