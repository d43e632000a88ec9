/**
 * The lean form of a 1.2 log (docs/design/run-log.md#the-lean-form): each model reply's text is
 * written once, a step refers to what its step's records hold, a reader returns the very records
 * the writer was given, and a writer that has not seen the step in flight writes it in full.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { benchAgent, benchRequest } from '../../../bench/fixtures.ts';
import {
  decodeLog,
  decodeRecord,
  encodeLog,
  encodeRecord,
  exportRun,
  InMemoryStore,
  LogCodec,
  resume,
  run,
} from '../../../src/core/index.ts';
import type { LogRecord, RunStore, StepWriteRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { harness, NATIVE_SCRIPT, nativeInterpreter } from './fixtures.ts';

/** A store that keeps a copy of every record object it was given, as given, beside an InMemoryStore. */
function recording(): { store: RunStore; given: LogRecord[]; inner: InMemoryStore } {
  const inner = new InMemoryStore();
  const given: LogRecord[] = [];
  const keep = <T extends LogRecord>(rec: T): T => {
    given.push(structuredClone(rec));
    return rec;
  };
  const store: RunStore = {
    runStarted: (id, r) => inner.runStarted(id, keep(r)),
    intent: (id, r) => inner.intent(id, keep(r)),
    result: (id, rid, r) => inner.result(id, rid, keep(r)),
    step: (id, r) => inner.step(id, keep(r)),
    runEnded: (id, r) => inner.runEnded(id, keep(r)),
    inputRequest: (id, r) => inner.inputRequest(id, keep(r)),
    input: (id, r) => inner.input(id, keep(r)),
    callResult: (id, r) => inner.callResult(id, keep(r)),
    readLog: (id) => inner.readLog(id),
  };
  return { store, given, inner };
}

const lines = (ndjson: string): string[] => ndjson.trimEnd().split('\n');

describe('the lean form of a log', () => {
  it('writes each model reply’s text once, in its result record', async () => {
    const h = harness();
    expect((await run(h.agent, h.request)).stopReason).toBe('final_answer');
    const ndjson = await exportRun(h.store, 'run-1');
    const records = decodeLog(ndjson).records;
    const replies = records.filter((r) => r.kind === 'result').map((r) => JSON.stringify(r.reply.text).slice(1, -1));
    expect(replies.length).toBeGreaterThan(2);
    for (const text of replies) expect(ndjson.split(text).length - 1).toBe(1);
    // Read back, the step records hold the text again: only the bytes changed.
    const steps = records.filter((r): r is StepWriteRecord => r.kind === 'step');
    expect(steps.map((s) => s.step.modelText)).toEqual(
      records.flatMap((r) => (r.kind === 'result' ? [r.reply.text] : [])),
    );
  });

  it('takes at most 600 bytes an action step for the bench workload, against about 1,450 written in full', async () => {
    const n = 2_100;
    const store = new InMemoryStore();
    expect((await run(benchAgent(store, n), benchRequest('lean', n))).stopReason).toBe('final_answer');
    const records = await store.readLog('lean');
    const lean = lines(encodeLog(records));
    const full = records.map(encodeRecord);
    // Steps 1,000 to 1,999: four-digit indices, four records each (model intent, result, action intent, step).
    const from = lean.findIndex((l) => l.includes('"stepIndex":1000,'));
    const to = lean.findIndex((l) => l.includes('"stepIndex":2000,') || l.includes('"kind":"run_ended"'));
    const perStep = (ls: readonly string[]): number => ls.slice(from, to).reduce((a, l) => a + l.length + 1, 0) / 1_000;
    expect(to - from).toBe(4_000);
    expect(perStep(lean)).toBeLessThanOrEqual(600);
    expect(perStep(full)).toBeGreaterThan(1_400);
  });

  it.each([
    ['json actions, a never tool and a final answer', {}],
    [
      'native tool calls with reasoning, several calls and content blocks',
      { script: NATIVE_SCRIPT, interpreter: nativeInterpreter(), request: { parallelToolCalls: 4 } },
    ],
  ] as const)('gives back the very records the writer was given: %s', async (_label, opts) => {
    const rec = recording();
    const h = harness({ ...opts, store: rec.store });
    await run(h.agent, h.request);
    expect(rec.given.length).toBeGreaterThan(4);
    expect(await rec.inner.readLog('run-1')).toEqual(rec.given);
    expect(decodeLog(encodeLog(rec.given)).records).toEqual(rec.given);
  });

  it('writes out a step field that differs from what a reader would derive, and reads it as written', async () => {
    const h = harness();
    await run(h.agent, h.request);
    const records = await h.store.readLog('run-1');
    const forged = records.map((r) =>
      r.kind === 'step' && r.step.stepIndex === 0
        ? {
            ...r,
            step: {
              ...r.step,
              modelText: 'not the reply',
              usage: { inputTokens: 7, outputTokens: 1 },
              actionRepr: 'x()',
            },
          }
        : r,
    );
    const text = encodeLog(forged);
    expect(text).toContain('"modelText":"not the reply"');
    expect(decodeLog(text).records).toEqual(forged);
  });

  it('keeps a step key named __proto__ as data through the lean form', () => {
    const started = decodeLog(encodeLog([])).records;
    expect(started).toEqual([]);
    const step = decodeRecord(
      '{"kind":"step","v":"1.2","step":{"stepIndex":0,"decision":"final","finalAnswer":"a","__proto__":{"x":1},' +
        '"startedAt":"","endedAt":""}}',
    );
    const back = decodeLog(encodeLog([step])).records[0] as StepWriteRecord;
    expect(Object.hasOwn(back.step, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(back.step)).toBe(Object.prototype);
    expect(back).toEqual(step);
  });

  it('reads a lean step alone with its defaults only: a log is read in order', async () => {
    const h = harness();
    await run(h.agent, h.request);
    const exported = lines(await exportRun(h.store, 'run-1'));
    const stepLine = exported.find((l) => l.startsWith('{"kind":"step"')) as string;
    const alone = decodeRecord(stepLine) as StepWriteRecord;
    const inOrder = new LogCodec();
    const read = exported.map((l) => inOrder.decode(l));
    const inLog = read.find((r): r is StepWriteRecord => r.kind === 'step') as StepWriteRecord;
    expect(alone.step.modelText).toBeNull();
    expect(inLog.step.modelText).not.toBeNull();
    expect(read).toEqual(decodeLog(exported).records);
  });
});

describe('a store that joins a run part way', () => {
  it('writes the step in flight in full, and the steps after it lean', async () => {
    const dir = await tempDir('lean-join-');
    const first = new FileStore({ dir });
    // Crash after run_started, the model intent and the joint result + action intent of step 0.
    const crashing = harness({ store: faultyStore(first, { crashAfterWrites: 3 }) });
    await expect(run(crashing.agent, crashing.request)).rejects.toThrow();
    const second = new FileStore({ dir });
    const h = harness({ store: second });
    expect((await resume(h.agent, h.request)).stopReason).toBe('final_answer');
    const written = lines(await readFile(second.logPath('run-1'), 'utf8'));
    const steps = written.filter((l) => l.startsWith('{"kind":"step"'));
    expect(steps[0]).toContain('"modelText"');
    expect(steps.slice(1).some((l) => l.includes('"modelText"'))).toBe(false);
    // Both forms read as the same records, and export in the lean form.
    const records = await second.readLog('run-1');
    expect(decodeLog(encodeLog(records)).records).toEqual(records);
    expect(await exportRun(second, 'run-1')).toBe(encodeLog(records));
  });
});
