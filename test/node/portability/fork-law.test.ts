/**
 * The portability law's forks among the stores Node has (test/portability/fork-law.ts): the
 * reference run forked at every step of its finished run and at the approval it awaits, into its
 * own store and into the next kind (memory → file → IndexedDB over fake-indexeddb → memory), each
 * fork exported to that kind too: every fork ends as the uninterrupted run, nothing before its
 * fork point runs again, and the source exports the same bytes throughout. And the law can fail.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { exportRun, importRun, InMemoryStore } from '../../../src/core/index.ts';
import { forkLaw } from '../../portability/fork-law.ts';
import type { Fork } from '../../portability/fork-law.ts';
import { freshStore, NODE_STORES, removeTempDirs } from './stores.ts';

afterAll(removeTempDirs);

const next = (i: number) => NODE_STORES[(i + 1) % NODE_STORES.length] as (typeof NODE_STORES)[number];

describe('the portability law of forks among Node stores', () => {
  it.each(NODE_STORES.map((kind, i) => [kind, next(i)] as const))(
    'forks of a run on %s at every step and at a pending approval, in its store and into %s, end as the uninterrupted run with nothing before the fork point run again; the source unchanged',
    async (from, to) => {
      expect(await forkLaw({ make: () => freshStore(from), other: () => freshStore(to) })).toEqual([]);
    },
  );

  it('the law can fail: a fork that starts the run over runs the tools before its fork point again', async () => {
    const startOver: Fork = async (store, runId, { atStep, newRunId, into }) => {
      const [started] = lines(await exportRun(store, runId));
      const head = JSON.parse(started as string) as Record<string, unknown>;
      const ndjson = `${JSON.stringify({ ...head, runId: newRunId, forkedFrom: { runId, atStep } })}\n`;
      await importRun(into ?? store, newRunId, ndjson);
    };
    const problems = await forkLaw({
      make: () => new InMemoryStore(),
      other: () => new InMemoryStore(),
      fork: startOver,
    });
    expect(problems.some((p) => /step 3, same store: the fork ran \["lookup:Paris","notify:ops"/.test(p))).toBe(true);
    expect(problems.some((p) => /the fork's records are not the source's before step 3/.test(p))).toBe(true);
  });
});

const lines = (ndjson: string): string[] => ndjson.split('\n').filter((l) => l !== '');
