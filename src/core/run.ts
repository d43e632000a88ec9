/**
 * `defineAgent`, `run`, `resume`: the public entry of the loop. Reads the log once (under the
 * store's lease), checks identity and input, and hands the run to the one `RunDriver`.
 * @module
 */
import { Cancellation } from './cancellation.ts';
import { RunExistsError, RunNotFoundError } from './errors.ts';
import { acquireLease, guardedRead, Lease } from './lease.ts';
import { checkOptionKeys } from './options.ts';
import type { OptionKeys } from './options.ts';
import type { StoreWarning } from './ports.ts';
import type { AgentConfig, AgentDefinition, ResumeOptions, RunOptions, RunRequest } from './request.ts';
import { checkAgentConfig, checkRequest } from './request-checks.ts';
import { readRunLog } from './run-log.ts';
import { checkSnapshotHash, trustInFlight } from './log-trust.ts';
import { checkReply } from './seam-values.ts';
import { RunDriver } from './session.ts';
import { identityMismatch, identitySnapshot } from './snapshot.ts';
import { storedResult } from './step-record.ts';
import type { RunResult } from './types.ts';

/**
 * Define an agent: the reusable, frozen half of a run (model, interpreter, store, events,
 * synthetic observation texts). One definition serves any number of concurrent runs.
 *
 * @example
 * const agent = defineAgent({ model, interpreter, store: new InMemoryStore(), events,
 *   syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } });
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
  return Object.freeze({ ...config, syntheticObservations, params });
}

/**
 * Start a new run and drive it to its end.
 *
 * Rejects with `RunExistsError` if the run has a log, `InvalidRequestError` for a malformed
 * request, `StoreError` when the store fails (the log stays resumable), and `signal.reason`
 * when aborted (after writing `run_ended` with stop reason `cancelled`, within `cancelGraceMs`).
 *
 * @example
 * const result = await run(agent, request, { signal: AbortSignal.timeout(60_000) });
 * console.log(result.stopReason, result.finalAnswer);
 */
export function run(agent: AgentDefinition, request: RunRequest, opts: RunOptions = {}): Promise<RunResult> {
  return drive(agent, request, opts, 'run');
}

/**
 * Continue a run from its log: returns the stored result of an ended run (executing nothing),
 * otherwise recovers the interrupted step by its replay policy and drives the run to its end
 * (or to the next input request). A run awaiting input moves on only with `opts.input`, a reply
 * to its open request (SPEC §9); without it, resume returns the same awaiting result and writes
 * and delivers nothing. Rejects with `RunNotFoundError` for an empty log,
 * `RunIdentityMismatchError` when the definition or request differ from the ones the run
 * started with, `InvalidInputError` for a reply that fits no open request (nothing written);
 * otherwise as {@link run}.
 *
 * @example
 * const result = await resume(agent, sameRequestAsBefore);
 * if (result.pending) await resume(agent, sameRequestAsBefore, { input: { kind: 'approve', resultId: result.pending.resultId } });
 */
export function resume(agent: AgentDefinition, request: RunRequest, opts: ResumeOptions = {}): Promise<RunResult> {
  return drive(agent, request, opts, 'resume');
}

const RUN_OPTIONS: OptionKeys<RunOptions> = { signal: true };
const RESUME_OPTIONS: OptionKeys<ResumeOptions> = { signal: true, input: true };
const RUN_HINTS = { input: 'it answers an open request: pass it to resume' };

async function drive(agent: AgentDefinition, request: RunRequest, opts: ResumeOptions, mode: 'run' | 'resume'): Promise<RunResult> {
  if (mode === 'run') checkOptionKeys(opts, RUN_OPTIONS, 'run', { hints: RUN_HINTS });
  else checkOptionKeys(opts, RESUME_OPTIONS, 'resume');
  checkRequest(request);
  const signal = opts.signal ?? new AbortController().signal;
  signal.throwIfAborted();
  const { store } = agent;
  const { runId } = request;
  // Without a signal of the caller's, nothing can abort this run: its waits need no racing.
  const cancel = new Cancellation(signal, request.cancelGraceMs, opts.signal !== undefined);
  let lease: Lease | null = null;
  let driver: RunDriver | null = null;
  try {
    if (store.acquire) lease = new Lease(await acquireLease(cancel, runId, store));
    const warnings: StoreWarning[] = [];
    const log = await guardedRead(runId, 'readLog', () => cancel.seam(() => store.readLog(runId, { onWarning: (w) => void warnings.push(w) })), signal);
    const view = readRunLog(log);
    if (mode === 'run' && view.state !== 'not_started') throw new RunExistsError(runId);
    if (mode === 'resume' && view.state === 'not_started') throw new RunNotFoundError(runId);
    if (view.started) await checkSnapshotHash(view.started, 'run log');
    const snapshot = identitySnapshot(agent, request);
    const mismatch = view.started ? identityMismatch(runId, view.started, snapshot) : null;
    if (mismatch) throw mismatch;
    // The interrupted step goes on as the run's own tools allow, not as the log claims.
    const trusted = trustInFlight(view, request, log);
    const given = mode === 'resume' ? opts.input : undefined;
    const input = given === undefined ? undefined : checkReply(runId, given, trusted);
    // An ended run, or one awaiting input that got none: the stored result; nothing written or delivered.
    if (trusted.ended || (trusted.pending && input === undefined)) return storedResult(runId, trusted);
    driver = new RunDriver(agent, request, cancel, lease);
    return await driver.drive(trusted, snapshot, warnings, input ?? null);
  } finally {
    cancel.dispose();
    await lease?.settle(driver?.abandonedWrite ?? null, agent.events, runId);
  }
}

