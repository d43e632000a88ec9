/**
 * The law of runs upgraded mid-way over DurableObjectStore in workerd (a fresh Durable Object per
 * case): crashed at every write of a story where a deploy upgrades the run awaiting input, at a
 * step boundary and with a `never` action in flight, and resumed (old code before the point, new
 * code with `{ upgrade }` after it) — no `never` action twice, one upgrade record, the steps
 * before it unchanged.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { UPGRADE_SCENARIOS, upgradeLaw, upgradeLawProblems } from '../contract/upgrade-law.ts';
import { storeIn } from './store-in-object.ts';

describe('the upgrade crash law over DurableObjectStore (workerd, a fresh object per case)', () => {
  it.each(UPGRADE_SCENARIOS)(
    'a run upgraded %s, crashed at every write and resumed, keeps the law',
    async (scenario) => {
      const result = await upgradeLaw({ scenario, newStore: () => storeIn(env.RUNS.get(env.RUNS.newUniqueId())) });
      expect(upgradeLawProblems(result)).toEqual([]);
    },
    120_000,
  );
});
