/**
 * How {@link IndexedDBStore} reads what it stored: the core decoder over a run's record texts, and
 * the run as `listRuns` lists it.
 * @module
 */
import { isPolyLoopError } from '../core/index.ts';
import type { RunLogState } from '../core/index.ts';
import { committedLines, readRunLogLines } from '../core/internal-entry.ts';

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
 * A run as `listRuns` lists it: what `readRunLog` reads of its log, or why it cannot. Its texts are
 * read as `IndexedDBStore.readLogLines` gives them: a transaction lands whole, so a last one that is
 * not JSON was damaged, never torn.
 */
export function runInfo(dbName: string, runId: string, texts: readonly string[]): StoredRunInfo {
  try {
    const { lines, source } = committedLines(texts, storedSource(dbName, runId), 'not valid JSON');
    const { view } = readRunLogLines(lines, source);
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
