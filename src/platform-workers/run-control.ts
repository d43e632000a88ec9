/**
 * A person in control of a run over HTTP (docs/http.md#post-runsidstop, docs/http.md#post-runsidfork):
 * the shape checks of the `stop` and `fork` bodies, the outcomes the run object hands the app, and
 * the object's side of each — a stop kept in its store, the log of a fork made from its run.
 * @module
 */
import { exportRun, forkRun, InMemoryStore, isPolyLoopError, requestStop, RunNotFoundError } from '../core/index.ts';
import type { RunLogView, StopReason, StopRequest } from '../core/index.ts';
import type { ForkBody } from '../core/internal-entry.ts';
import { subAgentRefusal } from './child-run-store.ts';
import type { DurableObjectStore } from './durable-object-store.ts';
import type { RunObjectDriver } from './run-drive.ts';
import { RUN_ID_PATTERN } from './run-id.ts';
import type { RunPhase } from './run-phase.ts';
import type { RunRow } from './run-row.ts';
import type { Reading, RunStorage } from './run-storage.ts';

/**
 * The outcome of `RunObjectBase.requestStop`: the stop is kept (`requested`; the run ends
 * `cancelled` with it), the run had ended and nothing was done, or why not.
 */
export type StopOutcome =
  | { readonly ok: true; readonly requested: true; readonly stopRequest: StopRequest }
  | { readonly ok: true; readonly requested: false; readonly stopReason: StopReason; readonly message: string }
  | { readonly ok: false; readonly code: 'not_found' | 'conflict' | 'bad_request'; readonly message: string };

/**
 * What the source's object of a fork hands the app: the fork's log (NDJSON, its `run_started`
 * naming the new run and where it came from) and the input the source's run was started with, or
 * why no fork is made.
 */
export type ForkSource =
  | { readonly ok: true; readonly log: string; readonly input: unknown }
  | { readonly ok: false; readonly code: 'not_found' | 'conflict'; readonly message: string };

function unknownKeys(raw: object, known: readonly string[]): string | null {
  const unknown = Object.keys(raw).filter((k) => !known.includes(k));
  return unknown.length > 0 ? `unknown field(s): ${unknown.join(', ')}` : null;
}

const isObject = (raw: unknown): raw is object => typeof raw === 'object' && raw !== null && !Array.isArray(raw);

/** Why a parsed `POST /runs/:id/stop` body is not `{ "reason"?: string }`, or null. Its length the library checks. */
export function stopBodyProblem(raw: unknown): string | null {
  if (!isObject(raw)) return 'body: expected { "reason"?: "…" }';
  const unknown = unknownKeys(raw, ['reason']);
  if (unknown !== null) return unknown;
  const { reason } = raw as { reason?: unknown };
  return reason === undefined || typeof reason === 'string' ? null : 'reason: must be a string when given';
}

/** Why a run id is not one a URL path can carry (1–200 of `[A-Za-z0-9._:-]`, not `.` or `..`), or null. */
export function runIdProblem(runId: string): string | null {
  if (!RUN_ID_PATTERN.test(runId)) return 'must be 1-200 characters of [A-Za-z0-9._:-]';
  return runId === '.' || runId === '..' ? 'must not be "." or ".." (a URL path cannot carry them)' : null;
}

/** Why a parsed `POST /runs/:id/fork` body is not `{ "atStep": integer ≥ 0, "newRunId": run id }`, or null. */
export function forkBodyProblem(raw: unknown): string | null {
  if (!isObject(raw)) return 'body: expected { "atStep": 0, "newRunId": "…" }';
  const unknown = unknownKeys(raw, ['atStep', 'newRunId']);
  if (unknown !== null) return unknown;
  const { atStep, newRunId } = raw as { atStep?: unknown; newRunId?: unknown };
  if (typeof atStep !== 'number' || !Number.isSafeInteger(atStep) || atStep < 0)
    return 'atStep: must be a non-negative integer (the first step the fork runs itself)';
  if (typeof newRunId !== 'string') return 'newRunId: required, a string (the new run id)';
  const problem = runIdProblem(newRunId);
  return problem === null ? null : `newRunId: ${problem}`;
}

type Refusal = { readonly ok: false; readonly code: 'conflict'; readonly message: string };

/**
 * The reading of the log of the run the object holding `row` stops or forks, or why it does not:
 * it is a sub-agent's run (its parent's object drives it), or its log is unreadable (the run is halted).
 */
function controlled(row: RunRow, reading: Reading, what: 'stop' | 'fork'): RunLogView | Refusal {
  if (row.parentRunId !== null)
    return { ok: false, code: 'conflict', message: subAgentRefusal(row.runId, row.parentRunId, what) };
  if ('unreadable' in reading)
    return {
      ok: false,
      code: 'conflict',
      message: `the run's log is unreadable, so it is halted: ${reading.unreadable}`,
    };
  return reading.view;
}

/** The answer to a stop of a run that has ended: nothing was done. */
function endedAnswer(runId: string, stopReason: StopReason): StopOutcome {
  const message = `run ${JSON.stringify(runId)} has ended (${stopReason}); nothing was done`;
  return { ok: true, requested: false, stopReason, message };
}

/**
 * Keep a stop for `runId` in `store` through the library's `requestStop` (which checks the reason
 * and does nothing to an ended run). A run whose object took it but whose first record is not
 * written yet (its drive is preparing) has no log for the library to find: its stop is kept all
 * the same, and the drive's `acquire` finds it. The stop in force; null when the run had ended
 * (nothing kept); or why the reason is refused.
 */
async function keepStop(
  store: DurableObjectStore,
  runId: string,
  reason: string | undefined,
): Promise<StopOutcome | null> {
  try {
    await requestStop(store, runId, reason);
  } catch (e) {
    if (e instanceof RunNotFoundError) await store.requestStop(runId, reason === undefined ? {} : { reason });
    else if (isPolyLoopError(e) && e.code === 'invalid_request')
      return { ok: false, code: 'bad_request', message: e.message };
    else throw e;
  }
  const kept = store.stopOf(runId);
  return kept === null ? null : { ok: true, requested: true, stopRequest: kept };
}

/**
 * The log of a fork of `runId` at `atStep` under `newRunId`, made by the library's `forkRun`
 * into a store in memory (the fork lives in another object: the app imports this log there).
 * The source is only read. A fork the library refuses (a step past the run's last, a step in
 * flight that awaits no person, a run with no record yet) is `refused`, with why.
 */
async function forkLog(
  store: DurableObjectStore,
  runId: string,
  fork: ForkBody,
): Promise<{ readonly log: string } | { readonly refused: string }> {
  const into = new InMemoryStore();
  try {
    await forkRun(store, runId, { atStep: fork.atStep, newRunId: fork.newRunId, into });
  } catch (e) {
    if (isPolyLoopError(e) && e.code === 'invalid_request') return { refused: e.message };
    if (e instanceof RunNotFoundError)
      return { refused: `run ${JSON.stringify(runId)} has no record yet: there is no step to fork at` };
    throw e;
  }
  return { log: await exportRun(into, fork.newRunId) };
}

/** What a run object lends its stop and fork: its storage, phase and driver, and its one reading of the log. */
export type ControlParts = {
  readonly storage: RunStorage;
  readonly phase: RunPhase;
  readonly driver: Pick<RunObjectDriver<unknown>, 'rearm' | 'launch'>;
  /** The object's reading of the log, which halts the run when the log cannot be read. */
  readonly read: (meta: RunRow) => Promise<Reading>;
};

/**
 * A run object's stop (docs/http.md#post-runsidstop): kept durably in its store before this
 * resolves. The drive holding the run sees it at once and the run ends `cancelled` with it; a run
 * no drive holds (it awaits input, is halted, or its instance was evicted) is driven now, and ends
 * so before any model call or action. An ended run: nothing is done, and the answer says so.
 */
export async function stopRun(parts: ControlParts, reason: string | undefined): Promise<StopOutcome> {
  const { storage, phase, driver } = parts;
  const meta = storage.meta();
  if (meta === null) return { ok: false, code: 'not_found', message: 'this object holds no run' };
  const view = controlled(meta, await parts.read(meta), 'stop');
  if ('ok' in view) return view;
  if (view.ended) return endedAnswer(meta.runId, view.ended.stopReason);
  const kept = await keepStop(storage.store, meta.runId, reason);
  // The run ended while the stop was being asked: the library kept nothing.
  if (kept === null) return endedAnswer(meta.runId, storage.view(meta.runId)?.ended?.stopReason ?? 'cancelled');
  if (!kept.ok || phase.drive !== null) return kept;
  // An awaiting run has no alarm: arm one, so a stop cut short by eviction is still carried out.
  const armed = meta.halted === null ? driver.rearm() : null;
  void driver.launch();
  await armed;
  return kept;
}

/**
 * The log of a fork of a run object's run (docs/http.md#post-runsidfork), which the app imports
 * into the new run's object, and the input the run was started with. The run is only read.
 */
export async function forkSourceOf(parts: ControlParts, fork: ForkBody): Promise<ForkSource> {
  const meta = parts.storage.meta();
  if (meta === null) return { ok: false, code: 'not_found', message: 'this object holds no run' };
  const view = controlled(meta, await parts.read(meta), 'fork');
  if ('ok' in view) return view;
  const made = await forkLog(parts.storage.store, meta.runId, fork);
  if ('refused' in made) return { ok: false, code: 'conflict', message: made.refused };
  return { ok: true, log: made.log, input: JSON.parse(meta.input) as unknown };
}
