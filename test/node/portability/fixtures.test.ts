/**
 * Cross-runtime portability (SPEC §10) from Node: the logs IndexedDB wrote in Chromium and a
 * Durable Object wrote in workerd (checked in under test/fixtures/portability) are imported into
 * each Node store and finished there; FileStore's own fixtures are still what it writes today.
 * With POLYLOOP_WRITE_FIXTURES=1 (`npm run fixtures:portability`) it rewrites the node-* fixtures.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readRunLog, decodeLog } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/file-store.ts';
import { CUTS, cutPoint, expectedOutcome, finishOn, fixtureOf, meaningOf, RUNTIMES, timelessNdjson, uninterrupted } from '../../portability/reference.ts';
import type { Cut } from '../../portability/reference.ts';
import { readFixture, WRITE_FIXTURES, writeFixture } from './fixture-files.ts';
import { freshStore, NODE_STORES, removeTempDirs, tempDir } from './stores.ts';

afterAll(removeTempDirs);

const STATES: Record<Cut, string> = { boundary: 'at_boundary:-', reinterpret: 'in_flight:reinterpret', replay: 'in_flight:replay_action' };

/** The log FileStore writes at a cut today. */
async function nodeFixture(cut: Cut): Promise<string> {
  const { log } = await uninterrupted(freshStore('memory'));
  return fixtureOf(new FileStore({ dir: tempDir() }), cut, cutPoint(log, cut));
}

describe.runIf(WRITE_FIXTURES)('writing the Node fixtures', () => {
  it.each(CUTS)('writes the log FileStore leaves at the %s cut', async (cut) => {
    const ndjson = await nodeFixture(cut);
    writeFixture('node', cut, ndjson);
    expect(readFixture('node', cut)).toBe(ndjson);
  });
});

describe.skipIf(WRITE_FIXTURES)('the checked-in fixtures, from Node', () => {
  it.each(CUTS)('every runtime left the %s cut in the same log, timestamps aside, in the state its name says', (cut) => {
    const logs = RUNTIMES.map((rt) => readFixture(rt, cut));
    for (const ndjson of logs) {
      const view = readRunLog(decodeLog(ndjson).records);
      expect(`${view.state}:${view.inFlight?.resolution ?? '-'}`).toBe(STATES[cut]);
      expect(timelessNdjson(ndjson)).toEqual(timelessNdjson(logs[0] as string));
    }
  });

  it.each(CUTS)('FileStore still writes what its %s fixture says (timestamps and record minor aside)', async (cut) => {
    expect(meaningOf(await nodeFixture(cut))).toEqual(meaningOf(readFixture('node', cut)));
  });

  const cases = RUNTIMES.filter((rt) => rt !== 'node').flatMap((rt) => CUTS.flatMap((cut) => NODE_STORES.map((to) => [rt, cut, to] as const)));
  it.each(cases)('the %s log at the %s cut, imported into %s, finishes as the uninterrupted run', async (runtime, cut, to) => {
    const { outcome: full } = await uninterrupted(freshStore('memory'));
    const ndjson = readFixture(runtime, cut);
    const effects: string[] = [];
    const outcome = await finishOn(freshStore(to), ndjson, effects);
    expect(outcome).toEqual(expectedOutcome(decodeLog(ndjson).records, full));
    expect(outcome).toEqual(full);
    // The fixture already holds the executed never notify: this half may re-run a safe lookup only.
    expect(effects.filter((e) => !e.startsWith('lookup:'))).toEqual([]);
  });
});
