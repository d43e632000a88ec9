/**
 * The crash law of sub-agents (docs/design/laws.md#sub-agents) over IndexedDBStore in real
 * Chromium: a parent and the child its tool runs, both logs in one database (a fresh one per case),
 * crashed at every write of either run (lost, and landed) and resumed with the same replies, end as
 * the uninterrupted runs; each approved `never` note of the child happens exactly once.
 */
import { describe, expect, it } from 'vitest';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { SCENARIO_NAMES, subAgentsLaw, subAgentsLawProblems } from '../contract/sub-agents-law.ts';
import { freshDbName } from './idb-store.cases.ts';

describe('the crash law of sub-agents over IndexedDBStore (Chromium, a fresh database per case)', () => {
  it.each(SCENARIO_NAMES)(
    'ends the %s scenario crashed after every write of parent or child (lost, and landed) and resumed with the same replies as the uninterrupted run, both logs; each approved note exactly once',
    async (scenario) => {
      const stores: IndexedDBStore[] = [];
      const result = await subAgentsLaw({
        scenario,
        newStore: () => {
          const store = new IndexedDBStore({ dbName: freshDbName('sub-law') });
          stores.push(store);
          return store;
        },
      });
      await Promise.all(stores.map((s) => s.close()));
      expect(subAgentsLawProblems(result)).toEqual([]);
    },
    120_000,
  );
});
