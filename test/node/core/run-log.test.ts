/** The run log as a value in core: `readRunLog` as the one reader, `exportRun`/`importRun` on InMemoryStore. */
import { describe, expect, it } from 'vitest';
import {
  CorruptLogError,
  decodeLog,
  encodeLog,
  encodeRecord,
  exportRun,
  importRun,
  InMemoryStore,
  readRunLog,
  resume,
  run,
  RunExistsError,
  RunNotFoundError,
  SchemaVersionError,
} from '../../../src/core/index.ts';
import type { LogRecord, RunStore } from '../../../src/core/index.ts';
import { readReadablePrefix } from '../../../src/core/internal-entry.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { harness, makeTools, timeless } from './fixtures.ts';

async function referenceLog(): Promise<{
  log: readonly LogRecord[];
  trajectory: ReturnType<typeof timeless>;
  calls: string[];
}> {
  const h = harness();
  const result = await run(h.agent, h.request);
  return { log: await h.store.readLog('run-1'), trajectory: timeless(result.trajectory), calls: h.calls };
}

describe('readRunLog', () => {
  it('reads every prefix of a real log to the state, counters and in-flight resolution resume acts on', async () => {
    const { log } = await referenceLog();
    const seen = new Set<string>();
    for (let n = 0; n <= log.length; n++) {
      const view = readRunLog(log.slice(0, n));
      seen.add(`${view.state}:${view.inFlight?.resolution ?? '-'}`);
      expect(view.steps).toBe(view.trajectory.length);
      expect(view.validActions).toBe(view.trajectory.filter((s) => s.actionStatus === 'executed').length);
      expect(view.runId).toBe(n === 0 ? null : 'run-1');
      expect(view.pending).toBeNull();
      expect(view.ended !== null).toBe(view.state === 'ended');
      expect(view.inFlight !== null).toBe(view.state === 'in_flight');
    }
    // The standard script has a never tool ("note"): its action intent alone is a settle.
    expect([...seen].sort()).toEqual([
      'at_boundary:-',
      'ended:-',
      'in_flight:reinterpret',
      'in_flight:reissue_model',
      'in_flight:replay_action',
      'in_flight:settle',
      'not_started:-',
    ]);
  });

  it('throws CorruptLogError for a log that breaks the write protocol', async () => {
    const { log } = await referenceLog();
    expect(() => readRunLog(log.slice(1))).toThrow(CorruptLogError);
    expect(() => readRunLog([...log, log[0] as LogRecord])).toThrow(CorruptLogError);
  });
});

describe('readReadablePrefix', () => {
  it('reads a log readRunLog accepts whole, with no refusal', async () => {
    const { log } = await referenceLog();
    expect(readReadablePrefix(log)).toEqual({ records: log, view: readRunLog(log), refusal: null });
    expect(readReadablePrefix([])).toEqual({ records: [], view: readRunLog([]), refusal: null });
  });

  it('cuts a log that breaks the write protocol before the record readRunLog refuses, and keeps why', async () => {
    const { log } = await referenceLog();
    // A second run_started after four records: readRunLog refuses the log at record 5.
    const reading = readReadablePrefix([...log.slice(0, 4), log[0] as LogRecord, ...log.slice(4)]);
    expect(reading.records).toEqual(log.slice(0, 4));
    expect(reading.view).toEqual(readRunLog(log.slice(0, 4)));
    expect(reading.refusal).toBeInstanceOf(CorruptLogError);
    expect(reading.refusal?.line).toBe(5);
  });

  it('reads an empty log when even the first record is refused', async () => {
    const { log } = await referenceLog();
    const reading = readReadablePrefix(log.slice(1));
    expect(reading.records).toEqual([]);
    expect(reading.view.state).toBe('not_started');
    expect(reading.refusal?.line).toBe(1);
  });
});

describe('exportRun / importRun', () => {
  it('exports a run as NDJSON of encodeLog lines, and an import into another store resumes to the same trajectory', async () => {
    const inner = new InMemoryStore();
    const crashing = harness({
      store: faultyStore(inner, { crashAfterWrites: 9 }),
      tools: makeTools().map((t) => ({ ...t, replayPolicy: 'safe' as const })),
    });
    await expect(run(crashing.agent, crashing.request)).rejects.toThrow();
    const ndjson = await exportRun(inner, 'run-1');
    const records = await inner.readLog('run-1');
    expect(ndjson).toBe(encodeLog(records));
    expect(decodeLog(ndjson).records).toEqual(records);
    const target = new InMemoryStore();
    await importRun(target, 'run-1', ndjson);
    expect(await exportRun(target, 'run-1')).toBe(ndjson);
    const safe = harness({ store: target, tools: makeTools().map((t) => ({ ...t, replayPolicy: 'safe' as const })) });
    const resumed = await resume(safe.agent, safe.request);
    const reference = harness({ tools: makeTools().map((t) => ({ ...t, replayPolicy: 'safe' as const })) });
    expect(timeless(resumed.trajectory)).toEqual(timeless((await run(reference.agent, reference.request)).trajectory));
  });

  it('rejects the export of a run that has no log with RunNotFoundError', async () => {
    await expect(exportRun(new InMemoryStore(), 'nope')).rejects.toBeInstanceOf(RunNotFoundError);
  });

  const hostile: [string, (ndjson: string) => string, new (...a: never[]) => Error, RegExp][] = [
    ['a torn last line', (t) => t.slice(0, -20), CorruptLogError, /torn/],
    [
      'a corrupt middle line',
      (t) =>
        t
          .split('\n')
          .map((l, i) => (i === 2 ? '{oops' : l))
          .join('\n'),
      CorruptLogError,
      /imported log:3: not valid JSON/,
    ],
    [
      'a log of another run id',
      (t) => t.replace(/"runId":"run-1"/, '"runId":"run-2"'),
      Error,
      /is of run "run-2", not "run-1"/,
    ],
    ['schema major 2', (t) => t.replaceAll('"v":"1.2"', '"v":"2.0"'), SchemaVersionError, /2\.0/],
    [
      'records out of protocol order',
      (t) => {
        const l = t.trimEnd().split('\n');
        return `${[l[0], l[2], l[1], ...l.slice(3)].join('\n')}\n`;
      },
      CorruptLogError,
      /run log:2: result of step 0 without its model-call intent/,
    ],
    ['an empty text', () => '', Error, /empty/],
    ['50 MB of garbage', () => 'x'.repeat(50 * 1024 * 1024), CorruptLogError, /torn|JSON/],
  ];

  it.each(hostile)('refuses %s and writes nothing', async (_name, spoil, Err, message) => {
    const { log } = await referenceLog();
    const ndjson = log.map((r) => `${encodeRecord(r)}\n`).join('');
    const writes: string[] = [];
    const inner = new InMemoryStore();
    const spy: RunStore = {
      runStarted: (id, r) => (writes.push('runStarted'), inner.runStarted(id, r)),
      intent: (id, r) => (writes.push('intent'), inner.intent(id, r)),
      result: (id, rid, r) => (writes.push('result'), inner.result(id, rid, r)),
      step: (id, r) => (writes.push('step'), inner.step(id, r)),
      runEnded: (id, r) => (writes.push('runEnded'), inner.runEnded(id, r)),
      readLog: (id) => inner.readLog(id),
    };
    const e = await importRun(spy, 'run-1', spoil(ndjson)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Err);
    expect(String((e as Error).message)).toMatch(message);
    expect(writes).toEqual([]);
  });

  it('refuses to import over a run that already has a log, writing nothing', async () => {
    const { log } = await referenceLog();
    const ndjson = log.map((r) => `${encodeRecord(r)}\n`).join('');
    const target = new InMemoryStore();
    await importRun(target, 'run-1', ndjson);
    await expect(importRun(target, 'run-1', ndjson)).rejects.toBeInstanceOf(RunExistsError);
    expect(await target.readLog('run-1')).toHaveLength(log.length);
  });

  it('an imported ended run resumes to its stored result and runs nothing', async () => {
    const { log, trajectory } = await referenceLog();
    const target = new InMemoryStore();
    await importRun(target, 'run-1', log.map((r) => `${encodeRecord(r)}\n`).join(''));
    const h = harness({ store: target });
    const result = await resume(h.agent, h.request);
    expect(timeless(result.trajectory)).toEqual(trajectory);
    expect(h.calls).toEqual([]);
  });
});

describe('importRun of a record nested too deeply to write again', () => {
  it('is refused with CorruptLogError naming its line, and nothing is written', async () => {
    const { log } = await referenceLog();
    const lines = log.map((r) => encodeRecord(r));
    let deep = '1';
    for (let i = 0; i < 20_000; i++) deep = `[${deep}]`;
    // A result whose provider metadata JSON.parse reads but JSON.stringify cannot write again.
    const resultLine = lines.findIndex((l) => l.includes('"kind":"result"'));
    lines[resultLine] = (lines[resultLine] as string).replace('"reasoning":null', `"reasoning":null,"extra":${deep}`);
    const target = new InMemoryStore();
    const e = await importRun(target, 'run-1', `${lines.join('\n')}\n`).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CorruptLogError);
    expect(String((e as Error).message)).toMatch(
      new RegExp(`imported log:${resultLine + 1}: the record is nested more than 110 levels deep`),
    );
    expect(await target.readLog('run-1')).toEqual([]);
  });
});
