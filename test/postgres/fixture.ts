/**
 * One Postgres server per test file (started in `beforeAll`, stopped in `afterAll`), a pool on
 * it, and fresh stores: each in a schema of its own, so every case starts from empty tables.
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { migrate, PostgresStore } from '../../src/platform-postgres/index.ts';
import type { PostgresStoreOptions } from '../../src/platform-postgres/index.ts';
import { startPostgres } from './server.ts';
import type { PgServer } from './server.ts';

/** What a Postgres test file gets. */
export type PgFixture = {
  readonly server: () => PgServer;
  readonly pool: () => pg.Pool;
  /** A new pool on the server (ended with the file). */
  readonly newPool: () => pg.Pool;
  /** A migrated, empty schema's name. */
  readonly freshSchema: () => Promise<string>;
  /** A store on a fresh schema (or on `schema`, to share one between stores). */
  readonly freshStore: (
    opts?: Omit<PostgresStoreOptions, 'pool'> & { readonly pool?: pg.Pool },
  ) => Promise<PostgresStore>;
};

let schemas = 0;

/** Start the server for this file; call at the top level of a test file. */
export function usePostgres(): PgFixture {
  let server: PgServer | null = null;
  const pools: pg.Pool[] = [];
  const newPool = (): pg.Pool => {
    const pool = new pg.Pool({ connectionString: server!.url, max: 8 });
    // A restart drops idle connections: node-postgres reports each here; the next query reconnects.
    pool.on('error', () => undefined);
    pools.push(pool);
    return pool;
  };
  beforeAll(async () => {
    server = await startPostgres();
    newPool();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(
      pools
        .splice(0)
        .filter((p) => !p.ended)
        .map((p) => p.end()),
    );
    await server?.stop();
  }, 60_000);
  const pool = (): pg.Pool => pools[0]!;
  const freshSchema = async (): Promise<string> => {
    const schema = `t${process.pid}_${++schemas}`;
    await migrate(pool(), { schema });
    return schema;
  };
  return {
    server: () => server!,
    pool,
    newPool,
    freshSchema,
    freshStore: async (opts = {}) =>
      new PostgresStore({ ...opts, pool: opts.pool ?? pool(), schema: opts.schema ?? (await freshSchema()) }),
  };
}
