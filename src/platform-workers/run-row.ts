/**
 * The run object's own rows beside the log (SQLite in its storage): the run row (its id, its
 * input as stored, whether a cancel was asked for, why it was halted) and the count of failed
 * drives in a row, with what a failed drive leads to. Plain functions over `ctx.storage.sql`.
 * @module
 */

import { isPolyLoopError } from '../core/index.ts';

/** The run row: what `POST /runs` stored, and what happened to the run outside its log. */
export type RunRow = {
  readonly runId: string;
  readonly input: string;
  readonly cancelRequested: boolean;
  readonly halted: string | null;
  /** A sub-agent's run: the run whose object drives it (docs/decisions/0069-sub-agents-on-workers.md); else null. */
  readonly parentRunId: string | null;
};

type Sql = SqlStorage;

const META = 'polyloop_run';
/**
 * Failed drives in a row and the last sequence number when the
 * latest one failed (a drive that wrote records made progress).
 */
const FAILURES = 'polyloop_drive_failures';
/** A sub-agent's run only: its parent's run id (a table of its own, so objects made before it need no migration). */
const PARENT = 'polyloop_parent';

/** True when the object's storage holds the run tables. */
export function hasRunTables(sql: Sql): boolean {
  return sql.exec(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?`, META).toArray().length > 0;
}

/** Create the run tables (idempotent). */
export function createRunTables(sql: Sql): void {
  sql.exec(
    `CREATE TABLE IF NOT EXISTS ${META} (id INTEGER PRIMARY KEY CHECK (id = 1), run_id TEXT NOT NULL, ` +
      'input TEXT NOT NULL, cancel_requested INTEGER NOT NULL DEFAULT 0, halted TEXT)',
  );
  sql.exec(
    `CREATE TABLE IF NOT EXISTS ${FAILURES} ` +
      '(id INTEGER PRIMARY KEY CHECK (id = 1), count INTEGER NOT NULL, at_seq INTEGER NOT NULL)',
  );
  sql.exec(`CREATE TABLE IF NOT EXISTS ${PARENT} (id INTEGER PRIMARY KEY CHECK (id = 1), run_id TEXT NOT NULL)`);
}

/** The run row, or null before one was written. The tables must exist. */
export function readRunRow(sql: Sql): RunRow | null {
  const row = sql
    .exec<{ run_id: string; input: string; cancel_requested: number; halted: string | null }>(
      `SELECT run_id, input, cancel_requested, halted FROM ${META} WHERE id = 1`,
    )
    .toArray()[0];
  if (row === undefined) return null;
  const parent = sql.exec<{ run_id: string }>(`SELECT run_id FROM ${PARENT} WHERE id = 1`).toArray()[0];
  return {
    runId: row.run_id,
    input: row.input,
    cancelRequested: row.cancel_requested === 1,
    halted: row.halted,
    parentRunId: parent?.run_id ?? null,
  };
}

/** Write the run row of a new run. */
export function insertRunRow(sql: Sql, runId: string, storedInput: string): void {
  sql.exec(`INSERT INTO ${META} (id, run_id, input) VALUES (1, ?, ?)`, runId, storedInput);
}

/** Write the run row of a sub-agent's run: no input of its own (its parent's object builds it), and its parent. */
export function insertChildRow(sql: Sql, runId: string, parentRunId: string): void {
  insertRunRow(sql, runId, 'null');
  sql.exec(`INSERT INTO ${PARENT} (id, run_id) VALUES (1, ?)`, parentRunId);
}

/** Record that a cancel was asked for (it outlives the instance). */
export function markCancelRequested(sql: Sql): void {
  sql.exec(`UPDATE ${META} SET cancel_requested = 1 WHERE id = 1`);
}

/** Record that the object gave up driving the run, and why. */
export function markHalted(sql: Sql, why: string): void {
  sql.exec(`UPDATE ${META} SET halted = ? WHERE id = 1`, why);
}

/** Forget why the run was halted: an upgrade lets it go on. */
export function clearHalted(sql: Sql): void {
  sql.exec(`UPDATE ${META} SET halted = NULL WHERE id = 1`);
}

/**
 * Count one failed drive at log sequence `seq`: consecutive with the previous one unless records were written since.
 */
export function countFailure(sql: Sql, seq: number): number {
  const row = sql
    .exec<{ count: number; at_seq: number }>(`SELECT count, at_seq FROM ${FAILURES} WHERE id = 1`)
    .toArray()[0];
  const count = row !== undefined && row.at_seq === seq ? row.count + 1 : 1;
  sql.exec(`INSERT OR REPLACE INTO ${FAILURES} (id, count, at_seq) VALUES (1, ?, ?)`, count, seq);
  return count;
}

/**
 * What {@link failedDrive} weighs: the error, the log's last
 * sequence number, and how many failures in a row halt the run.
 */
export type FailedDrive = { readonly error: unknown; readonly seq: number; readonly max: number };

/**
 * After a drive failed before its run ended: store failures and other non-library errors may be
 * transient, so they are counted and retried (`retry`: what to log) until `max` in a row without
 * progress; a library refusal (identity mismatch, invalid request, corrupt log …) will not heal
 * by retrying (`halt`: why).
 */
export function failedDrive(sql: Sql, drive: FailedDrive): { readonly retry: string } | { readonly halt: string } {
  const { error: e, seq, max } = drive;
  const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  if (isPolyLoopError(e) && e.code !== 'store_error') return { halt: what };
  const failures = countFailure(sql, seq);
  if (failures >= max) return { halt: `${failures} drives in a row failed without progress; last: ${what}` };
  return { retry: `interrupted (${failures} of ${max} failed drives in a row), the alarm will resume it: ${what}` };
}
