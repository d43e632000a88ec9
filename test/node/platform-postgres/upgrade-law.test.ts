/**
 * The law of runs upgraded mid-way on PostgresStore over a real Postgres (a migrated schema per
 * case): crashed at every write of a story where a deploy upgrades the run awaiting input, at a
 * step boundary and with a `never` action in flight, and resumed (old code before the point, new
 * code with `{ upgrade }` after it) — no `never` action twice, one upgrade record, the steps
 * before it unchanged.
 */
import { describe, expect, it } from 'vitest';
import type { RunStore } from '../../../src/core/index.ts';
import { PostgresStore } from '../../../src/platform-postgres/index.ts';
import { UPGRADE_SCENARIOS, upgradeLaw, upgradeLawProblems } from '../../contract/upgrade-law.ts';
import { usePostgres } from '../../postgres/fixture.ts';

const db = usePostgres();

const METHODS = [
  'runStarted',
  'intent',
  'result',
  'resultAndIntent',
  'step',
  'runEnded',
  'inputRequest',
  'input',
  'upgrade',
  'readLog',
  'acquire',
] as const;

/**
 * A PostgresStore on a schema migrated in the background: the crash law builds its stores without
 * awaiting, and how many it needs is known only once the uninterrupted run has counted its writes.
 */
function storeOnFreshSchema(): RunStore {
  const ready = db.freshSchema().then((schema) => new PostgresStore({ pool: db.pool(), schema }));
  ready.catch(() => undefined); // awaited by the first call, which reports it
  const call =
    (name: (typeof METHODS)[number]) =>
    async (...args: unknown[]): Promise<unknown> => {
      const store = (await ready) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      return store[name]!(...args);
    };
  return Object.fromEntries(METHODS.map((m) => [m, call(m)])) as unknown as RunStore;
}

describe('the upgrade crash law on PostgresStore', () => {
  it.each(UPGRADE_SCENARIOS)(
    'a run upgraded %s, crashed at every write and resumed, keeps the law',
    async (scenario) => {
      const result = await upgradeLaw({ scenario, newStore: storeOnFreshSchema });
      expect(upgradeLawProblems(result)).toEqual([]);
    },
    120_000,
  );
});
