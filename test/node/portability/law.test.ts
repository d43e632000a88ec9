/**
 * The portability law (docs/design/laws.md#portability) among the stores Node has: the reference
 * run, crashed at every one of its writes on one store (the write lost, or landed with its promise
 * failed), exported, imported into each other store and resumed there — every request answered from
 * the outside world (a `never` action in doubt settled `executed` or `retry` by what really
 * happened, the approval approved) — ends with the uninterrupted trajectory, and the `never` action
 * ran exactly once across both halves. The `approval` variant also carries a run waiting for a
 * person, and a reply stored without what follows, to another store. And every store exports the
 * same run as the same bytes.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { exportRun, importRun } from '../../../src/core/index.ts';
import type { LogRecord } from '../../../src/core/index.ts';
import { fixtureOf, stateOf } from '../../portability/cuts.ts';
import { cutRun, effectsProblem, finishOn, RUN_ID, uninterrupted, VARIANTS } from '../../portability/reference.ts';
import type { Variant } from '../../portability/reference.ts';
import { freshStore, NODE_STORES, removeTempDirs } from './stores.ts';
import type { NodeStore } from './stores.ts';

afterAll(removeTempDirs);

const pairs = NODE_STORES.flatMap((from) => NODE_STORES.filter((to) => to !== from).map((to) => [from, to] as const));

/** The log a crash at write `k` left (null NDJSON when it is empty), and the executions before it. */
type CutLog = {
  readonly k: number;
  readonly log: readonly LogRecord[];
  readonly ndjson: string | null;
  readonly effects: readonly string[];
};

/** Cut runs per source store, variant and landing, shared by the targets (a cut run is the slow half). */
const cuts = new Map<string, Promise<CutLog[]>>();

function cutsOf(from: NodeStore, variant: Variant, landsBeforeThrow: boolean, writes: number): Promise<CutLog[]> {
  const key = `${from}:${variant}:${landsBeforeThrow}`;
  let found = cuts.get(key);
  if (!found) {
    found = (async () => {
      const out: CutLog[] = [];
      for (let k = 0; k < writes; k++) {
        const store = freshStore(from);
        const effects: string[] = [];
        const log = await cutRun(store, k, landsBeforeThrow, effects, variant);
        out.push({ k, log, effects, ndjson: log.length === 0 ? null : await exportRun(store, RUN_ID) });
      }
      return out;
    })();
    cuts.set(key, found);
  }
  return found;
}

const references = new Map<Variant, ReturnType<typeof uninterrupted>>();
const reference$ = (variant: Variant): ReturnType<typeof uninterrupted> => {
  let found = references.get(variant);
  if (!found) references.set(variant, (found = uninterrupted(freshStore('memory'), variant)));
  return found;
};

/**
 * What the cases must show besides the law, so it is not vacuous: the replies the resumes gave
 * (settlements exactly where a `never` action was in doubt) and the states carried across.
 */
const MUST: Record<
  `${Variant}:${boolean}`,
  { readonly answered: Record<string, number>; readonly states: readonly string[] }
> = {
  // The notify's step lost after it ran: settled `executed`.
  'plain:false': {
    answered: { 'settle:executed': 1 },
    states: ['at_boundary:-', 'in_flight:reinterpret', 'in_flight:replay_action', 'in_flight:settle'],
  },
  // The notify's intent landed, its promise failed, it never ran: settled `retry`.
  'plain:true': {
    answered: { 'settle:retry': 1 },
    states: ['at_boundary:-', 'in_flight:reinterpret', 'in_flight:replay_action', 'in_flight:settle'],
  },
  // Cuts before the request approve it after the import; the cut at the reply leaves the run awaiting.
  'approval:false': {
    answered: { 'approval:approve': 0, 'settle:executed': 1 },
    states: ['awaiting_input:await_input', 'in_flight:settle'],
  },
  // The reply landed without what follows (apply_input): carried out after the import, no new request.
  'approval:true': {
    answered: { 'approval:approve': 0, 'settle:retry': 1 },
    states: ['awaiting_input:await_input', 'in_flight:apply_input', 'in_flight:settle'],
  },
};

describe('the portability law among Node stores (memory, file, IndexedDB over fake-indexeddb)', () => {
  it('the reference run has every kind of cut: it writes a step of each decision and a never action', async () => {
    const { outcome, writes, answered } = await reference$('plain');
    expect(writes).toBeGreaterThan(10);
    expect(answered).toEqual([]);
    expect(outcome.stopReason).toBe('final_answer');
    expect(outcome.trajectory.map((s) => `${s.decision}:${s.actionStatus}`)).toEqual([
      'action:executed',
      'invalid:null',
      'action:executed',
      'action:executed',
      'final:null',
    ]);
    // The replies' metadata reaches the steps and the total.
    expect(outcome.trajectory.map((s) => s.finishReason)).toEqual(['stop', 'stop', 'stop', 'stop', 'stop']);
    expect(outcome.usage).toEqual({ inputTokens: 600, outputTokens: 110 });
  });

  it('the approval variant stops for a person once, and once approved leaves the trajectory of the plain run', async () => {
    const plain = await reference$('plain');
    const approval = await reference$('approval');
    expect(approval.answered).toEqual(['approval:approve']);
    expect(approval.outcome).toEqual(plain.outcome);
    // Three more records (the request, the mark of the resume that carries the reply out, the
    // reply), and one more write: the gated step's model result lands before the request, not with
    // its action intent (decision 0040).
    expect(approval.writes).toBe(plain.writes + 4);
  });

  const cases = VARIANTS.flatMap((variant) =>
    pairs.flatMap(([from, to]) => [false, true].map((lands) => [variant, from, to, lands] as const)),
  );
  it.each(cases)(
    "the %s run crashed at every write on %s, imported into %s and resumed with the world's replies, ends as the uninterrupted run (write lands before the crash: %s)",
    async (variant, from, to, landsBeforeThrow) => {
      const { outcome: full, writes } = await reference$(variant);
      let resumed = 0;
      const answered: Record<string, number> = {};
      const states = new Set<string>();
      for (const cut of await cutsOf(from, variant, landsBeforeThrow, writes)) {
        // Crash before the first write: there is no log to carry anywhere.
        if (cut.ndjson === null) continue;
        const effects = [...cut.effects];
        const finished = await finishOn(freshStore(to), cut.ndjson, effects, variant);
        resumed++;
        states.add(stateOf(cut.log));
        for (const a of finished.answered) answered[a] = (answered[a] ?? 0) + 1;
        expect(finished.outcome, `crash at write ${cut.k}`).toEqual(full);
        expect(effectsProblem(effects, finished.outcome), `crash at write ${cut.k}`).toBeNull();
      }
      expect(resumed).toBe(landsBeforeThrow ? writes : writes - 1);
      const must = MUST[`${variant}:${landsBeforeThrow}`];
      for (const state of must.states) expect([...states], state).toContain(state);
      // Settlements: exactly as many as there are cuts with the notify in doubt; approvals after every cut before the request.
      for (const [reply, n] of Object.entries(must.answered)) {
        if (n === 0) expect(answered[reply] ?? 0, reply).toBeGreaterThan(0);
        else expect(answered[reply] ?? 0, reply).toBe(n);
      }
      expect(Object.keys(answered).filter((a) => !(a in must.answered))).toEqual([]);
    },
  );
});

describe('export bytes', () => {
  it.each(VARIANTS)(
    'every store exports the same imported %s run, ended or waiting, as the same bytes',
    async (variant) => {
      for (const ended of [false, true]) {
        const source = freshStore('memory');
        // Not ended: the approval run waiting for its reply, the plain one with a lookup in flight.
        if (ended) await uninterrupted(source, variant);
        else await fixtureOf(source, variant === 'approval' ? 'awaiting' : 'replay');
        const ndjson = await exportRun(source, RUN_ID);
        for (const kind of NODE_STORES) {
          const store = freshStore(kind);
          await importRun(store, RUN_ID, ndjson);
          expect(await exportRun(store, RUN_ID), `${kind}, ended: ${ended}`).toBe(ndjson);
        }
      }
    },
  );

  it.each(VARIANTS)(
    'every store that runs the %s reference itself exports it as the same bytes (clock frozen)',
    async (variant) => {
      vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-01-02T03:04:05.678Z') });
      try {
        const exports = new Map<NodeStore, string>();
        for (const kind of NODE_STORES) {
          const store = freshStore(kind);
          await uninterrupted(store, variant);
          exports.set(kind, await exportRun(store, RUN_ID));
        }
        expect(new Set(exports.values()).size).toBe(1);
        expect([...exports.values()][0]).toContain('"v":"1.2"');
        expect([...exports.values()][0]).toContain('"request":{"cancelGraceMs":');
      } finally {
        vi.useRealTimers();
      }
    },
  );
});
