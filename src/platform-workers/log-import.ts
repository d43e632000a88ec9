/**
 * The checks of `POST /runs` with a `log` (SPEC §10) that must answer before anything is stored.
 * @module
 */
import { decodeRecord, defineAgent, InMemoryStore, isPolyLoopError, RECORD_VERSION, resume } from '../core/index.ts';
import type { AgentConfig, PolyLoopError, RunEndedRecord, RunRequest } from '../core/index.ts';

/** The refusals of `importRun` that describe the log, not the store: each is a 400, and nothing was written. */
const REFUSALS: readonly string[] = ['corrupt_log', 'schema_version', 'invalid_request'];

/** True when `importRun` refused the log itself (torn, corrupt, foreign major, another run, empty). */
export function isImportRefusal(e: unknown): e is PolyLoopError {
  return isPolyLoopError(e) && REFUSALS.includes(e.code);
}

/**
 * Why the agent and request the factory built would not resume the run of `log` (the library's
 * `RunIdentityMismatchError`, as name and message), or null. Null too when the first line is not a
 * `run_started` of `request.runId`: `importRun` then names what is wrong with the log.
 *
 * The library's own comparison is asked, with no side effect: `resume` of an ended run checks
 * identity and returns the stored result, executing nothing — so it runs on a scratch store
 * holding only the log's `run_started` and a closing record. (A core export comparing a snapshot
 * with an agent and request would make the scratch run unnecessary; see decision 0020.)
 */
export async function identityRefusal(seams: Pick<AgentConfig, 'model' | 'interpreter' | 'syntheticObservations'>, request: RunRequest, log: string): Promise<string | null> {
  const end = log.indexOf('\n');
  let started;
  try {
    started = decodeRecord(end < 0 ? log : log.slice(0, end));
  } catch {
    return null;
  }
  if (started.kind !== 'run_started' || started.runId !== request.runId) return null;
  const scratch = new InMemoryStore();
  const closing: RunEndedRecord = {
    kind: 'run_ended',
    v: RECORD_VERSION,
    stopReason: 'cancelled',
    finalAnswer: null,
    steps: 0,
    validActions: 0,
    eventDeliveryFailures: 0,
    endedAt: started.startedAt,
  };
  await scratch.runStarted(request.runId, started);
  await scratch.runEnded(request.runId, closing);
  const agent = defineAgent({ ...seams, store: scratch, events: { params: { sink: 'identity-check' }, deliver: () => undefined } });
  try {
    await resume(agent, request);
    return null;
  } catch (e) {
    if (isPolyLoopError(e) && e.code === 'run_identity_mismatch') return `${e.name}: ${e.message}`;
    throw e;
  }
}
