/**
 * The crash law of several calls a step (docs/design/laws.md) over DurableObjectStore in workerd:
 * a three-call and a four-call step (never calls, approvals, a denial, an answer), crashed at every
 * write (a fresh Durable Object per case) and resumed with the same replies, end as the
 * uninterrupted run; each never call runs exactly once, the denied one never.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { severalCallsLaw, severalCallsLawProblems } from '../contract/several-calls-law.ts';
import { storeIn } from './store-in-object.ts';

describe('the crash law of several calls a step over DurableObjectStore (workerd, a fresh object per case)', () => {
  it('ends every case crashed at each write and resumed with the same replies as the uninterrupted run; each never call exactly once, the denied one never', async () => {
    const result = await severalCallsLaw({ newStore: () => storeIn(env.RUNS.get(env.RUNS.newUniqueId())) });
    expect(severalCallsLawProblems(result)).toEqual([]);
  }, 120_000);
});
