/**
 * The portability law's forks in workerd (test/portability/fork-law.ts, docs/design/laws.md#forks)
 * on DurableObjectStore: the reference run in a Durable Object forked at every step and at the
 * approval it awaits, into its own object and into memory, each fork also exported to memory: each
 * ends as the uninterrupted run with nothing before its fork point run again, and the source
 * exports the same bytes throughout. A fork imported into an object of its own is what the HTTP
 * route does, proven in test/workers/fork-route.test.ts.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../../src/core/index.ts';
import type { RunStore } from '../../src/core/index.ts';
import { forkLaw } from '../portability/fork-law.ts';
import { storeIn } from './store-in-object.ts';

const object = (): RunStore => storeIn(env.RUNS.get(env.RUNS.newUniqueId()));
const memory = (): RunStore => new InMemoryStore();

describe('the portability law of forks in workerd (DurableObjectStore)', () => {
  it('forks of a run in a Durable Object at every step and at a pending approval, in its object and into memory, end as the uninterrupted run with nothing before the fork point run again; the source unchanged', async () => {
    expect(await forkLaw({ make: object, other: memory })).toEqual([]);
  }, 60_000);
});
