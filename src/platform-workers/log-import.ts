/**
 * The checks of `POST /runs` with a `log` (SPEC §10) that must answer before anything is stored.
 * @module
 */
import { decodeRecord, defineAgent, identityMismatch, identitySnapshot, InMemoryStore, isPolyLoopError } from '../core/index.ts';
import type { AgentConfig, PolyLoopError, RunRequest } from '../core/index.ts';

/** The refusals of `importRun` that describe the log, not the store: each is a 400, and nothing was written. */
const REFUSALS: readonly string[] = ['corrupt_log', 'schema_version', 'invalid_request'];

/** True when `importRun` refused the log itself (torn, corrupt, foreign major, another run, empty). */
export function isImportRefusal(e: unknown): e is PolyLoopError {
  return isPolyLoopError(e) && REFUSALS.includes(e.code);
}

/**
 * Why the agent and request the factory built would not resume the run of `log` (the library's
 * `RunIdentityMismatchError`, as name and message), or null. Null too when the first line is not a
 * `run_started` of `request.runId`: `importRun` then names what is wrong with the log. The same
 * comparison `resume` makes first (`identityMismatch`), asked before anything is stored.
 */
export function identityRefusal(seams: Pick<AgentConfig, 'model' | 'interpreter' | 'syntheticObservations'>, request: RunRequest, log: string): string | null {
  const end = log.indexOf('\n');
  let started;
  try {
    started = decodeRecord(end < 0 ? log : log.slice(0, end));
  } catch {
    return null;
  }
  if (started.kind !== 'run_started' || started.runId !== request.runId) return null;
  // Only the params enter the snapshot; the store and sink are never used.
  const agent = defineAgent({ ...seams, store: new InMemoryStore(), events: { params: { sink: 'identity-check' }, deliver: () => undefined } });
  const mismatch = identityMismatch(request.runId, started, identitySnapshot(agent, request));
  return mismatch ? `${mismatch.name}: ${mismatch.message}` : null;
}
