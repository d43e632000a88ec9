/**
 * Logs written before drivers marked where they took a run over (record versions 1.0 and 1.1,
 * the checked-in fixtures of every runtime): they still decode, with no marks; imported into each
 * Node store they export byte for byte as they were written and gain a `resumed` record only from a driver that carries
 * them on — one, first, at the step it carries on, none from a resume that finds the run awaiting
 * a person and brings no reply, none once ended — and the mixed log that leaves (old records,
 * 1.2 marks) exports, imports and exports again as the same bytes, finishing as the uninterrupted run.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { decodeLog, exportRun, importRun, readRunLog, resume } from '../../../src/core/index.ts';
import type { InputReply, RunResult, RunStore } from '../../../src/core/index.ts';
import { watchTakeover } from '../../../src/testing/crash-marks.ts';
import { CUTS, expectedOfV10, RUNTIMES, V10_CUTS, variantOf } from '../../portability/cuts.ts';
import { outcomeOf, reference, RUN_ID, uninterrupted, worldReply } from '../../portability/reference.ts';
import type { Variant } from '../../portability/reference.ts';
import { readFixture, readV10Fixture } from './fixture-files.ts';
import { freshStore, NODE_STORES, removeTempDirs } from './stores.ts';

afterAll(removeTempDirs);

/** Resume the reference on `store` to its end, each driver watched; returns its end and what was wrong. */
async function finishWatched(store: RunStore, variant: Variant): Promise<{ result: RunResult; problems: string[] }> {
  const problems: string[] = [];
  const effects: string[] = [];
  let input: InputReply | undefined;
  for (let n = 0; n < 10; n++) {
    const { agent, request } = reference(store, effects, variant);
    const how = { mode: 'resume', input } as const;
    const result = await watchTakeover(store, RUN_ID, how, problems, () =>
      resume(agent, request, input === undefined ? {} : { input }),
    );
    if (result.pending === null) return { result, problems };
    input = worldReply(result.pending, effects);
  }
  throw new Error('the reference asked more than ten times');
}

const cases = RUNTIMES.flatMap((rt) => [
  ...CUTS.map((cut) => [rt, '1.1', cut] as const),
  ...V10_CUTS.map((cut) => [rt, '1.0', cut] as const),
]);

describe.each(NODE_STORES)('a log written before resumed marks, in %s', (kind) => {
  it.each(cases)(
    'the %s log of record version %s at the %s cut is marked only where a driver carried it on',
    async (runtime, version, cut) => {
      const ndjson = version === '1.1' ? readFixture(runtime, cut) : readV10Fixture(runtime, cut);
      expect(readRunLog(decodeLog(ndjson).records).resumes).toEqual([]);
      const store = freshStore(kind);
      await importRun(store, RUN_ID, ndjson);
      const imported = await exportRun(store, RUN_ID);
      // Byte for byte, 1.0 included: decoding fills the 1.1 fields in, encoding a 1.0 record leaves them out.
      expect(imported).toBe(ndjson);
      const { result, problems } = await finishWatched(store, variantOf(cut));
      expect(problems).toEqual([]);
      const finished = await exportRun(store, RUN_ID);
      expect(finished.startsWith(imported)).toBe(true);
      const added = decodeLog(finished.slice(imported.length)).records;
      // Every cut but `awaiting` is carried on by the first resume; `awaiting` by the one with the approval.
      expect(added.filter((r) => r.kind === 'resumed')).toHaveLength(1);
      expect(new Set(added.map((r) => r.v))).toEqual(new Set(['1.2']));
      const { outcome: full } = await uninterrupted(freshStore('memory'), variantOf(cut));
      const want = version === '1.1' ? full : expectedOfV10(decodeLog(ndjson).records, full);
      expect(outcomeOf(result)).toEqual(want);
      // Ended now: a resume carries nothing on and writes nothing.
      await finishWatched(store, variantOf(cut));
      expect(await exportRun(store, RUN_ID)).toBe(finished);
      const again = freshStore(kind);
      await importRun(again, RUN_ID, finished);
      expect(await exportRun(again, RUN_ID)).toBe(finished);
    },
  );
});
