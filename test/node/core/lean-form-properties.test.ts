/**
 * A property of the lean form (docs/log-format.md#the-lean-form): the records of a run, with any
 * of their fields set to a value the log holds elsewhere (another reply's text, another step's
 * usage in another key order, a field removed), are read back from the lean form exactly as a
 * reader without it reads them (each written in full, as 1.1, then marked 1.2 again) — or
 * refused by both, or refused when written; never accepted when written and read otherwise.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeLog, decodeRecord, encodeLog, encodeRecord, InMemoryStore } from '../../../src/core/index.ts';
import type { LogRecord } from '../../../src/core/index.ts';
import { drive, firstDifference, planHarness, runPlan } from './log-arbitraries.ts';

type Obj = Record<string, unknown>;

/** What a reader without the lean form returns for `rec`: read alone, as a 1.1 record is (then marked 1.2 again). */
function plain(rec: Obj): Obj {
  const back = decodeRecord(encodeRecord({ ...rec, v: '1.1' } as unknown as LogRecord)) as unknown as Obj;
  return { ...back, v: rec['v'] };
}

/** Where a field may be set, by record: `kind[:intent]` → dotted paths. */
const PATHS: Record<string, readonly string[]> = {
  step: [
    'step.modelText',
    'step.reasoning',
    'step.historyText',
    'step.actionRepr',
    'step.toolCallId',
    'step.modelCallId',
    'step.observation',
    'step.usage',
    'step.finishReason',
    'step.historyContent',
    'step.decision',
    'step.actionStatus',
    'step.observationIsSynthetic',
    'step.envReportedCompletion',
    'step.observationTruncatedChars',
    'step.callSeq',
    'step.finalAnswer',
    'step.explanation',
    'actionResult',
    'actionResult.resultId',
    'actionResult.outcome.status',
    'actionResult.outcome.observation',
    'actionResult.outcome.observationIsSynthetic',
  ],
  result: [
    'resultId',
    'callSeq',
    'reply.text',
    'reply.reasoning',
    'reply.callId',
    'reply.usage',
    'reply.finishReason',
    'reply.toolCalls',
    'reply.content',
    'reply.providerMetadata',
  ],
  'intent:model_call': ['resultId', 'callSeq'],
  'intent:action': [
    'resultId',
    'decision.historyText',
    'decision.trajectoryRepr',
    'decision.historyContent',
    'decision.action.arguments',
    'decision.action.id',
  ],
};

const kindOf = (r: Obj): string => (r['kind'] === 'intent' ? `intent:${String(r['intent'])}` : String(r['kind']));

/** Every value the log holds (objects in their key order and reversed), with null, false, 0 and "absent". */
function poolOf(recs: readonly Obj[]): unknown[] {
  const pool: unknown[] = [undefined, null, false, true, 0, 1, '', 'executed', 'action', 'final'];
  const walk = (v: unknown): void => {
    if (typeof v === 'string' || typeof v === 'number') pool.push(v);
    else if (Array.isArray(v)) {
      pool.push(v);
      for (const x of v) walk(x);
    } else if (typeof v === 'object' && v !== null) {
      pool.push(v, Object.fromEntries(Object.entries(v).reverse()));
      for (const x of Object.values(v)) walk(x);
    }
  };
  for (const r of recs) if (r['kind'] !== 'run_started') walk(r);
  return pool;
}

const typeOf = (v: unknown): string => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

/**
 * Set the field at `path` of `rec`, when its parent is an object, to the `pick`-th value of the
 * pool of its type (mostly: then a record stays valid often enough to be read), or of the whole
 * pool, where `undefined` removes it.
 */
function setAt(rec: Obj, path: string, pool: readonly unknown[], pick: number, sameType: boolean): void {
  const keys = path.split('.');
  const last = keys.pop() as string;
  let o: unknown = rec;
  for (const k of keys) o = typeof o === 'object' && o !== null ? (o as Obj)[k] : undefined;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return;
  const type = typeOf((o as Obj)[last]);
  const like = sameType ? pool.filter((v) => typeOf(v) === type) : pool;
  const value = like.length > 0 ? like[pick % like.length] : undefined;
  if (value === undefined) delete (o as Obj)[last];
  else (o as Obj)[last] = structuredClone(value);
}

const mutation = fc.record({ at: fc.nat(), path: fc.nat(), value: fc.nat(), sameType: fc.boolean() });

describe('the lean form of any record a run holds, its fields set to values found elsewhere in the log', () => {
  it('reads back as a reader without the lean form reads it, refused by both, or refused when written', async () => {
    const outcomes = { same: 0, refusedByBoth: 0, refusedWhenWritten: 0 };
    await fc.assert(
      fc.asyncProperty(runPlan, fc.array(mutation, { minLength: 1, maxLength: 3 }), async (plan, changes) => {
        const store = new InMemoryStore();
        await drive(plan, planHarness(plan, store), store);
        const recs = (await store.readLog('fuzz-1')).map((r) => structuredClone(r) as unknown as Obj);
        const pool = poolOf(recs);
        const targets = recs.filter((r) => PATHS[kindOf(r)]);
        for (const { at, path, value, sameType } of changes) {
          const rec = targets[at % targets.length] as Obj;
          const paths = PATHS[kindOf(rec)] as readonly string[];
          setAt(rec, paths[path % paths.length] as string, pool, value, sameType);
        }
        let text: string;
        try {
          text = encodeLog(recs as unknown as LogRecord[]);
        } catch {
          outcomes.refusedWhenWritten++;
          return;
        }
        let expected: Obj[] | null;
        try {
          expected = recs.map(plain);
        } catch {
          expected = null;
        }
        if (expected === null) {
          expect(() => decodeLog(text), 'a record a full reader refuses').toThrow();
          outcomes.refusedByBoth++;
          return;
        }
        const back = decodeLog(text).records;
        expect(back.map((r) => JSON.stringify(r))).toEqual(expected.map((r) => JSON.stringify(r)));
        expect(firstDifference(back, expected)).toBeNull();
        outcomes.same++;
      }),
      { seed: 92_003, numRuns: 150 },
    );
    expect(
      Object.values(outcomes).every((n) => n > 0),
      JSON.stringify(outcomes),
    ).toBe(true);
  });
});
