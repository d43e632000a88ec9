/**
 * The Postgres schema of {@link PostgresStore}, created and upgraded by an explicit `migrate()`.
 *
 * Version history (each version applied in one transaction, so a migration lands whole or not
 * at all; concurrent `migrate()` calls are serialized by a transaction-level advisory lock):
 * - 1: `runs` (one row per run: `run_key` = sha256 of the run id's JSON text, the readable
 *   `run_id`, the next sequence number, the lease: holder token, owner, expiry, epoch) and
 *   `records` (`run_key`, `seq` from 0, `run_id`, `kind`, `record` = the line exactly as the run's
 *   `LogCodec` writes it, `written_at`); a hash index on `run_id` of each for readers that query by the id.
 * - 2: `runs.stop_request` (the stop a person asked for, as JSON text `{"reason":…}`, read by the
 *   lease holder's check, heartbeat and writes) and `runs.stop_requested_at`. Both nullable
 *   columns added in place: no table is rewritten, the runs of version 1 keep working, and a store
 *   of a version-1 library goes on working on a version-2 database (it never names them).
 * @module
 */
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import type { PgPoolLike } from './pg-types.ts';

/** The schema version this library writes and reads. */
export const SCHEMA_VERSION = 2;

/** The default Postgres schema (namespace) of the tables. */
export const DEFAULT_SCHEMA = 'polyloop';

/** A Postgres identifier as the store accepts it: plain, so quoting it is never ambiguous. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema name, checked and quoted; throws `TypeError` for anything but a plain identifier. */
export function quotedSchema(schema: string | undefined): string {
  const name = schema ?? DEFAULT_SCHEMA;
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new TypeError(
      'polyloop/postgres: schema must be a lower-case identifier (a-z, 0-9, _; at most 63), ' +
        `got ${JSON.stringify(name)}`,
    );
  }
  return `"${name}"`;
}

/** The statements of each version, in order. */
function migrations(s: string): ReadonlyArray<readonly string[]> {
  return [
    [
      `CREATE TABLE ${s}.runs (
        run_key bytea PRIMARY KEY,
        run_id text NOT NULL,
        next_seq integer NOT NULL DEFAULT 0,
        lease_holder text,
        lease_owner text,
        lease_expires_at timestamptz,
        lease_epoch bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE TABLE ${s}.records (
        run_key bytea NOT NULL REFERENCES ${s}.runs (run_key),
        seq integer NOT NULL,
        run_id text NOT NULL,
        kind text NOT NULL,
        record text NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_key, seq)
      )`,
      // Hash indexes: a run id may be longer than a btree entry can hold.
      `CREATE INDEX runs_run_id ON ${s}.runs USING hash (run_id)`,
      `CREATE INDEX records_run_id ON ${s}.records USING hash (run_id)`,
    ],
    [`ALTER TABLE ${s}.runs ADD COLUMN stop_request text, ADD COLUMN stop_requested_at timestamptz`],
  ];
}

/** Options of {@link migrate}. */
export type MigrateOptions = {
  /** The Postgres schema (namespace) of the tables; default `polyloop`. Created if missing. */
  readonly schema?: string;
};

const MIGRATE_OPTIONS: OptionKeys<MigrateOptions> = { schema: true };

/**
 * Create or upgrade PolyLoop's tables to {@link SCHEMA_VERSION}. Idempotent and safe to call from
 * several processes at once; call it at deploy time or at start-up, before the first store use.
 *
 * Contract: resolves with the version the database is at; each version lands in its own
 * transaction; rejects (writing nothing of the failing version) on any database error, and with
 * an `Error` naming both versions when the database was migrated by a newer library.
 *
 * @example
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool);
 */
export async function migrate(pool: PgPoolLike, opts: MigrateOptions = {}): Promise<number> {
  checkOptionKeys(opts, MIGRATE_OPTIONS, 'migrate');
  const s = quotedSchema(opts.schema);
  const client = await pool.connect();
  let failed = false;
  try {
    await client.query({ text: 'BEGIN' });
    // One migrator at a time per database and schema; the lock ends with the transaction.
    await client.query({ text: `SELECT pg_advisory_xact_lock(hashtext($1))`, values: [`polyloop.migrate.${s}`] });
    await client.query({ text: `CREATE SCHEMA IF NOT EXISTS ${s}` });
    await client.query({
      text:
        `CREATE TABLE IF NOT EXISTS ${s}.schema_versions ` +
        '(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    });
    const found = await client.query({ text: `SELECT coalesce(max(version), 0) AS v FROM ${s}.schema_versions` });
    const at = Number(found.rows[0]?.['v'] ?? 0);
    if (at > SCHEMA_VERSION)
      throw new Error(
        `polyloop/postgres: the database schema ${s} is at version ${at}, ` +
          `newer than this library's ${SCHEMA_VERSION}; upgrade polyloop`,
      );
    const steps = migrations(s);
    for (let v = at + 1; v <= SCHEMA_VERSION; v++) {
      for (const text of steps[v - 1] ?? []) await client.query({ text });
      await client.query({ text: `INSERT INTO ${s}.schema_versions (version) VALUES ($1)`, values: [v] });
    }
    await client.query({ text: 'COMMIT' });
    return SCHEMA_VERSION;
  } catch (e) {
    failed = true;
    // The connection may be gone already; the error that matters is the first one.
    await client.query({ text: 'ROLLBACK' }).catch(() => undefined);
    throw e;
  } finally {
    client.release(failed ? true : undefined);
  }
}
