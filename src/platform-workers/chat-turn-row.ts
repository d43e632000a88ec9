/**
 * The chat turn object's row beside its log (SQLite in its storage): which turn it holds (so
 * its alarm knows what to resume), how many drives in a row ended with the turn still in flight
 * and nothing written, and why it was halted. Plain functions over `ctx.storage.sql`.
 * @module
 */

type Sql = SqlStorage;

/** The turn row's table. */
export const TURN_TABLE = 'polyloop_chat_turn';
/** The log table of `DurableObjectStore`. */
export const LOG_TABLE = 'polyloop_log';

/** The turn row: the turn's run id, its failed drives in a row (and the last sequence then), why it was halted. */
export type TurnRow = {
  readonly runId: string;
  readonly failures: number;
  readonly atSeq: number;
  readonly halted: string | null;
};

/** True when the object's storage holds `table` (asking creates nothing). */
export function hasTable(sql: Sql, table: string): boolean {
  return sql.exec(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?`, table).toArray().length > 0;
}

/** Create the turn table (idempotent). */
export function createTurnTable(sql: Sql): void {
  sql.exec(
    `CREATE TABLE IF NOT EXISTS ${TURN_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), run_id TEXT NOT NULL, ` +
      'failures INTEGER NOT NULL DEFAULT 0, at_seq INTEGER NOT NULL DEFAULT -1, halted TEXT)',
  );
}

/** Record the turn this object holds (once; the table must exist). */
export function rememberTurn(sql: Sql, runId: string): void {
  sql.exec(`INSERT OR IGNORE INTO ${TURN_TABLE} (id, run_id) VALUES (1, ?)`, runId);
}

/** The turn row, or null before a driver ran here. The table must exist. */
export function readTurnRow(sql: Sql): TurnRow | null {
  type Row = { run_id: string; failures: number; at_seq: number; halted: string | null };
  const row = sql.exec<Row>(`SELECT run_id, failures, at_seq, halted FROM ${TURN_TABLE} WHERE id = 1`).toArray()[0];
  if (row === undefined) return null;
  return { runId: row.run_id, failures: row.failures, atSeq: row.at_seq, halted: row.halted };
}

/**
 * Count a settled drive: one that left the turn in flight having written nothing since the last
 * such drive adds one, any other starts the count again. Returns the count.
 */
export function settleFailures(sql: Sql, drive: { readonly failed: boolean; readonly seq: number }): number {
  const row = readTurnRow(sql);
  const count = !drive.failed ? 0 : row !== null && row.atSeq === drive.seq ? row.failures + 1 : 1;
  sql.exec(`UPDATE ${TURN_TABLE} SET failures = ?, at_seq = ? WHERE id = 1`, count, drive.seq);
  return count;
}

/** Record that the object stopped resuming the turn, and why (its alarm is cleared by the caller). */
export function markTurnHalted(sql: Sql, why: string): void {
  sql.exec(`UPDATE ${TURN_TABLE} SET halted = ? WHERE id = 1`, why);
}
