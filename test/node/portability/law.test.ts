/**
 * The portability law (SPEC §10) among the stores Node has: the reference run, crashed at every
 * one of its writes on one store (the write lost, or landed with its promise failed), exported,
 * imported into each other store and resumed there, ends with the uninterrupted trajectory — or,
 * where a `never` action was in flight, settles — and the `never` action ran at most once across
 * both halves. And every store exports the same run as the same bytes.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { exportRun, importRun, run } from '../../../src/core/index.ts';
import type { LogRecord } from '../../../src/core/index.ts';
import { cutRun, effectsProblem, expectedOutcome, finishOn, reference, RUN_ID, uninterrupted } from '../../portability/reference.ts';
import type { Outcome } from '../../portability/reference.ts';
import { freshStore, NODE_STORES, removeTempDirs } from './stores.ts';
import type { NodeStore } from './stores.ts';

afterAll(removeTempDirs);

const pairs = NODE_STORES.flatMap((from) => NODE_STORES.filter((to) => to !== from).map((to) => [from, to] as const));

/** The log a crash at write `k` left (null NDJSON when it is empty), and the executions before it. */
type CutLog = { readonly k: number; readonly log: readonly LogRecord[]; readonly ndjson: string | null; readonly effects: readonly string[] };

/** Cut runs per source store and variant, shared by the targets (a cut run is the slow half). */
const cuts = new Map<string, Promise<CutLog[]>>();

function cutsOf(from: NodeStore, landsBeforeThrow: boolean, writes: number): Promise<CutLog[]> {
  const key = `${from}:${landsBeforeThrow}`;
  let found = cuts.get(key);
  if (!found) {
    found = (async () => {
      const out: CutLog[] = [];
      for (let k = 0; k < writes; k++) {
        const store = freshStore(from);
        const effects: string[] = [];
        const log = await cutRun(store, k, landsBeforeThrow, effects);
        out.push({ k, log, effects, ndjson: log.length === 0 ? null : await exportRun(store, RUN_ID) });
      }
      return out;
    })();
    cuts.set(key, found);
  }
  return found;
}

describe('the portability law among Node stores (memory, file, IndexedDB over fake-indexeddb)', () => {
  let full: Promise<{ outcome: Outcome; writes: number }> | null = null;
  const reference$ = (): Promise<{ outcome: Outcome; writes: number }> => (full ??= uninterrupted(freshStore('memory')));

  it('the reference run has every kind of cut: it writes a step of each decision and a never action', async () => {
    const { outcome, writes } = await reference$();
    expect(writes).toBeGreaterThan(10);
    expect(outcome.stopReason).toBe('final_answer');
    expect(outcome.trajectory.map((s) => `${s.decision}:${s.actionStatus}`)).toEqual(['action:executed', 'invalid:null', 'action:executed', 'action:executed', 'final:null']);
  });

  it.each(pairs.flatMap(([from, to]) => [false, true].map((lands) => [from, to, lands] as const)))(
    'a run crashed at every write on %s, imported into %s and resumed, ends as the uninterrupted run would (write lands before the crash: %s)',
    async (from, to, landsBeforeThrow) => {
      const { outcome: full, writes } = await reference$();
      let resumed = 0;
      let settled = 0;
      for (const cut of await cutsOf(from, landsBeforeThrow, writes)) {
        // Crash before the first write: there is no log to carry anywhere.
        if (cut.ndjson === null) continue;
        const effects = [...cut.effects];
        const outcome = await finishOn(freshStore(to), cut.ndjson, effects);
        resumed++;
        const want = expectedOutcome(cut.log, full);
        if (want.stopReason === 'in_flight_unknown') settled++;
        expect(outcome, `crash at write ${cut.k}`).toEqual(want);
        expect(effectsProblem(effects, outcome), `crash at write ${cut.k}`).toBeNull();
      }
      expect(resumed).toBe(landsBeforeThrow ? writes : writes - 1);
      // Exactly one cut leaves the never action's intent without its step: the run settles there.
      expect(settled).toBe(1);
    },
  );
});

describe('export bytes', () => {
  it('every store exports the same imported run as the same bytes', async () => {
    const source = freshStore('memory');
    const { agent, request } = reference(source);
    await run(agent, request);
    const ndjson = await exportRun(source, RUN_ID);
    for (const kind of NODE_STORES) {
      const store = freshStore(kind);
      await importRun(store, RUN_ID, ndjson);
      expect(await exportRun(store, RUN_ID), kind).toBe(ndjson);
    }
  });

  it('every store that runs the reference itself exports it as the same bytes (clock frozen)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-01-02T03:04:05.678Z') });
    try {
      const exports = new Map<NodeStore, string>();
      for (const kind of NODE_STORES) {
        const store = freshStore(kind);
        const { agent, request } = reference(store);
        await run(agent, request);
        exports.set(kind, await exportRun(store, RUN_ID));
      }
      expect(new Set(exports.values()).size).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
