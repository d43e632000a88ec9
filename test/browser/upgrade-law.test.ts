/**
 * The law of runs upgraded mid-way over IndexedDBStore in real Chromium (a fresh database per
 * case): crashed at every write of a story where a deploy upgrades the run awaiting input, at a
 * step boundary and with a `never` action in flight, and resumed (old code before the point, new
 * code with `{ upgrade }` after it) — no `never` action twice, one upgrade record, the steps
 * before it unchanged.
 */
import { describe, expect, it } from 'vitest';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { UPGRADE_SCENARIOS, upgradeLaw, upgradeLawProblems } from '../contract/upgrade-law.ts';
import { freshDbName } from './idb-store.cases.ts';

describe('the upgrade crash law over IndexedDBStore in Chromium', () => {
  it.each(UPGRADE_SCENARIOS)(
    'a run upgraded %s, crashed at every write and resumed, keeps the law',
    async (scenario) => {
      const stores: IndexedDBStore[] = [];
      const result = await upgradeLaw({
        scenario,
        newStore: () => {
          const store = new IndexedDBStore({ dbName: freshDbName('upgrade') });
          stores.push(store);
          return store;
        },
      });
      await Promise.all(stores.map((s) => s.close()));
      expect(upgradeLawProblems(result)).toEqual([]);
    },
    120_000,
  );
});
