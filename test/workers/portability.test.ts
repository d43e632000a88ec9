/// <reference types="vite/client" />
/**
 * The portability law (docs/design/laws.md#portability) in workerd, on DurableObjectStore: the
 * reference run (plain, and asking for an approval) crashed at every write on a Durable Object and
 * finished in memory, and the other way round, every request answered from the outside world; the
 * logs FileStore wrote in Node and IndexedDB wrote in Chromium (checked in under
 * test/fixtures/portability, read at build time), and every runtime's 1.0-era logs, imported into a
 * Durable Object and finished there.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { decodeLog, exportRun, importRun, InMemoryStore } from '../../src/core/index.ts';
import type { RunStore } from '../../src/core/index.ts';
import { DurableObjectStore } from '../../src/platform-workers/index.ts';
import {
  CUTS,
  expectedOfV10,
  finishDemands,
  fixtureName,
  notifies,
  RUNTIMES,
  stateOf,
  V10_CUTS,
  v10FixtureName,
  variantOf,
} from '../portability/cuts.ts';
import type { Cut, Runtime } from '../portability/cuts.ts';
import { cutRun, effectsProblem, finishOn, RUN_ID, uninterrupted, VARIANTS } from '../portability/reference.ts';

const FIXTURES = import.meta.glob<string>('../fixtures/portability/*.ndjson', {
  query: '?raw',
  import: 'default',
  eager: true,
});

function file(name: string): string {
  const text = FIXTURES[`../fixtures/portability/${name}`];
  if (text === undefined) throw new Error(`no fixture ${name}: run npm run fixtures:portability`);
  return text;
}

const fixture = (runtime: Runtime, cut: Cut): string => file(fixtureName(runtime, cut));

/** Run `fn` inside a fresh Durable Object, on a DurableObjectStore over its own storage. */
const inFreshObject = <R>(fn: (store: RunStore) => Promise<R>): Promise<R> =>
  runInDurableObject(env.RUNS.get(env.RUNS.newUniqueId()), (_o, state) => fn(new DurableObjectStore(state.storage)));

describe('the portability law in workerd (DurableObjectStore)', () => {
  const law = VARIANTS.flatMap((variant) => [false, true].map((lands) => [variant, lands] as const));
  it.each(law)(
    'the %s run crashed at every write on a Durable Object or in memory finishes on the other, the world answering, as the uninterrupted run (write lands before the crash: %s)',
    async (variant, landsBeforeThrow) => {
      const { outcome: full, writes } = await uninterrupted(new InMemoryStore(), variant);
      let resumed = 0;
      const answered: string[] = [];
      const states = new Set<string>();
      for (let k = 0; k < writes; k++) {
        for (const direction of ['object to memory', 'memory to object'] as const) {
          const effects: string[] = [];
          const cut = async (
            store: RunStore,
          ): Promise<{ log: Awaited<ReturnType<typeof cutRun>>; ndjson: string | null }> => {
            const log = await cutRun(store, k, landsBeforeThrow, effects, variant);
            return { log, ndjson: log.length === 0 ? null : await exportRun(store, RUN_ID) };
          };
          const { log, ndjson } =
            direction === 'object to memory' ? await inFreshObject(cut) : await cut(new InMemoryStore());
          if (ndjson === null) continue;
          const finish = (store: RunStore): ReturnType<typeof finishOn> => finishOn(store, ndjson, effects, variant);
          const finished =
            direction === 'object to memory' ? await finish(new InMemoryStore()) : await inFreshObject(finish);
          resumed++;
          states.add(stateOf(log));
          answered.push(...finished.answered);
          expect(finished.outcome, `${direction}, crash at write ${k}`).toEqual(full);
          expect(effectsProblem(effects, finished.outcome), `${direction}, crash at write ${k}`).toBeNull();
        }
      }
      expect(resumed).toBe(2 * (landsBeforeThrow ? writes : writes - 1));
      // Not vacuous: the notify in doubt at one cut per direction, settled by what really happened.
      expect(answered.filter((a) => a.startsWith('settle:'))).toEqual(
        Array(2).fill(landsBeforeThrow ? 'settle:retry' : 'settle:executed'),
      );
      expect(states).toContain('in_flight:settle');
      if (variant === 'approval') {
        expect(states).toContain('awaiting_input:await_input');
        if (landsBeforeThrow) expect(states).toContain('in_flight:apply_input');
        expect(answered).toContain('approval:approve');
      }
    },
  );

  const cases = RUNTIMES.filter((rt) => rt !== 'workerd').flatMap((rt) => CUTS.map((cut) => [rt, cut] as const));
  it.each(cases)(
    'the %s log at the %s cut, imported into a Durable Object, finishes as the uninterrupted run',
    async (runtime, cut) => {
      const { outcome: full } = await uninterrupted(new InMemoryStore(), variantOf(cut));
      const effects: string[] = [];
      const { outcome, answered } = await inFreshObject((store) =>
        finishOn(store, fixture(runtime, cut), effects, variantOf(cut)),
      );
      expect(outcome).toEqual(full);
      const demands = finishDemands(fixture(runtime, cut), cut);
      expect(answered).toEqual(demands.answered);
      // Safe lookups may run again; the never notify runs here only if the fixture had not run it.
      expect(notifies(effects)).toBe(demands.notifies);
    },
  );

  const v10 = RUNTIMES.flatMap((rt) => V10_CUTS.map((cut) => [rt, cut] as const));
  it.each(v10)(
    'the 1.0-era %s log at the %s cut, imported into a Durable Object, finishes as the uninterrupted run (the 1.0 steps without usage)',
    async (runtime, cut) => {
      const { outcome: full } = await uninterrupted(new InMemoryStore());
      const ndjson = file(v10FixtureName(runtime, cut));
      const effects: string[] = [];
      const { outcome, answered } = await inFreshObject((store) => finishOn(store, ndjson, effects));
      expect(outcome).toEqual(expectedOfV10(decodeLog(ndjson).records, full));
      expect(answered).toEqual([]);
      expect(notifies(effects)).toBe(0);
    },
  );

  it.each(RUNTIMES)(
    'a Durable Object exports each imported %s log, 1.1 or 1.0-era, as the same bytes',
    async (runtime) => {
      const roundTrip = (ndjson: string): Promise<string> =>
        inFreshObject(async (store) => {
          await importRun(store, RUN_ID, ndjson);
          return exportRun(store, RUN_ID);
        });
      for (const cut of CUTS) expect(await roundTrip(fixture(runtime, cut)), cut).toBe(fixture(runtime, cut));
      for (const cut of V10_CUTS) {
        const ndjson = file(v10FixtureName(runtime, cut));
        expect(await roundTrip(ndjson), `1.0 ${cut}`).toBe(ndjson);
      }
    },
  );
});
