/**
 * Hostile records through the lean form of a 1.2 log (docs/design/run-log.md#the-lean-form): a
 * reader must give back exactly the record its writer was given — the same fields, the same
 * values, its keys in the same order — for any record object, as a full record read alone
 * without the lean form gives it back.
 */
import { describe, expect, it } from 'vitest';
import { decodeLog, decodeRecord, encodeLog, encodeRecord, InMemoryStore, run } from '../../../src/core/index.ts';
import type { ActionIntentRecord, LogRecord } from '../../../src/core/index.ts';
import { harness } from './fixtures.ts';

type Obj = Record<string, unknown>;

/** What a reader without the lean form returns for `rec`: read alone, as a 1.1 record is (then marked 1.2 again). */
function plain(rec: LogRecord): string {
  const back = decodeRecord(encodeRecord({ ...rec, v: '1.1' } as LogRecord)) as unknown as Obj;
  return JSON.stringify({ ...back, v: (rec as unknown as Obj)['v'] });
}

/** The records of a short run with an action step first: run_started, model intent, result, action intent, step… */
async function actionLog(): Promise<Obj[]> {
  const h = harness();
  await run(h.agent, h.request);
  return (await h.store.readLog('run-1')).map((r) => structuredClone(r) as unknown as Obj);
}

const firstOf = (recs: Obj[], kind: string, intent?: string): Obj =>
  recs.find((r) => r['kind'] === kind && (intent === undefined || r['intent'] === intent)) as Obj;

/** Every record read back from the lean form, as JSON (key order counts), against `plain` of each. */
async function roundTrips(recs: Obj[]): Promise<void> {
  const given = recs as unknown as LogRecord[];
  const expected = given.map(plain);
  const differing = (got: readonly LogRecord[], want: readonly string[]): string[][] =>
    got.flatMap((r, i) => (JSON.stringify(r) === want[i] ? [] : [[JSON.stringify(r), want[i] as string]]));
  expect(decodeLog(encodeLog(given)).records).toHaveLength(given.length);
  expect(differing(decodeLog(encodeLog(given)).records, expected)).toEqual([]);
  const store = new InMemoryStore();
  for (const rec of given) {
    if (rec.kind === 'run_started') await store.runStarted('x', rec);
    else if (rec.kind === 'intent') await store.intent('x', rec);
    else if (rec.kind === 'result') await store.result('x', rec.resultId, rec);
    else if (rec.kind === 'step') await store.step('x', rec);
    else if (rec.kind === 'run_ended') await store.runEnded('x', rec);
  }
  const kept = expected.filter((_, i) =>
    ['run_started', 'intent', 'result', 'step', 'run_ended'].includes(given[i]?.kind ?? ''),
  );
  expect(differing(await store.readLog('x'), kept)).toEqual([]);
}

describe('the lean form with hostile records', () => {
  it('reads the records of an unmodified run as a reader without the lean form does', async () => {
    await roundTrips(await actionLog());
  });

  it('reads a step whose usage equals its reply’s in another key order in the step’s own key order', async () => {
    const recs = await actionLog();
    (firstOf(recs, 'result')['reply'] as Obj)['usage'] = { inputTokens: 5, outputTokens: 2 };
    (firstOf(recs, 'step')['step'] as Obj)['usage'] = { outputTokens: 2, inputTokens: 5 };
    await roundTrips(recs);
  });

  it('reads a hand-built step that lacks fields with their defaults, not with its reply’s and outcome’s', async () => {
    const recs = await actionLog();
    (firstOf(recs, 'result')['reply'] as Obj)['reasoning'] = 'thinking';
    const s = firstOf(recs, 'step')['step'] as Obj;
    for (const key of ['reasoning', 'modelText', 'observation', 'actionStatus', 'modelCallId']) delete s[key];
    s['historyText'] = undefined;
    await roundTrips(recs);
  });

  it('keeps the keys of an action decision in the order its interpreter wrote them', async () => {
    const recs = await actionLog();
    const intent = firstOf(recs, 'intent', 'action');
    const { kind, action, trajectoryRepr, historyText } = intent['decision'] as Obj;
    intent['decision'] = { kind, historyText, action, trajectoryRepr };
    await roundTrips(recs);
  });

  it('keeps the keys of an outcome and an action result in the order its executor wrote them', async () => {
    const recs = await actionLog();
    const step = firstOf(recs, 'step');
    const ar = step['actionResult'] as Obj;
    const { status, observation, ...flags } = ar['outcome'] as Obj;
    step['actionResult'] = { outcome: { observation, ...flags, status }, resultId: ar['resultId'] };
    await roundTrips(recs);
  });

  it('leaves the action result of a record it writes as it was given, its outcome in order', async () => {
    const recs = await actionLog();
    const step = firstOf(recs, 'step');
    const ar = step['actionResult'] as Obj;
    const outcome = Object.freeze({ ...(ar['outcome'] as Obj) });
    step['actionResult'] = Object.freeze({ outcome, resultId: ar['resultId'] });
    expect(() => encodeLog(recs as unknown as LogRecord[])).not.toThrow();
    expect((step['actionResult'] as Obj)['outcome']).toBe(outcome);
    await roundTrips(recs);
  });

  it('keeps the callSeq of an action intent that holds one', async () => {
    const recs = await actionLog();
    const intent = firstOf(recs, 'intent', 'action');
    const { kind, v, intent: which, stepIndex, ...rest } = intent;
    Object.assign(intent, Object.fromEntries(Object.keys(intent).map((k) => [k, undefined])), {
      kind,
      v,
      intent: which,
      stepIndex,
      callSeq: stepIndex,
      ...rest,
    });
    for (const key of Object.keys(intent)) if (intent[key] === undefined) delete intent[key];
    await roundTrips(recs);
  });

  it('derives no step field from a result of another version than the step’s', async () => {
    const recs = await actionLog();
    const result = firstOf(recs, 'result');
    result['v'] = '1.1';
    (result['reply'] as Obj)['reasoning'] = 'thinking';
    // A complete context first: a step boundary the writer has seen.
    const i = recs.indexOf(result);
    const started = recs.findIndex((r) => r['kind'] === 'run_started');
    expect(started).toBeLessThan(i);
    await roundTrips(recs);
  });
});

describe('a record that lacks a field its reader would fill in', () => {
  it.each([
    ['a result without callSeq', (recs: Obj[]) => delete firstOf(recs, 'result')['callSeq']],
    ['a model-call intent without resultId', (recs: Obj[]) => delete firstOf(recs, 'intent', 'model_call')['resultId']],
    ['an action intent without resultId', (recs: Obj[]) => delete firstOf(recs, 'intent', 'action')['resultId']],
    [
      'an action result without resultId',
      (recs: Obj[]) => delete (firstOf(recs, 'step')['actionResult'] as Obj)['resultId'],
    ],
    [
      'an outcome without status',
      (recs: Obj[]) => delete ((firstOf(recs, 'step')['actionResult'] as Obj)['outcome'] as Obj)['status'],
    ],
  ] as const)('is refused by the reader as it is read alone: %s', async (_label, forge) => {
    const recs = await actionLog();
    forge(recs);
    const full = (recs as unknown as LogRecord[]).map((r) => encodeRecord({ ...r, v: '1.1' } as LogRecord));
    expect(() => decodeLog(full)).toThrow(/line/);
    expect(() => decodeLog(encodeLog(recs as unknown as LogRecord[]))).toThrow(/line/);
  });
});

describe('a write that fails part way', () => {
  it('leaves an InMemoryStore writing what it then reads back, and rejects rather than throws', async () => {
    const recs = (await actionLog()) as unknown as LogRecord[];
    const store = new InMemoryStore();
    const result = recs.find((r) => r.kind === 'result') as LogRecord & { kind: 'result' };
    const intent = recs.find((r) => r.kind === 'intent' && r.intent === 'action') as ActionIntentRecord;
    const step = recs.find((r) => r.kind === 'step') as LogRecord & { kind: 'step' };
    const started = recs.find((r) => r.kind === 'run_started') as LogRecord & { kind: 'run_started' };
    await store.runStarted('x', started);
    const unwritable = { ...intent, decision: { ...intent.decision, action: { kind: 'code', source: 1n } } };
    let outcome: unknown;
    try {
      outcome = await store.resultAndIntent('x', result, unwritable as unknown as typeof intent).then(
        () => 'resolved',
        () => 'rejected',
      );
    } catch {
      outcome = 'threw';
    }
    expect(outcome).toBe('rejected');
    // Neither record landed: the step that follows is read back as given, not from the lost reply.
    await store.step('x', step);
    const back = (await store.readLog('x')).map((r) => JSON.stringify(r));
    expect(back).toEqual([started, step].map(plain));
  });
});

describe('an action decision the lean form cannot say', () => {
  it.each(['historyText', 'trajectoryRepr'])(
    'refuses to write an action intent whose decision lacks its %s, which a reader would fill in, and an InMemoryStore write of it rejects',
    async (key) => {
      const recs = await actionLog();
      delete (firstOf(recs, 'intent', 'action')['decision'] as Obj)[key];
      const given = recs as unknown as LogRecord[];
      expect(() => encodeLog(given)).toThrow(new RegExp(`decision\\.${key} must be a string`));
      const store = new InMemoryStore();
      const started = given.find((r) => r.kind === 'run_started') as LogRecord & { kind: 'run_started' };
      const result = given.find((r) => r.kind === 'result') as LogRecord & { kind: 'result' };
      const intent = given.find((r) => r.kind === 'intent' && r.intent === 'action') as ActionIntentRecord;
      await store.runStarted('x', started);
      await expect(store.resultAndIntent('x', result, intent)).rejects.toThrow(new RegExp(key));
      // Nothing of the refused write landed.
      expect((await store.readLog('x')).map((r) => r.kind)).toEqual(['run_started']);
    },
  );
});
