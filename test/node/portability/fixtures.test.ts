/**
 * Cross-runtime portability (SPEC §10) from Node: the logs IndexedDB wrote in Chromium and a
 * Durable Object wrote in workerd (checked in under test/fixtures/portability) are imported into
 * each Node store and finished there; FileStore's own fixtures are still what it writes today;
 * the 1.0-era logs of every runtime still import and finish. With POLYLOOP_WRITE_FIXTURES=1
 * (`npm run fixtures:portability`) it rewrites the node-* fixtures (never the 1.0-era ones).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { decodeLog, exportRun, importRun } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/file-store.ts';
import { CUT_STATES, CUTS, expectedOfV10, finishDemands, fixtureOf, meaningOf, notifies, RUNTIMES, stateOf, timelessNdjson, V10_CUTS, variantOf } from '../../portability/cuts.ts';
import type { Cut } from '../../portability/cuts.ts';
import { finishOn, RUN_ID, uninterrupted } from '../../portability/reference.ts';
import { readFixture, readV10Fixture, WRITE_FIXTURES, writeFixture } from './fixture-files.ts';
import { freshStore, NODE_STORES, removeTempDirs, tempDir } from './stores.ts';

afterAll(removeTempDirs);

/** The log FileStore writes at a cut today. */
const nodeFixture = (cut: Cut): Promise<string> => fixtureOf(new FileStore({ dir: tempDir() }), cut);

const versions = (ndjson: string): string[] => [...new Set(ndjson.trimEnd().split('\n').map((l) => (JSON.parse(l) as { v: string }).v))];

describe.runIf(WRITE_FIXTURES)('writing the Node fixtures', () => {
  it.each(CUTS)('writes the log FileStore leaves at the %s cut', async (cut) => {
    const ndjson = await nodeFixture(cut);
    writeFixture('node', cut, ndjson);
    expect(readFixture('node', cut)).toBe(ndjson);
  });
});

describe.skipIf(WRITE_FIXTURES)('the checked-in fixtures, from Node', () => {
  it.each(CUTS)('every runtime left the %s cut in the same 1.1 log, timestamps aside, in the state its name says', (cut) => {
    const logs = RUNTIMES.map((rt) => readFixture(rt, cut));
    for (const ndjson of logs) {
      expect(stateOf(decodeLog(ndjson).records)).toBe(CUT_STATES[cut]);
      expect(versions(ndjson)).toEqual(['1.1']);
      expect(timelessNdjson(ndjson)).toEqual(timelessNdjson(logs[0] as string));
    }
  });

  it.each(V10_CUTS)('every runtime\'s 1.0-era log at the %s cut is of schema 1.0, the same timestamps aside, in the state its name says', (cut) => {
    const logs = RUNTIMES.map((rt) => readV10Fixture(rt, cut));
    for (const ndjson of logs) {
      expect(versions(ndjson)).toEqual(['1.0']);
      expect(stateOf(decodeLog(ndjson).records)).toBe(CUT_STATES[cut]);
      expect(timelessNdjson(ndjson)).toEqual(timelessNdjson(logs[0] as string));
    }
  });

  it.each(CUTS)('FileStore still writes what its %s fixture says (timestamps aside)', async (cut) => {
    expect(meaningOf(await nodeFixture(cut))).toEqual(meaningOf(readFixture('node', cut)));
  });

  const cases = RUNTIMES.filter((rt) => rt !== 'node').flatMap((rt) => CUTS.flatMap((cut) => NODE_STORES.map((to) => [rt, cut, to] as const)));
  it.each(cases)('the %s log at the %s cut, imported into %s, finishes as the uninterrupted run', async (runtime, cut, to) => {
    const { outcome: full } = await uninterrupted(freshStore('memory'), variantOf(cut));
    const ndjson = readFixture(runtime, cut);
    const effects: string[] = [];
    const { outcome, answered } = await finishOn(freshStore(to), ndjson, effects, variantOf(cut));
    expect(outcome).toEqual(full);
    const demands = finishDemands(ndjson, cut);
    expect(answered).toEqual(demands.answered);
    // Safe lookups may run again; the never notify runs here only if the fixture had not run it.
    expect(notifies(effects)).toBe(demands.notifies);
  });

  const v10 = RUNTIMES.flatMap((rt) => V10_CUTS.flatMap((cut) => NODE_STORES.map((to) => [rt, cut, to] as const)));
  it.each(v10)('the 1.0-era %s log at the %s cut, imported into %s, finishes as the uninterrupted run (the 1.0 steps without usage)', async (runtime, cut, to) => {
    const { outcome: full } = await uninterrupted(freshStore('memory'));
    const ndjson = readV10Fixture(runtime, cut);
    const effects: string[] = [];
    const { outcome, answered } = await finishOn(freshStore(to), ndjson, effects);
    expect(outcome).toEqual(expectedOfV10(decodeLog(ndjson).records, full));
    expect(answered).toEqual([]);
    expect(notifies(effects)).toBe(0);
  });

  it.each(NODE_STORES)('%s exports each imported 1.1 fixture of every runtime as the same bytes', async (kind) => {
    for (const runtime of RUNTIMES) {
      for (const cut of CUTS) {
        const store = freshStore(kind);
        await importRun(store, RUN_ID, readFixture(runtime, cut));
        expect(await exportRun(store, RUN_ID), `${runtime} ${cut}`).toBe(readFixture(runtime, cut));
      }
    }
  });

  it.each(NODE_STORES)('%s exports each imported 1.0-era log as the same records once decoded (decoding fills the 1.1 fields), and that export as itself', async (kind) => {
    for (const runtime of RUNTIMES) {
      for (const cut of V10_CUTS) {
        const ndjson = readV10Fixture(runtime, cut);
        const store = freshStore(kind);
        await importRun(store, RUN_ID, ndjson);
        const exported = await exportRun(store, RUN_ID);
        expect(decodeLog(exported).records, `${runtime} ${cut}`).toEqual(decodeLog(ndjson).records);
        const again = freshStore(kind);
        await importRun(again, RUN_ID, exported);
        expect(await exportRun(again, RUN_ID), `${runtime} ${cut}`).toBe(exported);
      }
    }
  });
});
