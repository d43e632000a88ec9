/**
 * The part of node-postgres (`pg`) the store uses, as structural types: a `pg.Pool` fits them,
 * and so does any pool with the same calls, so this entry imports nothing from `pg` and its
 * types name no third-party type.
 * @module
 */

/** One parameterised statement; `name` makes it a prepared statement on each connection. */
export type PgQuery = { readonly text: string; readonly values?: readonly unknown[]; readonly name?: string };

/** What a statement returns. */
export type PgResult = { readonly rows: ReadonlyArray<Record<string, unknown>>; readonly rowCount: number | null };

/** A checked-out connection (`pg.PoolClient`). */
export type PgClientLike = {
  query(query: PgQuery): Promise<PgResult>;
  /** Give the connection back; a truthy argument destroys it (after an error mid-transaction). */
  release(destroy?: boolean | Error): void;
};

/** A connection pool (`pg.Pool`). */
export type PgPoolLike = {
  query(query: PgQuery): Promise<PgResult>;
  connect(): Promise<PgClientLike>;
};
