/** PostgresStore and migrate refuse an option they do not know, before touching the database. */
import { describe, it } from 'vitest';
import { migrate, PostgresStore } from '../../../src/platform-postgres/index.ts';
import type { PgPoolLike } from '../../../src/platform-postgres/index.ts';
import { expectUnknownOption } from '../../contract/unknown-option.ts';

/** A pool that fails the test if the store ever uses it. */
const untouched: PgPoolLike = {
  query: () => Promise.reject(new Error('the pool was used')),
  connect: () => Promise.reject(new Error('the pool was used')),
} as unknown as PgPoolLike;

describe('Postgres options', () => {
  it('new PostgresStore refuses a misspelt option', async () => {
    await expectUnknownOption(() => new PostgresStore({ pool: untouched, leasMs: 1000 } as never), 'leasMs', 'leaseMs');
    await expectUnknownOption(
      () => new PostgresStore({ pool: untouched, heartBeatMs: 100 } as never),
      'heartBeatMs',
      'heartbeatMs',
    );
  });

  it('migrate refuses a misspelt option', async () => {
    await expectUnknownOption(() => migrate(untouched, { schemas: 'x' } as never), 'schemas', 'schema');
  });
});
