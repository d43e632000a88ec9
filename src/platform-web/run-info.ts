/**
 * How {@link IndexedDBStore} reads what it stored: the core decoder over a run's record texts, and
 * the run as `listRuns` lists it.
 * @module
 */
import { CorruptLogError, decodeLog, isPolyLoopError, readRunLog } from '../core/index.ts';
import type { LogRecord, RunLogState } from '../core/index.ts';

/**
 * One run as its log reads (through `readRunLog`, the one reader of a log), for a page that lists
 * runs on reopen.
 */
export type StoredRunInfo = {
  readonly runId: string;
  /** Number of records in its log. */
  readonly records: number;
  /** What `readRunLog` says of its log; null when the log cannot be read (see `error`). */
  readonly state: RunLogState | null;
  /** `state === 'ended'`: its `run_ended` record landed and the log is sound. */
  readonly ended: boolean;
  /** Completed steps (`readRunLog`'s `steps`); 0 when the log cannot be read. */
  readonly steps: number;
  /** Why the log cannot be read (the `CorruptLogError` or `SchemaVersionError` message), else null. */
  readonly error: string | null;
};

/** How a `CorruptLogError` names a run's log in a database. */
export const storedSource = (dbName: string, runId: string): string => `indexeddb:${dbName}/${runId}`;

/**
 * A run's stored record texts decoded by the core decoder. A transaction lands whole, so a record
 * that is not JSON was damaged, never torn: `CorruptLogError`, wherever it sits.
 */
export function decodeStored(dbName: string, runId: string, texts: readonly string[]): readonly LogRecord[] {
  const source = storedSource(dbName, runId);
  const { records, tornLine } = decodeLog(texts, { source });
  if (tornLine !== null) throw new CorruptLogError(tornLine, 'not valid JSON', { source });
  return records;
}

/** A run as `listRuns` lists it: what `readRunLog` reads of its log, or why it cannot. */
export function runInfo(dbName: string, runId: string, texts: readonly string[]): StoredRunInfo {
  try {
    const view = readRunLog(decodeStored(dbName, runId, texts));
    return {
      runId,
      records: texts.length,
      state: view.state,
      ended: view.state === 'ended',
      steps: view.steps,
      error: null,
    };
  } catch (e) {
    // One damaged log must not hide the others from a page offering "Resume"; anything that is
    // not a log error is a bug and propagates.
    if (!isPolyLoopError(e, 'corrupt_log') && !isPolyLoopError(e, 'schema_version')) throw e;
    return { runId, records: texts.length, state: null, ended: false, steps: 0, error: e.message };
  }
}
