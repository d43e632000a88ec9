/**
 * PolyLoop on Postgres — the `polyloop/postgres` entry: {@link PostgresStore} (run logs in two
 * tables, a lease that expires when its holder stops renewing it, fencing on every write) and
 * {@link migrate}, which creates and upgrades those tables. Takes the application's own
 * node-postgres pool; imports nothing from `pg` itself.
 *
 * @example
 * import pg from 'pg';
 * import { migrate, PostgresStore } from 'polyloop/postgres';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool);
 * const agent = defineAgent({ model, interpreter, store: new PostgresStore({ pool }), events, syntheticObservations });
 * @module
 */
export { PostgresStore } from './postgres-store.ts';
export type { PostgresStoreOptions } from './postgres-store.ts';
export { migrate } from './schema.ts';
export type { MigrateOptions } from './schema.ts';
export type { PgClientLike, PgPoolLike, PgQuery, PgResult } from './pg-types.ts';
// Not exported: DEFAULT_SCHEMA and SCHEMA_VERSION — the defaults migrate and PostgresStore apply.
// Not exported: lease.ts (takeLease, describeHolder) — reach the lease through PostgresStore.acquire.
