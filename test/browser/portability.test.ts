/// <reference types="vite/client" />
/**
 * Cross-runtime portability (SPEC §10) in real Chromium: the logs FileStore wrote in Node and a
 * Durable Object wrote in workerd (checked in under test/fixtures/portability, read at build time)
 * are imported into IndexedDBStore and finished here; IndexedDB's own fixtures are still what it
 * writes today. With VITE_POLYLOOP_WRITE_FIXTURES=1 (`npm run fixtures:portability`) it rewrites
 * the chromium-* fixtures through the browser runner's file command.
 */
import { describe, expect, it } from 'vitest';
import { commands } from 'vitest/browser';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { CUTS, cutPoint, finishOn, fixtureName, fixtureOf, meaningOf, RUN_ID, RUNTIMES, uninterrupted } from '../portability/reference.ts';
import type { Cut, Runtime } from '../portability/reference.ts';
import { exportRun, importRun, InMemoryStore } from '../../src/core/index.ts';
import { freshDbName } from './idb-store.cases.ts';

const FIXTURES = import.meta.glob<string>('../fixtures/portability/*.ndjson', { query: '?raw', import: 'default', eager: true });
const WRITE_FIXTURES = import.meta.env['VITE_POLYLOOP_WRITE_FIXTURES'] === '1';

function fixture(runtime: Runtime, cut: Cut): string {
  const text = FIXTURES[`../fixtures/portability/${fixtureName(runtime, cut)}`];
  if (text === undefined) throw new Error(`no fixture ${fixtureName(runtime, cut)}: run npm run fixtures:portability`);
  return text;
}

/** The log IndexedDB leaves at the cut, exported in this page. */
async function chromiumLog(cut: Cut): Promise<string> {
  const { log } = await uninterrupted(new InMemoryStore());
  return fixtureOf(new IndexedDBStore({ dbName: freshDbName('portability') }), cut, cutPoint(log, cut));
}

describe('the portability law in Chromium (IndexedDBStore)', () => {
  it.runIf(WRITE_FIXTURES).each(CUTS)('writes the log IndexedDB leaves at the %s cut', async (cut) => {
    const ndjson = await chromiumLog(cut);
    const path = `test/fixtures/portability/${fixtureName('chromium', cut)}`;
    await commands.writeFile(path, ndjson);
    expect(await commands.readFile(path)).toBe(ndjson);
  });

  it.skipIf(WRITE_FIXTURES).each(CUTS)('IndexedDB still writes what its %s fixture says (timestamps and record minor aside)', async (cut) => {
    expect(meaningOf(await chromiumLog(cut))).toEqual(meaningOf(fixture('chromium', cut)));
  });

  const cases = RUNTIMES.filter((rt) => rt !== 'chromium').flatMap((rt) => CUTS.map((cut) => [rt, cut] as const));
  it.skipIf(WRITE_FIXTURES).each(cases)('the %s log at the %s cut, imported into IndexedDB, finishes as the uninterrupted run', async (runtime, cut) => {
    const { outcome: full } = await uninterrupted(new InMemoryStore());
    const effects: string[] = [];
    const outcome = await finishOn(new IndexedDBStore({ dbName: freshDbName('portability') }), fixture(runtime, cut), effects);
    expect(outcome).toEqual(full);
    // The fixture already holds the executed never notify: this half may re-run a safe lookup only.
    expect(effects.filter((e) => !e.startsWith('lookup:'))).toEqual([]);
  });

  it.skipIf(WRITE_FIXTURES).each(RUNTIMES.filter((rt) => rt !== 'chromium'))('IndexedDB exports each imported %s log as the same bytes', async (runtime) => {
    for (const cut of CUTS) {
      const store = new IndexedDBStore({ dbName: freshDbName('portability') });
      await importRun(store, RUN_ID, fixture(runtime, cut));
      expect(await exportRun(store, RUN_ID), cut).toBe(fixture(runtime, cut));
    }
  });
});
