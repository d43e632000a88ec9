/**
 * The portability law's forks in real Chromium (test/portability/fork-law.ts,
 * docs/design/laws.md#forks): the reference run on IndexedDBStore forked at every step and at the
 * approval it awaits, into its own database and into memory — and a run in memory forked into
 * IndexedDB — each fork ends as the uninterrupted run with nothing before its fork point run again,
 * and the source exports the same bytes throughout.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { forkLaw } from '../portability/fork-law.ts';
import { freshDbName } from './idb-store.cases.ts';

const stores: IndexedDBStore[] = [];
const idb = (): IndexedDBStore => {
  const store = new IndexedDBStore({ dbName: freshDbName('fork-law') });
  stores.push(store);
  return store;
};
const KINDS = { IndexedDB: idb, memory: (): InMemoryStore => new InMemoryStore() };

describe('the portability law of forks in Chromium (IndexedDBStore)', () => {
  it.each([
    ['IndexedDB', 'memory'],
    ['memory', 'IndexedDB'],
  ] as const)(
    'forks of a run in %s at every step and at a pending approval, in its store and into %s, end as the uninterrupted run with nothing before the fork point run again; the source unchanged',
    async (from, to) => {
      try {
        expect(await forkLaw({ make: KINDS[from], other: KINDS[to] })).toEqual([]);
      } finally {
        await Promise.all(stores.splice(0).map((s) => s.close()));
      }
    },
  );
});
