/**
 * `defineAgent`, `run`, `resume`: the public entry of the loop. Reads the log once (under the
 * store's lease), checks identity and input, and hands the run to the one `RunDriver`.
 * @module
 */
import { Cancellation } from './cancellation.ts';
import { endOnStop, stopRequestOf } from './control.ts';
import { checkEdit } from './edits.ts';
import { keptSteps, windowOf } from './history.ts';
import {
  InvalidRequestError,
  isPolyLoopError,
  RunExistsError,
  RunIdentityMismatchError,
  RunNotFoundError,
  StoreError,
} from './errors.ts';
import { diffSnapshots } from './internal/json-compare.ts';
import { acquireLease, guardedRead, Lease } from './lease.ts';
import { checkOptionKeys } from './options.ts';
import type { OptionKeys } from './options.ts';
import type { EventSink, SettledRun, StoreWarning } from './ports.ts';
import type {
  AgentConfig,
  AgentDefinition,
  ResumeOptions,
  RunOptions,
  RunRequestInput,
  UpgradeOptions,
} from './request.ts';
import { requestFromLog, resolveRequest } from './request-input.ts';
import type { ResolvedRequest } from './request-input.ts';
import { checkAgentConfig, checkRequest } from './request-checks.ts';
import { readStoredLog } from './log-lines.ts';
import type { ResumeReading } from './log-lines.ts';
import { checkSnapshotHash, trustInFlight } from './log-trust.ts';
import { checkReply, isThenable } from './seam-values.ts';
import { readSinkHook } from './sinks.ts';
import { RunDriver } from './session.ts';
import { snapshotInForce, snapshotText as identityText } from './snapshot.ts';
import { storedResult } from './step-record.ts';
import { severalCallsRefusal } from './store-write.ts';
import type { ParamSnapshot, RunLogView, RunResult, RunStartedRecord, StopRequest, UpgradeRecord } from './types.ts';
import { checkUpgradeHashes, storedRequestOf, upgradeRecord, upgradeRefusal } from './upgrade.ts';

/**
 * Define an agent: the reusable, frozen half of a run (model, interpreter, store, events,
 * synthetic observation texts, and the request fields its runs share as `defaults`). One
 * definition serves any number of concurrent runs.
 *
 * @example
 * const agent = defineAgent({ model, interpreter, store: new InMemoryStore(), events,
 *   syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
 *   defaults: { tools, executor: new RegistryExecutor(tools), budget, injections: {}, modelBinding: {},
 *     modelReplayPolicy: 'safe', observationTemplate: '{observation}', toolRenderStyle: 'none',
 *     cancelGraceMs: 5_000 } });
 */
export function defineAgent(config: AgentConfig): AgentDefinition {
  checkAgentConfig(config);
  const syntheticObservations = Object.freeze({ ...config.syntheticObservations });
  const params = Object.freeze({
    model: Object.freeze({ ...config.model.params }),
    interpreter: Object.freeze({ ...config.interpreter.params }),
    events: Object.freeze({ ...config.events.params }),
    syntheticObservations,
  });
  const defaults = config.defaults === undefined ? {} : { defaults: Object.freeze({ ...config.defaults }) };
  return Object.freeze({ ...config, ...defaults, syntheticObservations, params });
}

/**
 * Start a new run and drive it to its end. `request` is complete with the agent's defaults:
 * `run(agent, { runId, goal })` is enough when they give the rest.
 *
 * Rejects with `RunExistsError` if the run has a log, `InvalidRequestError` for a malformed
 * request, `StoreError` when the store fails (the log stays resumable) or, with
 * `parallelToolCalls` above 1, has no `callResult` (before anything is written), and `signal.reason`
 * when aborted (after writing `run_ended` with stop reason `cancelled`, within `cancelGraceMs`).
 *
 * @example
 * const signal = AbortSignal.timeout(60_000);
 * const result = await run(agent, { runId: 'run-1', goal: 'Summarise the report' }, { signal });
 * console.log(result.stopReason, result.finalAnswer);
 */
export function run(agent: AgentDefinition, request: RunRequestInput, opts: RunOptions = {}): Promise<RunResult> {
  return drive(agent, request, opts, 'run');
}

/**
 * Continue a run from its log: returns the stored result of an ended run (executing nothing),
 * otherwise recovers the interrupted step by its replay policy and drives the run to its end
 * (or to the next input request). Give the run's id, and the request is rebuilt from its log
 * (its tools and executor from the agent's defaults), or give the request as `run` takes it.
 *
 * A run awaiting input moves on only with `opts.input`, a reply to its open request;
 * without it, resume returns the same awaiting result and writes and delivers nothing. A run
 * whose definition or request changed goes on only with `opts.upgrade`, which writes an
 * `upgrade` record first (docs/upgrades.md). Rejects with `RunNotFoundError` for an empty log,
 * `RunIdentityMismatchError` when the parameters differ from the run's and no upgrade was asked
 * for (or the run has ended), `UpgradeRefusedError` for an upgrade the interrupted step forbids,
 * `InvalidInputError` for a reply that fits no open request (nothing written in each case);
 * otherwise as {@link run}.
 *
 * @example
 * const result = await resume(agent, 'run-1');
 * if (result.pending) await resume(agent, 'run-1', { input: { kind: 'approve', resultId: result.pending.resultId } });
 * await resume(agentV2, 'run-1', { upgrade: { reason: 'deploy 42: search tool added' } });
 */
export function resume(
  agent: AgentDefinition,
  request: RunRequestInput | string,
  opts: ResumeOptions = {},
): Promise<RunResult> {
  return drive(agent, request, opts, 'resume');
}

const RUN_OPTIONS: OptionKeys<RunOptions> = { signal: true };
const RESUME_OPTIONS: OptionKeys<ResumeOptions> = { signal: true, input: true, upgrade: true };
const UPGRADE_OPTIONS: OptionKeys<UpgradeOptions> = { reason: true };
const RUN_HINTS = {
  input: 'it answers an open request: pass it to resume',
  upgrade: 'a new run has nothing to upgrade: pass it to resume',
};
/**
 * The stop request a `lost` signal aborted at `acquire` carries; a lease lost before the run was
 * even read rejects (nothing written).
 */
function stopAtStart(lost: AbortSignal, runId: string): StopRequest | null {
  const stop = stopRequestOf(lost.reason);
  if (stop) return stop;
  if (isPolyLoopError(lost.reason, 'lease_lost')) throw lost.reason;
  throw new StoreError(runId, 'acquire', lost.reason);
}

/** The request the log and the agent give a run resumed by id, or null when they give none. */
function requestOrNull(agent: AgentDefinition, runId: string, started: RunStartedRecord, view: RunLogView) {
  try {
    const inForce = snapshotInForce(started, view.upgrades);
    const { request, defaulted } = requestFromLog(
      agent,
      runId,
      inForce,
      storedRequestOf(started, view.upgrades),
      started.v,
    );
    checkRequest(request, { defaulted });
    return request;
  } catch {
    return null;
  }
}

/** The grace of a run resumed by id until its log is read: nothing is written before then. */
const UNREAD_GRACE_MS = 0;

function checkOptions(opts: ResumeOptions, mode: 'run' | 'resume'): void {
  if (mode === 'run') return checkOptionKeys(opts, RUN_OPTIONS, 'run', { hints: RUN_HINTS });
  checkOptionKeys(opts, RESUME_OPTIONS, 'resume');
  const { upgrade } = opts;
  if (upgrade === undefined) return;
  checkOptionKeys(upgrade, UPGRADE_OPTIONS, 'resume: upgrade');
  if (typeof upgrade.reason !== 'string' || upgrade.reason.trim() === '') {
    throw new InvalidRequestError(
      [{ path: 'upgrade.reason', message: 'must be a non-empty string: why the run goes on under new parameters' }],
      { source: 'resume' },
    );
  }
}

/** A driver session the sink heard of (its `run_started`, or its `traceparent` hook): it is told how it settled. */
type Session = { runId: string | null };

async function drive(
  agent: AgentDefinition,
  given: RunRequestInput | string,
  opts: ResumeOptions,
  mode: 'run' | 'resume',
): Promise<RunResult> {
  const session: Session = { runId: null };
  let result: RunResult;
  try {
    result = await driveOnce(agent, given, opts, mode, session);
  } catch (e) {
    if (session.runId !== null) tellSettled(agent.events, session.runId, { error: e });
    throw e;
  }
  if (session.runId !== null) tellSettled(agent.events, session.runId, { result });
  return result;
}

/** The sink's optional `settled`, after the run's last event; what it throws is its own affair. */
function tellSettled(sink: EventSink, runId: string, outcome: SettledRun): void {
  const settled = readSinkHook(sink, 'settled');
  if (typeof settled !== 'function') return;
  try {
    const answer: unknown = settled.call(sink, runId, Object.freeze(outcome));
    // Not awaited (it is synchronous by contract), but a promise it returns must not reject unhandled.
    if (isThenable(answer)) Promise.resolve(answer).catch(() => undefined);
  } catch {
    // The run has settled: there is nothing left to count a failure against.
  }
}

async function driveOnce(
  agent: AgentDefinition,
  given: RunRequestInput | string,
  opts: ResumeOptions,
  mode: 'run' | 'resume',
  session: Session,
): Promise<RunResult> {
  checkOptions(opts, mode);
  const byId = typeof given === 'string';
  if (byId && mode === 'run')
    throw new InvalidRequestError(
      'run takes a request, not a run id: resume(agent, runId) goes on with a run that has a log',
      { source: 'run' },
    );
  let resolved = byId ? null : resolveRequest(given, agent.defaults);
  if (resolved) checkRequest(resolved.request, { defaulted: resolved.defaulted });
  const runId = byId ? given : (resolved as ResolvedRequest).request.runId;
  // A signal of its own for each run, never one shared: in workerd a signal belongs to the Durable
  // Object that made it, and another object touching it throws.
  const signal = opts.signal ?? new AbortController().signal;
  signal.throwIfAborted();
  const { store } = agent;
  // Without a signal of the caller's, nothing can abort this run: its waits need no racing.
  const cancel = new Cancellation(
    signal,
    resolved?.request.cancelGraceMs ?? UNREAD_GRACE_MS,
    opts.signal !== undefined,
  );
  let lease: Lease | null = null;
  let driver: RunDriver | null = null;
  try {
    // The tools' validator may still be loading (decision 0081): nothing is checked before it is.
    const tools = resolved?.request.tools;
    if (tools) await cancel.seam(() => tools.loaded());
    if (store.acquire) lease = new Lease(await acquireLease(cancel, runId, store));
    const warnings: StoreWarning[] = [];
    const onWarning = (w: StoreWarning): void => void warnings.push(w);
    const guard = <T>(fn: () => Promise<T>): Promise<T> => guardedRead(runId, 'readLog', () => cancel.seam(fn), signal);
    // Not destructured: `findLine` may hold every record read, let go of below with `reading`.
    let reading: ResumeReading | null = await readStoredLog(store, runId, { onWarning }, guard);
    let view: RunLogView | null = reading.view;
    if (mode === 'run' && view.state !== 'not_started') throw new RunExistsError(runId);
    if (mode === 'resume' && view.state === 'not_started') throw new RunNotFoundError(runId);
    const started = view.started;
    if (started) {
      await checkSnapshotHash(started, 'run log');
      await checkUpgradeHashes(started, view.upgrades, reading.findLine, 'run log');
    }
    // A stop asked while no driver held the run: it ends now, before anything else.
    const stop = lease?.lost?.aborted ? stopAtStart(lease.lost, runId) : null;
    if (stop && started && !view.ended) {
      cancel.graceMs = started.request?.cancelGraceMs ?? resolved?.request.cancelGraceMs ?? UNREAD_GRACE_MS;
      const request = resolved?.request ?? requestOrNull(agent, runId, started, view);
      session.runId = runId;
      const ended = await endOnStop(agent, view, stop, { runId, cancel, lease, warnings, request });
      return windowed(ended, windowOf(snapshotInForce(started, view.upgrades)));
    }
    const inForce = started ? snapshotInForce(started, view.upgrades) : null;
    if (resolved === null) {
      const s = started as RunStartedRecord;
      resolved = requestFromLog(agent, runId, inForce as ParamSnapshot, storedRequestOf(s, view.upgrades), s.v);
      checkRequest(resolved.request, {
        defaulted: resolved.defaulted,
        source: 'resume (the request rebuilt from the log and the agent)',
      });
      cancel.graceMs = resolved.request.cancelGraceMs;
      const { tools } = resolved.request;
      await cancel.seam(() => tools.loaded());
    }
    const { request, defaulted } = resolved;
    // The steps a result keeps: what an ended run's identity (checked below) or the upgraded one says.
    const window = request.historyWindow?.steps ?? null;
    // From here on a stop request or a lost lease aborts the run as the caller's signal would.
    if (lease?.lost && !lease.lost.aborted) cancel.join(lease.lost);
    const snapshotText = identityText(agent, request);
    const snapshot = JSON.parse(snapshotText) as ParamSnapshot;
    const differing = inForce ? diffSnapshots(inForce, snapshot) : [];
    if (differing.length > 0 && (opts.upgrade === undefined || view.ended))
      throw new RunIdentityMismatchError(runId, differing, { ended: view.ended !== null });
    // Before the log is read against the new tools: what an upgrade may not change is refused as such.
    const refusal = differing.length > 0 && inForce ? upgradeRefusal(runId, view, inForce, request) : null;
    if (refusal) throw refusal;
    // The interrupted step goes on as the run's own tools allow, not as the log claims.
    let trusted: RunLogView | null = trustInFlight(view, request, reading.findLine);
    const reply = mode === 'resume' ? opts.input : undefined;
    const input = reply === undefined ? undefined : checkReply(runId, reply, trusted);
    if (input !== undefined) checkEdit(runId, input, trusted, request);
    const stored = { cancelGraceMs: request.cancelGraceMs, defaulted };
    let upgrade: UpgradeRecord | null = null;
    if (differing.length > 0 && inForce && opts.upgrade) {
      upgrade = await upgradeRecord(trusted, inForce, snapshot, {
        differing,
        reason: opts.upgrade.reason,
        request: stored,
        at: new Date().toISOString(),
      });
    }
    // An ended run, or one awaiting input that got none: the stored
    // result; nothing delivered, nothing written but an upgrade asked for.
    if (trusted.ended) return windowed(storedResult(runId, trusted), window);
    const refused = severalCallsRefusal(store, runId, request.parallelToolCalls ?? 1);
    if (refused) throw refused;
    driver = new RunDriver(agent, request, cancel, lease, opts.upgrade ?? null);
    session.runId = runId;
    if (upgrade) await driver.upgrade(upgrade);
    if (trusted.pending && input === undefined) {
      // A stop asked while the upgrade was written ends the run now, not at some later resume; a
      // lease lost meanwhile rejects (another driver may own the log).
      if (cancel.leaseLost) throw cancel.signal.reason;
      const stop = cancel.signal.aborted ? stopRequestOf(cancel.signal.reason) : null;
      if (stop)
        return windowed(await endOnStop(agent, trusted, stop, { runId, cancel, lease, warnings, request }), window);
      return windowed(storedResult(runId, trusted), window);
    }
    const driving = driver.drive(trusted, { snapshot, snapshotText, request: stored }, warnings, input ?? null);
    // A frame keeps its locals alive across every await: let go of what was read (every record, every
    // step), so that a windowed run keeps only its window. The driver took what it needs.
    reading = view = trusted = null;
    return await driving;
  } finally {
    cancel.dispose();
    await lease?.settle(driver?.abandonedWrite ?? null, agent.events, runId);
  }
}

/**
 * A result read from the log holds the steps a driver would have kept (decision 0084): the same
 * whichever driver returns it, a crash or a later `resume` of an ended run.
 */
function windowed(result: RunResult, window: number | null): RunResult {
  return window === null ? result : { ...result, trajectory: keptSteps(result.trajectory, window) };
}
