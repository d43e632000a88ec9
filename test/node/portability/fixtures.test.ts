/**
 * Cross-runtime portability (docs/design/run-log.md#portability) from Node: the logs IndexedDB
 * wrote in Chromium and a Durable Object wrote in workerd (checked in under
 * test/fixtures/portability) are imported into each Node store and finished there; FileStore's own
 * fixtures are still what it writes today; the 1.0-era logs of every runtime still import and
 * finish; a resume by run id of any of them (they predate stored requests) is refused, and they
 * still finish resumed by request. With POLYLOOP_WRITE_FIXTURES=1 (`npm run fixtures:portability`)
 * it rewrites the node-* fixtures (never the 1.0-era ones).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { decodeLog, defineAgent, exportRun, importRun, resume } from '../../../src/core/index.ts';
import type { AgentDefinition, RunStore } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/file-store.ts';
import {
  CUT_STATES,
  CUTS,
  expectedOfV10,
  finishDemands,
  fixtureOf,
  meaningOf,
  notifies,
  RUNTIMES,
  stateOf,
  timelessNdjson,
  V10_CUTS,
  variantOf,
} from '../../portability/cuts.ts';
import type { Cut } from '../../portability/cuts.ts';
import { drive, finishOn, outcomeOf, reference, RUN_ID, uninterrupted } from '../../portability/reference.ts';
import type { Variant } from '../../portability/reference.ts';
import { readFixture, readV10Fixture, WRITE_FIXTURES, writeFixture } from './fixture-files.ts';
import { freshStore, NODE_STORES, removeTempDirs, tempDir } from './stores.ts';

afterAll(removeTempDirs);

/** The log FileStore writes at a cut today. */
const nodeFixture = (cut: Cut): Promise<string> => fixtureOf(new FileStore({ dir: tempDir() }), cut);

/** The reference agent with its request but the run id as its defaults: all a resume by id takes from an agent. */
function referenceById(store: RunStore, effects: string[], variant: Variant): AgentDefinition {
  const { agent, request } = reference(store, effects, variant);
  const { runId: _runId, ...defaults } = request;
  const { model, interpreter, events, syntheticObservations } = agent;
  return defineAgent({ model, interpreter, store, events, syntheticObservations, defaults });
}

/** A FileStore holding `ndjson` imported as the reference run. */
async function imported(ndjson: string): Promise<RunStore> {
  const store = freshStore('file');
  await importRun(store, RUN_ID, ndjson);
  return store;
}

const versions = (ndjson: string): string[] => [
  ...new Set(
    ndjson
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { v: string }).v),
  ),
];

describe.runIf(WRITE_FIXTURES)('writing the Node fixtures', () => {
  it.each(CUTS)('writes the log FileStore leaves at the %s cut', async (cut) => {
    const ndjson = await nodeFixture(cut);
    writeFixture('node', cut, ndjson);
    expect(readFixture('node', cut)).toBe(ndjson);
  });
});

describe.skipIf(WRITE_FIXTURES)('the checked-in fixtures, from Node', () => {
  it.each(CUTS)(
    'every runtime left the %s cut in the same 1.1 log, timestamps aside, in the state its name says',
    (cut) => {
      const logs = RUNTIMES.map((rt) => readFixture(rt, cut));
      for (const ndjson of logs) {
        expect(stateOf(decodeLog(ndjson).records)).toBe(CUT_STATES[cut]);
        expect(versions(ndjson)).toEqual(['1.1']);
        expect(timelessNdjson(ndjson)).toEqual(timelessNdjson(logs[0] as string));
      }
    },
  );

  it.each(V10_CUTS)(
    "every runtime's 1.0-era log at the %s cut is of schema 1.0, the same timestamps aside, in the state its name says",
    (cut) => {
      const logs = RUNTIMES.map((rt) => readV10Fixture(rt, cut));
      for (const ndjson of logs) {
        expect(versions(ndjson)).toEqual(['1.0']);
        expect(stateOf(decodeLog(ndjson).records)).toBe(CUT_STATES[cut]);
        expect(timelessNdjson(ndjson)).toEqual(timelessNdjson(logs[0] as string));
      }
    },
  );

  it.each(CUTS)('FileStore still writes what its %s fixture says (timestamps aside)', async (cut) => {
    expect(meaningOf(await nodeFixture(cut))).toEqual(meaningOf(readFixture('node', cut)));
  });

  const cases = RUNTIMES.filter((rt) => rt !== 'node').flatMap((rt) =>
    CUTS.flatMap((cut) => NODE_STORES.map((to) => [rt, cut, to] as const)),
  );
  it.each(cases)(
    'the %s log at the %s cut, imported into %s, finishes as the uninterrupted run',
    async (runtime, cut, to) => {
      const { outcome: full } = await uninterrupted(freshStore('memory'), variantOf(cut));
      const ndjson = readFixture(runtime, cut);
      const effects: string[] = [];
      const { outcome, answered } = await finishOn(freshStore(to), ndjson, effects, variantOf(cut));
      expect(outcome).toEqual(full);
      const demands = finishDemands(ndjson, cut);
      expect(answered).toEqual(demands.answered);
      // Safe lookups may run again; the never notify runs here only if the fixture had not run it.
      expect(notifies(effects)).toBe(demands.notifies);
    },
  );

  const v10 = RUNTIMES.flatMap((rt) => V10_CUTS.flatMap((cut) => NODE_STORES.map((to) => [rt, cut, to] as const)));
  it.each(v10)(
    'the 1.0-era %s log at the %s cut, imported into %s, finishes as the uninterrupted run (the 1.0 steps without usage)',
    async (runtime, cut, to) => {
      const { outcome: full } = await uninterrupted(freshStore('memory'));
      const ndjson = readV10Fixture(runtime, cut);
      const effects: string[] = [];
      const { outcome, answered } = await finishOn(freshStore(to), ndjson, effects);
      expect(outcome).toEqual(expectedOfV10(decodeLog(ndjson).records, full));
      expect(answered).toEqual([]);
      expect(notifies(effects)).toBe(0);
    },
  );

  const byId = RUNTIMES.flatMap((rt) => [
    ...CUTS.map((cut) => [rt, '1.1', cut] as const),
    ...V10_CUTS.map((cut) => [rt, '1.0', cut] as const),
  ]);
  const byIdName =
    'the %s log of record version %s at the %s cut, imported into a FileStore, refuses a resume by id ' +
    '(it predates stored requests), writes nothing, and still finishes resumed by request';
  it.each(byId)(byIdName, async (runtime, version, cut) => {
    const ndjson = version === '1.1' ? readFixture(runtime, cut) : readV10Fixture(runtime, cut);
    const store = await imported(ndjson);
    const effects: string[] = [];
    const refused = resume(referenceById(store, effects, variantOf(cut)), RUN_ID);
    await expect(refused).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(refused).rejects.toThrow(
      `resume: run "${RUN_ID}" was started under record version ${version}, ` +
        'which predates stored requests: resume it with its request, resume(agent, request)',
    );
    expect(await exportRun(store, RUN_ID)).toBe(await exportRun(await imported(ndjson), RUN_ID));
    expect(effects).toEqual([]);
    const { outcome: full } = await uninterrupted(freshStore('memory'), variantOf(cut));
    const outcome = outcomeOf(await drive(store, effects, variantOf(cut), 'resume', []));
    expect(outcome).toEqual(version === '1.1' ? full : expectedOfV10(decodeLog(ndjson).records, full));
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

  it.each(NODE_STORES)(
    '%s exports each imported 1.0-era log as the same bytes, though decoding fills the 1.1 fields in',
    async (kind) => {
      for (const runtime of RUNTIMES) {
        for (const cut of V10_CUTS) {
          const ndjson = readV10Fixture(runtime, cut);
          const store = freshStore(kind);
          await importRun(store, RUN_ID, ndjson);
          expect(await exportRun(store, RUN_ID), `${runtime} ${cut}`).toBe(ndjson);
        }
      }
    },
  );
});
