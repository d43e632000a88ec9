/**
 * Where each driver took a run over (docs/log-format.md, the `resumed` record): the mark a driver
 * writes when it carries a run on, what it holds, when none is written, what readers and the
 * decoder make of it, and the trace context a sink's `traceparent` hook leaves in `run_started`.
 */
import { describe, expect, it } from 'vitest';
import {
  CorruptLogError,
  decodeRecord,
  exportRun,
  importRun,
  InMemoryStore,
  InvalidRequestError,
  readRunLog,
  requestStop,
  resume,
  run,
} from '../../../src/core/index.ts';
import type {
  InputReply,
  LogRecord,
  ResumedRecord,
  RunResult,
  RunStartedRecord,
  RunStore,
  ToolSpec,
} from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { interceptWrites } from '../../../src/testing/faulty-store.ts';
import { harness, makeTools, text, timeless } from './fixtures.ts';
import type { Harness } from './fixtures.ts';

const ADD_THEN_FINAL = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];
const NOTE_THEN_FINAL = ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'];
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

type Make = (store: RunStore) => Harness;
const plain =
  (script: readonly string[], tools?: ToolSpec[]): Make =>
  (store) =>
    harness({ script: [...script], store, ...(tools ? { tools } : {}) });
const gated = (): ToolSpec[] => makeTools().map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));

const kinds = (log: readonly LogRecord[]): string[] =>
  log.map((r) => (r.kind === 'intent' ? `intent:${r.intent}` : r.kind));
const marks = (log: readonly LogRecord[]): Pick<ResumedRecord, 'stepIndex' | 'resolution'>[] =>
  readRunLog(log).resumes.map(({ stepIndex, resolution }) => ({ stepIndex, resolution }));

/** Run until the store has taken `writes` writes (the next one lost, or landed), then "crash". */
async function crashAfter(writes: number, make: Make, landed = false): Promise<InMemoryStore> {
  const inner = new InMemoryStore();
  const h = make(faultyStore(inner, { crashAfterWrites: writes, landsBeforeThrow: landed }));
  await expect(run(h.agent, h.request)).rejects.toMatchObject({ name: 'StoreError' });
  return inner;
}

/** Two results equal but for their steps' timestamps. */
function expectSameEnd(got: RunResult, want: RunResult): void {
  expect({ ...got, trajectory: timeless(got.trajectory) }).toEqual({ ...want, trajectory: timeless(want.trajectory) });
}

const uninterrupted = async (make: Make, replies: InputReply[] = []): Promise<RunResult> => {
  const h = make(new InMemoryStore());
  let r = await run(h.agent, h.request);
  for (const input of replies) r = await resume(h.agent, h.request, { input });
  return r;
};

describe('a driver that carries a run on marks where it took over', () => {
  it.each([
    ['before its first step', 1, 0],
    ['after a step', 4, 1],
    ['after the last step, before run_ended', 7, 2],
  ])('at a boundary %s: one resumed with the next stepIndex and resolution null', async (_at, writes, next) => {
    const store = await crashAfter(writes, plain(ADD_THEN_FINAL));
    const before = await store.readLog('run-1');
    const h = plain(ADD_THEN_FINAL)(store);
    const result = await resume(h.agent, h.request);
    const log = await store.readLog('run-1');
    expect(log.slice(0, before.length)).toEqual(before);
    expect(log[before.length]).toMatchObject({ kind: 'resumed', v: '1.2', stepIndex: next, resolution: null });
    expect(typeof (log[before.length] as ResumedRecord).at).toBe('string');
    expect(marks(log)).toEqual([{ stepIndex: next, resolution: null }]);
    expectSameEnd(result, await uninterrupted(plain(ADD_THEN_FINAL)));
  });

  it.each([
    ['a safe model call is re-issued', 2, 'reissue_model', 0],
    ['a safe action is replayed', 3, 'replay_action', 0],
    ['a later model call is re-issued', 5, 'reissue_model', 1],
    ['a model reply is interpreted again', 6, 'reinterpret', 1],
  ])('in flight, when %s: the interrupted step and readRunLog’s resolution', async (_w, writes, resolution, step) => {
    const store = await crashAfter(writes, plain(ADD_THEN_FINAL));
    const before = await store.readLog('run-1');
    expect(readRunLog(before).inFlight).toMatchObject({ stepIndex: step, resolution });
    const h = plain(ADD_THEN_FINAL)(store);
    const result = await resume(h.agent, h.request);
    const log = await store.readLog('run-1');
    expect(log[before.length]).toMatchObject({ kind: 'resumed', stepIndex: step, resolution });
    expect(marks(log)).toEqual([{ stepIndex: step, resolution }]);
    expectSameEnd(result, await uninterrupted(plain(ADD_THEN_FINAL)));
  });

  it('when a never action in flight is settled: settle, then the reply carried out, in order', async () => {
    // run_started, model intent, result + action intent (note, never): the note ran, its step is lost.
    const store = await crashAfter(3, plain(NOTE_THEN_FINAL));
    const h = plain(NOTE_THEN_FINAL)(store);
    const asked = await resume(h.agent, h.request);
    expect(asked.pending).toMatchObject({ kind: 'settle', resultId: 's0.settle' });
    const input: InputReply = { kind: 'executed', resultId: 's0.settle', observation: 'noted x' };
    const result = await resume(h.agent, h.request, { input });
    const log = await store.readLog('run-1');
    expect(kinds(log).slice(3, 9)).toEqual(['intent:action', 'resumed', 'input_request', 'resumed', 'input', 'step']);
    expect(marks(log)).toEqual([
      { stepIndex: 0, resolution: 'settle' },
      { stepIndex: 0, resolution: 'await_input' },
    ]);
    expect(h.calls).toEqual([]);
    expectSameEnd(result, await uninterrupted(plain(NOTE_THEN_FINAL)));
  });

  it('when a reply is carried out, and again when a crash left the reply with nothing after it', async () => {
    const make = plain(NOTE_THEN_FINAL, gated());
    const h = make(new InMemoryStore());
    const paused = await run(h.agent, h.request);
    expect(kinds(await h.store.readLog('run-1'))).not.toContain('resumed');
    const input: InputReply = { kind: 'approve', resultId: 's0.input' };
    // The resume writes its mark and the reply, then dies before the action's intent.
    const crashing = make(faultyStore(h.store, { crashAfterWrites: 2 }));
    await expect(resume(crashing.agent, crashing.request, { input })).rejects.toMatchObject({ name: 'StoreError' });
    const cut = await h.store.readLog('run-1');
    expect(readRunLog(cut).inFlight).toMatchObject({ stepIndex: 0, resolution: 'apply_input' });
    const result = await resume(h.agent, h.request);
    const log = await h.store.readLog('run-1');
    expect(kinds(log).slice(3, 8)).toEqual(['input_request', 'resumed', 'input', 'resumed', 'intent:action']);
    expect(marks(log)).toEqual([
      { stepIndex: 0, resolution: 'await_input' },
      { stepIndex: 0, resolution: 'apply_input' },
    ]);
    expect(paused.pending?.resultId).toBe('s0.input');
    expectSameEnd(result, await uninterrupted(make, [input]));
  });

  it('after an upgrade record and before the reply it carries out', async () => {
    const h = plain(NOTE_THEN_FINAL, gated())(new InMemoryStore());
    await run(h.agent, h.request);
    const before = await h.store.readLog('run-1');
    const context = { ...h.request.context, run: [text('system', 'You are version B.')] };
    const b = harness({ script: NOTE_THEN_FINAL, store: h.store, tools: gated(), request: { context } });
    const input: InputReply = { kind: 'approve', resultId: 's0.input' };
    await resume(b.agent, b.request, { input, upgrade: { reason: 'deploy 2' } });
    const log = await h.store.readLog('run-1');
    expect(kinds(log.slice(before.length, before.length + 3))).toEqual(['upgrade', 'resumed', 'input']);
    expect(log[before.length + 1]).toMatchObject({ stepIndex: 0, resolution: 'await_input' });
  });

  it('lists every mark of a run in readRunLog’s resumes, in the order the drivers took over', async () => {
    const store = await crashAfter(2, plain(ADD_THEN_FINAL));
    const crashing = plain(ADD_THEN_FINAL)(faultyStore(store, { crashAfterWrites: 2 }));
    // The second driver marks step 0, re-issues the call, lands result + action intent, dies before the step.
    await expect(resume(crashing.agent, crashing.request)).rejects.toMatchObject({ name: 'StoreError' });
    const h = plain(ADD_THEN_FINAL)(store);
    const result = await resume(h.agent, h.request);
    const log = await store.readLog('run-1');
    const resumes = readRunLog(log).resumes;
    expect(resumes.map((r) => log.indexOf(r as LogRecord))).toEqual([2, 5]);
    expect(marks(log)).toEqual([
      { stepIndex: 0, resolution: 'reissue_model' },
      { stepIndex: 0, resolution: 'replay_action' },
    ]);
    expectSameEnd(result, await uninterrupted(plain(ADD_THEN_FINAL)));
  });
});

describe('a driver that carries nothing on writes no mark', () => {
  it('a run resumed after it ended: the log is unchanged', async () => {
    const h = plain(ADD_THEN_FINAL)(new InMemoryStore());
    await run(h.agent, h.request);
    const before = await exportRun(h.store, 'run-1');
    await resume(h.agent, h.request);
    expect(await exportRun(h.store, 'run-1')).toBe(before);
    expect(readRunLog(await h.store.readLog('run-1')).resumes).toEqual([]);
  });

  it('a run awaiting a person, resumed without a reply: the log is unchanged', async () => {
    const h = plain(NOTE_THEN_FINAL, gated())(new InMemoryStore());
    await run(h.agent, h.request);
    const before = await exportRun(h.store, 'run-1');
    expect((await resume(h.agent, h.request)).stopReason).toBe('awaiting_input');
    expect(await exportRun(h.store, 'run-1')).toBe(before);
  });

  it.each([
    ['at a boundary', 4, null],
    ['in flight', 3, 'replay_action'],
  ] as const)('a stop found at acquire %s: only run_ended, after run_started tells the sink', async (_a, w, res) => {
    const inner = new InMemoryStore();
    // The first driver's sink opened a span: the stop's driver tells its own sink where to link.
    const crashing = plain(ADD_THEN_FINAL)(faultyStore(inner, { crashAfterWrites: w }));
    const agent = { ...crashing.agent, events: { ...crashing.sink, traceparent: () => TP } };
    await expect(run(agent, crashing.request)).rejects.toMatchObject({ name: 'StoreError' });
    const before = await inner.readLog('run-1');
    await requestStop(inner, 'run-1', 'enough');
    const h = plain(ADD_THEN_FINAL)(inner);
    const result = await resume(h.agent, h.request);
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'enough' } });
    const log = await inner.readLog('run-1');
    expect(kinds(log)).toEqual([...kinds(before), 'run_ended']);
    expect(h.sink.events[0]).toEqual({
      type: 'run_started',
      runId: 'run-1',
      resumed: true,
      fromStep: readRunLog(before).steps,
      resolution: res,
      traceparent: TP,
    });
    expect(h.sink.events.at(-1)?.type).toBe('run_ended');
  });
});

/** The store as one written before marks existed: every method but `resumed`. */
function withoutResumed(inner: RunStore): RunStore {
  const store = interceptWrites(inner, (_method, _runId, _records, write) => write());
  delete (store as { resumed?: unknown }).resumed;
  return store;
}

describe('a store without a resumed method', () => {
  it('still resumes a run, as the uninterrupted one ends, with no marks', async () => {
    const inner = await crashAfter(3, plain(ADD_THEN_FINAL));
    const before = kinds(await inner.readLog('run-1'));
    const h = plain(ADD_THEN_FINAL)(withoutResumed(inner));
    const result = await resume(h.agent, h.request);
    const log = await inner.readLog('run-1');
    expect(kinds(log)).toEqual([...before, 'step', 'intent:model_call', 'result', 'step', 'run_ended']);
    expect(readRunLog(log).resumes).toEqual([]);
    expectSameEnd(result, await uninterrupted(plain(ADD_THEN_FINAL)));
  });

  it('refuses to import a log that holds marks, writing nothing', async () => {
    const store = await crashAfter(3, plain(ADD_THEN_FINAL));
    const h = plain(ADD_THEN_FINAL)(store);
    await resume(h.agent, h.request);
    const ndjson = await exportRun(store, 'run-1');
    const inner = new InMemoryStore();
    const refused = importRun(withoutResumed(inner), 'run-1', ndjson);
    await expect(refused).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(refused).rejects.toThrow(/no resumed method/);
    expect(await inner.readLog('run-1')).toEqual([]);
    // A log without marks imports into it as before.
    const unmarked = await crashAfter(3, plain(ADD_THEN_FINAL));
    await importRun(withoutResumed(inner), 'run-1', await exportRun(unmarked, 'run-1'));
    expect(await exportRun(inner, 'run-1')).toBe(await exportRun(unmarked, 'run-1'));
  });
});

describe('marks in exports, imports and the decoder', () => {
  it('export and import round-trip the marks byte for byte', async () => {
    const store = await crashAfter(2, plain(ADD_THEN_FINAL));
    const crashing = plain(ADD_THEN_FINAL)(faultyStore(store, { crashAfterWrites: 2 }));
    await expect(resume(crashing.agent, crashing.request)).rejects.toMatchObject({ name: 'StoreError' });
    const h = plain(ADD_THEN_FINAL)(store);
    await resume(h.agent, h.request);
    const ndjson = await exportRun(store, 'run-1');
    expect(ndjson.split('\n').filter((l) => l.startsWith('{"kind":"resumed"'))).toHaveLength(2);
    const copy = new InMemoryStore();
    await importRun(copy, 'run-1', ndjson);
    expect(await exportRun(copy, 'run-1')).toBe(ndjson);
    expect(readRunLog(await copy.readLog('run-1')).resumes).toEqual(readRunLog(await store.readLog('run-1')).resumes);
  });

  const mark = { kind: 'resumed', v: '1.2', stepIndex: 1, resolution: null, at: '2026-01-01T00:00:00.000Z' };
  it('decodes a mark with its keys in order, whatever order they were written in', () => {
    const { at, resolution, stepIndex, v, kind } = mark;
    const rec = decodeRecord(JSON.stringify({ at, resolution, stepIndex, v, kind }));
    expect(Object.keys(rec)).toEqual(['kind', 'v', 'stepIndex', 'resolution', 'at']);
    expect(decodeRecord(JSON.stringify({ ...mark, resolution: 'apply_input' }))).toMatchObject({
      resolution: 'apply_input',
    });
  });

  it.each([
    ['a negative stepIndex', { stepIndex: -1 }],
    ['a fractional stepIndex', { stepIndex: 1.5 }],
    ['a stepIndex written as text', { stepIndex: '1' }],
    ['no stepIndex', { stepIndex: undefined }],
    ['no at', { at: undefined }],
    ['an unknown resolution', { resolution: 'later' }],
    ['no resolution', { resolution: undefined }],
    ['a resolution that is not a name', { resolution: 3 }],
  ])('refuses a mark with %s as corrupt', (_what, change) => {
    expect(() => decodeRecord(JSON.stringify({ ...mark, ...change }))).toThrow(CorruptLogError);
  });

  const startedLine = async (): Promise<Record<string, unknown>> => {
    const store = await crashAfter(1, plain(ADD_THEN_FINAL));
    return JSON.parse((await exportRun(store, 'run-1')).split('\n')[0] as string) as Record<string, unknown>;
  };
  it('keeps a run_started traceparent that is a W3C traceparent', async () => {
    const rec = decodeRecord(JSON.stringify({ ...(await startedLine()), traceparent: TP })) as RunStartedRecord;
    expect(rec.traceparent).toBe(TP);
  });

  it.each([
    ['an all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['an all-zero span id', `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['upper-case hex', TP.toUpperCase()],
    ['a short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['a trailing part', `${TP}-00`],
    ['a number', 42],
    ['null', null],
  ])('refuses a run_started whose traceparent holds %s as corrupt', async (_what, traceparent) => {
    const line = JSON.stringify({ ...(await startedLine()), traceparent });
    expect(() => decodeRecord(line)).toThrow(CorruptLogError);
  });

  it.each([
    ['past the next step at a boundary', 4, 2],
    ['before the next step at a boundary', 4, 0],
    ['past the step in flight', 5, 2],
    ['before the step in flight', 5, 0],
  ])('refuses a forged mark %s as corrupt, and importRun of it writes nothing', async (_what, writes, stepIndex) => {
    const store = await crashAfter(writes, plain(ADD_THEN_FINAL));
    const log = [...(await store.readLog('run-1')), { ...mark, stepIndex } as ResumedRecord];
    expect(() => readRunLog(log)).toThrow(CorruptLogError);
    const ndjson = `${await exportRun(store, 'run-1')}${JSON.stringify({ ...mark, stepIndex })}\n`;
    const target = new InMemoryStore();
    await expect(importRun(target, 'run-1', ndjson)).rejects.toBeInstanceOf(CorruptLogError);
    expect(await target.readLog('run-1')).toEqual([]);
    // The mark at the right step, with the resolution its log gives, is accepted.
    const resolution = readRunLog(log.slice(0, -1)).inFlight?.resolution ?? null;
    const right = { ...mark, stepIndex: 1, resolution } as ResumedRecord;
    expect(readRunLog([...log.slice(0, -1), right]).resumes).toHaveLength(1);
  });

  it.each([
    ['settle at a step boundary', 4, 'settle', null],
    ['no resolution for a step in flight', 5, null, 'reissue_model'],
    ['replay_action for a model call to reissue', 5, 'replay_action', 'reissue_model'],
  ])('refuses a mark whose resolution does not fit the log before it (%s)', async (_what, writes, bad, good) => {
    const store = await crashAfter(writes, plain(ADD_THEN_FINAL));
    const before = await store.readLog('run-1');
    const withMark = (resolution: string | null) => [...before, { ...mark, resolution } as ResumedRecord];
    expect(() => readRunLog(withMark(bad))).toThrow(CorruptLogError);
    expect(readRunLog(withMark(good)).resumes).toHaveLength(1);
  });

  it('refuses a mark after run_ended as corrupt', async () => {
    const h = plain(ADD_THEN_FINAL)(new InMemoryStore());
    await run(h.agent, h.request);
    const log = [...(await h.store.readLog('run-1')), { ...mark, stepIndex: 2 } as ResumedRecord];
    expect(() => readRunLog(log)).toThrow(CorruptLogError);
  });
});
