/**
 * The crash law of sub-agents (docs/design/laws.md#sub-agents) over DurableObjectStore in workerd:
 * a parent and the child its tool runs, both logs in one object's store (a fresh object per case),
 * crashed at every write of either run (lost, and landed) and resumed with the same replies, end as
 * the uninterrupted runs; each approved `never` note of the child happens exactly once.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { SCENARIO_NAMES, subAgentsLaw, subAgentsLawProblems } from '../contract/sub-agents-law.ts';
import { storeIn } from './store-in-object.ts';

describe('the crash law of sub-agents over DurableObjectStore (workerd, a fresh object per case)', () => {
  // The richest scenario only (a child that asks twice): every store runs all three in Node and
  // Chromium, and a fresh object per case makes each case here cost ten times as much.
  it.each(SCENARIO_NAMES.filter((s) => s === 'twice'))(
    'ends the %s scenario crashed after every write of parent or child (lost, and landed) and resumed with the same replies as the uninterrupted run, both logs; each approved note exactly once',
    async (scenario) => {
      const result = await subAgentsLaw({ scenario, newStore: () => storeIn(env.RUNS.get(env.RUNS.newUniqueId())) });
      expect(subAgentsLawProblems(result)).toEqual([]);
    },
    120_000,
  );
});
