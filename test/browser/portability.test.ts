/// <reference types="vite/client" />
/**
 * Cross-runtime portability (docs/design/run-log.md#portability) in real Chromium: the logs
 * FileStore wrote in Node and a Durable Object wrote in workerd (checked in under
 * test/fixtures/portability, read at build time) are imported into IndexedDBStore and finished here
 * — including a run waiting for an approval and one whose approval landed without what follows —
 * and the 1.0-era logs of every runtime still import and finish; IndexedDB's own fixtures are still
 * what it writes today. With VITE_POLYLOOP_WRITE_FIXTURES=1 (`npm run fixtures:portability`) it
 * rewrites the chromium-* fixtures through the browser runner's file command.
 */
import { describe, expect, it } from 'vitest';
import { commands } from 'vitest/browser';
import { decodeLog, exportRun, importRun, InMemoryStore } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import {
  CUTS,
  expectedOfV10,
  finishDemands,
  fixtureName,
  fixtureOf,
  meaningOf,
  notifies,
  RUNTIMES,
  V10_CUTS,
  v10FixtureName,
  variantOf,
} from '../portability/cuts.ts';
import type { Cut, Runtime } from '../portability/cuts.ts';
import { finishOn, RUN_ID, uninterrupted } from '../portability/reference.ts';
import { freshDbName } from './idb-store.cases.ts';

const FIXTURES = import.meta.glob<string>('../fixtures/portability/*.ndjson', {
  query: '?raw',
  import: 'default',
  eager: true,
});
const WRITE_FIXTURES = import.meta.env['VITE_POLYLOOP_WRITE_FIXTURES'] === '1';

function file(name: string): string {
  const text = FIXTURES[`../fixtures/portability/${name}`];
  if (text === undefined) throw new Error(`no fixture ${name}: run npm run fixtures:portability`);
  return text;
}

const fixture = (runtime: Runtime, cut: Cut): string => file(fixtureName(runtime, cut));
const idb = (): IndexedDBStore => new IndexedDBStore({ dbName: freshDbName('portability') });

describe('the portability law in Chromium (IndexedDBStore)', () => {
  it.runIf(WRITE_FIXTURES).each(CUTS)('writes the log IndexedDB leaves at the %s cut', async (cut) => {
    const ndjson = await fixtureOf(idb(), cut);
    const path = `test/fixtures/portability/${fixtureName('chromium', cut)}`;
    await commands.writeFile(path, ndjson);
    expect(await commands.readFile(path)).toBe(ndjson);
  });

  it.skipIf(WRITE_FIXTURES).each(CUTS)(
    'IndexedDB still writes what its %s fixture says (timestamps aside)',
    async (cut) => {
      expect(meaningOf(await fixtureOf(idb(), cut))).toEqual(meaningOf(fixture('chromium', cut)));
    },
  );

  const cases = RUNTIMES.filter((rt) => rt !== 'chromium').flatMap((rt) => CUTS.map((cut) => [rt, cut] as const));
  it.skipIf(WRITE_FIXTURES).each(cases)(
    'the %s log at the %s cut, imported into IndexedDB, finishes as the uninterrupted run',
    async (runtime, cut) => {
      const { outcome: full } = await uninterrupted(new InMemoryStore(), variantOf(cut));
      const effects: string[] = [];
      const { outcome, answered } = await finishOn(idb(), fixture(runtime, cut), effects, variantOf(cut));
      expect(outcome).toEqual(full);
      const demands = finishDemands(fixture(runtime, cut), cut);
      expect(answered).toEqual(demands.answered);
      // Safe lookups may run again; the never notify runs here only if the fixture had not run it.
      expect(notifies(effects)).toBe(demands.notifies);
    },
  );

  const v10 = RUNTIMES.flatMap((rt) => V10_CUTS.map((cut) => [rt, cut] as const));
  it.skipIf(WRITE_FIXTURES).each(v10)(
    'the 1.0-era %s log at the %s cut, imported into IndexedDB, finishes as the uninterrupted run (the 1.0 steps without usage)',
    async (runtime, cut) => {
      const { outcome: full } = await uninterrupted(new InMemoryStore());
      const ndjson = file(v10FixtureName(runtime, cut));
      const effects: string[] = [];
      const { outcome, answered } = await finishOn(idb(), ndjson, effects);
      expect(outcome).toEqual(expectedOfV10(decodeLog(ndjson).records, full));
      expect(answered).toEqual([]);
      expect(notifies(effects)).toBe(0);
    },
  );

  it.skipIf(WRITE_FIXTURES).each(RUNTIMES)(
    'IndexedDB exports each imported %s log, 1.1 or 1.0-era, as the same bytes',
    async (runtime) => {
      for (const cut of CUTS) {
        const store = idb();
        await importRun(store, RUN_ID, fixture(runtime, cut));
        expect(await exportRun(store, RUN_ID), cut).toBe(fixture(runtime, cut));
      }
      for (const cut of V10_CUTS) {
        const ndjson = file(v10FixtureName(runtime, cut));
        const store = idb();
        await importRun(store, RUN_ID, ndjson);
        expect(await exportRun(store, RUN_ID), `1.0 ${cut}`).toBe(ndjson);
      }
    },
  );
});
