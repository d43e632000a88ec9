/**
 * The checks of `POST /runs` with a `log` (docs/http.md#post-runs) that must answer before anything
 * is stored.
 * @module
 */
import {
  decodeRecord,
  defineAgent,
  identityMismatch,
  identitySnapshot,
  InMemoryStore,
  isPolyLoopError,
} from '../core/index.ts';
import type { AgentConfig, LogRecord, PolyLoopError, RunRequest, UpgradeRecord } from '../core/index.ts';

/** The refusals of `importRun` that describe the log, not the store: each is a 400, and nothing was written. */
const REFUSALS: readonly string[] = ['corrupt_log', 'schema_version', 'invalid_request'];

/** True when `importRun` refused the log itself (torn, corrupt, foreign major, another run, empty). */
export function isImportRefusal(e: unknown): e is PolyLoopError {
  return isPolyLoopError(e) && REFUSALS.includes(e.code);
}

/** The record of one line, or null when it does not decode (`importRun` then names what is wrong). */
function recordOf(line: string): LogRecord | null {
  try {
    return decodeRecord(line);
  } catch {
    return null;
  }
}

/** The log's `upgrade` records, in order: only lines that name the kind are decoded. */
function upgradesOf(lines: readonly string[]): UpgradeRecord[] {
  const out: UpgradeRecord[] = [];
  for (const line of lines) {
    const record = line.includes('"upgrade"') ? recordOf(line) : null;
    if (record?.kind === 'upgrade') out.push(record);
  }
  return out;
}

/**
 * Why the agent and request the factory built would not resume the run of `log` (the library's
 * `RunIdentityMismatchError`, as name and message), or null. Null too when the first line is not a
 * `run_started` of `request.runId`: `importRun` then names what is wrong with the log. The same
 * comparison `resume` makes first (`identityMismatch`, against the identity the log's upgrades
 * put in force), asked before anything is stored.
 */
export function identityRefusal(
  seams: Pick<AgentConfig, 'model' | 'interpreter' | 'syntheticObservations'>,
  request: RunRequest,
  log: string,
): string | null {
  const lines = log.split('\n');
  const started = recordOf(lines[0] ?? '');
  if (started?.kind !== 'run_started' || started.runId !== request.runId) return null;
  // Only the params enter the snapshot; the store and sink are never used.
  const agent = defineAgent({
    ...seams,
    store: new InMemoryStore(),
    events: { params: { sink: 'identity-check' }, deliver: () => undefined },
  });
  const upgrades = upgradesOf(lines.slice(1));
  const mismatch = identityMismatch(request.runId, started, identitySnapshot(agent, request), upgrades);
  return mismatch ? `${mismatch.name}: ${mismatch.message}` : null;
}
