/**
 * The run index: one Durable Object that lists the runs of a Worker (`GET /runs`), newest first.
 * Run objects report to it when a run is created or imported and whenever its status changes
 * (it ends, waits for input, goes on after a reply, halts); it never reads a run's log.
 * @module
 */
import { DurableObject } from 'cloudflare:workers';
import type { StopReason } from '../core/index.ts';
import type { RunList } from '../core/internal-entry.ts';
import type { RunStatus } from './run-status.ts';

/** The name of the one index object in its namespace (`idFromName`). */
export const RUN_INDEX_NAME = 'polyloop-run-index';

/** What a run object reports about its run. */
export type RunReport = {
  readonly runId: string;
  readonly status: RunStatus['status'];
  readonly stopReason: StopReason | null;
  readonly at: number;
};

// The bodies are written once, with the viewer's server, in src/core/http-bodies.ts.
export type { RunList, RunListItem } from '../core/internal-entry.ts';

/** A page request: at most `limit` runs listed before the run `cursor` points at (null: from the newest). */
export type RunListQuery = { readonly limit: number; readonly cursor: string | null };

const TABLE = 'polyloop_runs';

type Row = {
  ord: number;
  run_id: string;
  status: string;
  stop_reason: string | null;
  created_at: number;
  updated_at: number;
};

/**
 * The run index Durable Object. Export it under the `class_name` of your index binding (with a
 * `new_sqlite_classes` migration) and pass that binding as `index` to both `createRunObject` and
 * `createApp`. Its methods are called over RPC.
 */
export class RunIndex extends DurableObject {
  #ready = false;

  #sql(): SqlStorage {
    const sql = this.ctx.storage.sql;
    if (!this.#ready) {
      // `ord` (the rowid; no row is ever deleted, so it only grows) orders the listing: the order in which runs
      // were first reported, which for a run reported at its creation is the order of creation.
      sql.exec(
        `CREATE TABLE IF NOT EXISTS ${TABLE} ` +
          '(ord INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, status TEXT NOT NULL, stop_reason TEXT, ' +
          'created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)',
      );
      this.#ready = true;
    }
    return sql;
  }

  /**
   * Record a run's status: list it if it is new, else update it. Contract: idempotent; `ended` is
   * final (a late report of another status, e.g. from an instance that was replaced, is ignored);
   * durable when the promise resolves.
   */
  async record(report: RunReport): Promise<void> {
    this.#sql().exec(
      `INSERT INTO ${TABLE} (run_id, status, stop_reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, stop_reason = excluded.stop_reason, ` +
        `updated_at = excluded.updated_at
       WHERE ${TABLE}.status != 'ended'`,
      report.runId,
      report.status,
      report.stopReason,
      report.at,
      report.at,
    );
  }

  /**
   * A page of the listing, newest first. Contract: `query` is checked
   * by the caller (limit 1–100, a cursor of this index); read-only.
   */
  async list(query: RunListQuery): Promise<RunList> {
    const before = query.cursor === null ? Number.MAX_SAFE_INTEGER : Number(query.cursor);
    const rows = this.#sql()
      .exec<Row>(
        `SELECT ord, run_id, status, stop_reason, created_at, updated_at FROM ${TABLE} ` +
          'WHERE ord < ? ORDER BY ord DESC LIMIT ?',
        before,
        query.limit + 1,
      )
      .toArray();
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      runs: page.map((r) => ({
        runId: r.run_id,
        status: r.status as RunStatus['status'],
        stopReason: r.stop_reason as StopReason | null,
        createdAt: new Date(r.created_at).toISOString(),
        updatedAt: new Date(r.updated_at).toISOString(),
      })),
      nextCursor: rows.length > query.limit && last !== undefined ? String(last.ord) : null,
    };
  }
}
