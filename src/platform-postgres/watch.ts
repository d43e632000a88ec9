/**
 * The stop check of {@link PostgresStore}: one statement, every {@link STOP_CHECK_MS}, reads the
 * row of every run a store instance drives, so a stop another process asked for reaches the
 * driver within a second, and a lease another driver took is known lost as soon, however long
 * the heartbeat's interval. One statement for all of an instance's runs, whatever their number;
 * no connection is kept for it (decision 0076: docs/decisions/0076-postgres-stop-and-lost-lease.md).
 * @module
 */
import type { HeldLease, LeaseContext } from './lease.ts';

/** How often the runs' rows are read: a stop is seen within this plus one round trip. */
export const STOP_CHECK_MS = 500;

/** Reads the rows of the runs in `held` while there are any. */
export class RunRowWatch {
  readonly #ctx: Pick<LeaseContext, 'pool' | 'schema'>;
  readonly #held: ReadonlyMap<string, HeldLease>;
  #timer: ReturnType<typeof setInterval> | undefined;
  #busy = false;

  constructor(ctx: Pick<LeaseContext, 'pool' | 'schema'>, held: ReadonlyMap<string, HeldLease>) {
    this.#ctx = ctx;
    this.#held = held;
  }

  /** A lease was added to `held`: check its row from now on. */
  wake(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#tick(), STOP_CHECK_MS);
    // The check alone must not keep a process alive.
    this.#timer.unref?.();
  }

  #tick(): void {
    if (this.#held.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    if (this.#busy) return;
    this.#busy = true;
    const watched = [...this.#held].filter(([, held]) => !held.lost);
    this.#check(watched)
      // A failed check (the database restarting) is tried again at the next tick.
      .catch(() => undefined)
      .finally(() => (this.#busy = false));
  }

  async #check(watched: ReadonlyArray<readonly [string, HeldLease]>): Promise<void> {
    if (watched.length === 0) return;
    const r = await this.#ctx.pool.query({
      name: `polyloop-watch-${this.#ctx.schema}`,
      text: `SELECT t.ord::int AS i, r.lease_holder, r.stop_request
             FROM unnest($1::text[]) WITH ORDINALITY AS t (id, ord)
             LEFT JOIN ${this.#ctx.schema}.runs r ON r.run_key = sha256(convert_to(t.id, 'UTF8'))`,
      values: [watched.map(([runId]) => JSON.stringify(runId))],
    });
    for (const row of r.rows) {
      const entry = watched[Number(row['i']) - 1];
      if (!entry) continue;
      const [runId, held] = entry;
      // Released (or released and taken again by this instance) while the statement ran: not this lease's row.
      if (this.#held.get(runId) !== held || held.lost) continue;
      if (row['lease_holder'] !== held.token) held.lose('another driver took the run over after its lease expired');
      else if (row['stop_request'] !== null && row['stop_request'] !== undefined)
        held.stopRequested(row['stop_request']);
    }
  }
}
