/// <reference types="vite/client" />
/**
 * The portability law (SPEC §10) in workerd, on DurableObjectStore: the reference run crashed at
 * every write on a Durable Object and finished in memory, and the other way round; and the logs
 * FileStore wrote in Node and IndexedDB wrote in Chromium (checked in under
 * test/fixtures/portability, read at build time) imported into a Durable Object and finished there.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { exportRun, importRun, InMemoryStore } from '../../src/core/index.ts';
import type { RunStore } from '../../src/core/index.ts';
import { DurableObjectStore } from '../../src/platform-workers/index.ts';
import { CUTS, cutRun, effectsProblem, expectedOutcome, finishOn, fixtureName, RUN_ID, RUNTIMES, uninterrupted } from '../portability/reference.ts';
import type { Cut, Outcome, Runtime } from '../portability/reference.ts';

const FIXTURES = import.meta.glob<string>('../fixtures/portability/*.ndjson', { query: '?raw', import: 'default', eager: true });

function fixture(runtime: Runtime, cut: Cut): string {
  const text = FIXTURES[`../fixtures/portability/${fixtureName(runtime, cut)}`];
  if (text === undefined) throw new Error(`no fixture ${fixtureName(runtime, cut)}: run npm run fixtures:portability`);
  return text;
}

/** Run `fn` inside a fresh Durable Object, on a DurableObjectStore over its own storage. */
const inFreshObject = <R>(fn: (store: RunStore) => Promise<R>): Promise<R> =>
  runInDurableObject(env.RUNS.get(env.RUNS.newUniqueId()), (_o, state) => fn(new DurableObjectStore(state.storage)));

describe('the portability law in workerd (DurableObjectStore)', () => {
  it.each([false, true])('a run crashed at every write on a Durable Object or in memory finishes on the other as the uninterrupted run would (write lands before the crash: %s)', async (landsBeforeThrow) => {
    const { outcome: full, writes } = await uninterrupted(new InMemoryStore());
    let resumed = 0;
    for (let k = 0; k < writes; k++) {
      for (const direction of ['object to memory', 'memory to object'] as const) {
        const effects: string[] = [];
        const cut = async (store: RunStore): Promise<{ log: Awaited<ReturnType<typeof cutRun>>; ndjson: string | null }> => {
          const log = await cutRun(store, k, landsBeforeThrow, effects);
          return { log, ndjson: log.length === 0 ? null : await exportRun(store, RUN_ID) };
        };
        const { log, ndjson } = direction === 'object to memory' ? await inFreshObject(cut) : await cut(new InMemoryStore());
        if (ndjson === null) continue;
        const finish = (store: RunStore): Promise<Outcome> => finishOn(store, ndjson, effects);
        const outcome = direction === 'object to memory' ? await finish(new InMemoryStore()) : await inFreshObject(finish);
        resumed++;
        expect(outcome, `${direction}, crash at write ${k}`).toEqual(expectedOutcome(log, full));
        expect(effectsProblem(effects, outcome), `${direction}, crash at write ${k}`).toBeNull();
      }
    }
    expect(resumed).toBe(2 * (landsBeforeThrow ? writes : writes - 1));
  });

  const cases = RUNTIMES.filter((rt) => rt !== 'workerd').flatMap((rt) => CUTS.map((cut) => [rt, cut] as const));
  it.each(cases)('the %s log at the %s cut, imported into a Durable Object, finishes as the uninterrupted run', async (runtime, cut) => {
    const { outcome: full } = await uninterrupted(new InMemoryStore());
    const effects: string[] = [];
    const outcome = await inFreshObject((store) => finishOn(store, fixture(runtime, cut), effects));
    expect(outcome).toEqual(full);
    // The fixture already holds the executed never notify: this half may re-run a safe lookup only.
    expect(effects.filter((e) => !e.startsWith('lookup:'))).toEqual([]);
  });

  it.each(RUNTIMES.filter((rt) => rt !== 'workerd'))('a Durable Object exports each imported %s log as the same bytes', async (runtime) => {
    for (const cut of CUTS) {
      const ndjson = fixture(runtime, cut);
      const exported = await inFreshObject(async (store) => {
        await importRun(store, RUN_ID, ndjson);
        return exportRun(store, RUN_ID);
      });
      expect(exported, cut).toBe(ndjson);
    }
  });
});
