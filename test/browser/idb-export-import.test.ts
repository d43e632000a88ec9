/**
 * exportRun / importRun with IndexedDBStore in real Chromium
 * (docs/design/run-log.md#export-and-import): the same run exports as the same bytes as from
 * InMemoryStore; a log InMemoryStore wrote in this page, cut at any of its writes, imports into
 * IndexedDB and resumes to the uninterrupted trajectory (its log the uninterrupted one but for the
 * resuming driver's mark); a hostile import writes nothing; an import
 * holds the run's Web Lock against a second driver. A database the previous schema version (3)
 * wrote, cut at any of its writes, exports the same bytes when this version opens it, and resumes
 * to the uninterrupted trajectory. The clock is frozen so two runs of the demo
 * agent write identical timestamps.
 */
import { openDB } from 'idb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportRun, importRun, InMemoryStore, isPolyLoopError, resume, run } from '../../src/core/index.ts';
import type { PolyLoopErrorCode, RunStore, StepRecord } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { collectingSink, faultyStore } from '../../src/testing/index.ts';
import { demoAgent, demoRequest } from '../../examples/web/agent.ts';
import { createVersion3, freshDbName } from './idb-store.cases.ts';

const PACE = { thinkMs: 0, toolMs: 0 };

/** Run (or resume) the demo run `r` on `store`; the trajectory it ends with. */
async function drive(store: RunStore, mode: 'run' | 'resume'): Promise<readonly StepRecord[]> {
  const result = await (mode === 'run' ? run : resume)(
    demoAgent(store, collectingSink(), PACE),
    demoRequest('r', PACE),
  );
  return result.trajectory;
}

/** The demo run on `inner`, "crashed" after `k` writes (Infinity: uninterrupted); its write count. */
async function runCut(inner: RunStore, k: number): Promise<number> {
  const store = faultyStore(inner, { crashAfterWrites: k });
  await drive(store, 'run').catch((e: unknown) => {
    if (!store.crashed) throw e;
  });
  return store.writes.length;
}

/** Every row of the store's two object stores, read raw (not through the store). */
async function rawRows(dbName: string): Promise<{ records: unknown[]; runs: unknown[] }> {
  const db = await openDB(dbName);
  const out = { records: await db.getAll('records'), runs: await db.getAll('runs') };
  db.close();
  return out;
}

let reference: { ndjson: string; trajectory: readonly StepRecord[]; writes: number };

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-12-01T00:00:00.000Z') });
  const memory = new InMemoryStore();
  const writes = await runCut(memory, Number.POSITIVE_INFINITY);
  reference = { ndjson: await exportRun(memory, 'r'), trajectory: await drive(memory, 'resume'), writes };
});

afterAll(() => {
  vi.useRealTimers();
});

const isMark = (line: string): boolean => line.startsWith('{"kind":"resumed",');

/**
 * A resumed run's export: the log it found, then the mark of the driver that carried it on (none
 * when it found the run ended), then the rest of the uninterrupted run's log.
 */
function expectResumed(exported: string, found: string, label: string): void {
  expect(exported.startsWith(found), label).toBe(true);
  const ended = found.includes('{"kind":"run_ended",');
  expect(isMark(exported.slice(found.length)), label).toBe(!ended);
  expect(exported.split('\n').filter(isMark), label).toHaveLength(ended ? 0 : 1);
  const unmarked = exported
    .split('\n')
    .filter((l) => !isMark(l))
    .join('\n');
  expect(unmarked, label).toBe(reference.ndjson);
}

describe('exportRun from IndexedDBStore (Chromium)', () => {
  it('exports the same run as the same bytes as InMemoryStore, cut at each of its writes and whole', async () => {
    // 25 records; the five action steps write their model result and action intent as one (resultAndIntent).
    expect(reference.writes).toBe(20);
    for (let k = 1; k <= reference.writes; k++) {
      const memory = new InMemoryStore();
      const idb = new IndexedDBStore({ dbName: freshDbName('export') });
      await runCut(memory, k);
      await runCut(idb, k);
      const fromIdb = await exportRun(idb, 'r');
      expect(fromIdb, `cut after ${k} writes`).toBe(await exportRun(memory, 'r'));
      // Each write added one record, or two (a model result with its action intent).
      expect(fromIdb.split('\n').length - 1).toBeGreaterThanOrEqual(k);
      await idb.close();
    }
  });
});

describe('A database the previous schema version wrote, opened by this one (Chromium)', () => {
  it('exports each run cut at each of its writes as the same bytes, and resumes it to the uninterrupted trajectory and log', async () => {
    for (let k = 1; k <= reference.writes; k++) {
      const memory = new InMemoryStore();
      await runCut(memory, k);
      const found = await exportRun(memory, 'r');
      // As version 3 stored it: a row per record, each run's next sequence number, a stale stop.
      const dbName = freshDbName('version3');
      await createVersion3(dbName, { r: await memory.readLog('r') }, { gone: { reason: 'its log was removed' } });
      const idb = new IndexedDBStore({ dbName });
      expect(await exportRun(idb, 'r'), `cut after ${k} writes`).toBe(found);
      expect(await drive(idb, 'resume'), `cut after ${k} writes`).toEqual(reference.trajectory);
      const resumed = await exportRun(idb, 'r');
      expectResumed(resumed, found, `cut after ${k} writes`);
      await idb.close();
      // A reloaded page reads the rows of both versions as one log.
      const reloaded = new IndexedDBStore({ dbName });
      expect(await exportRun(reloaded, 'r'), `cut after ${k} writes`).toBe(resumed);
      await reloaded.close();
      expect((await rawRows(dbName)).runs, `cut after ${k} writes`).toEqual([
        { runId: ['stop', 'gone'], stop: { reason: 'its log was removed' } },
      ]);
    }
  });
});

describe('importRun into IndexedDBStore (Chromium)', () => {
  it('imports a log InMemoryStore wrote in this page, cut at each of its writes, and resumes it to the uninterrupted trajectory and log', async () => {
    for (let k = 1; k <= reference.writes; k++) {
      const memory = new InMemoryStore();
      await runCut(memory, k);
      const ndjson = await exportRun(memory, 'r');
      const dbName = freshDbName('import');
      await importRun(new IndexedDBStore({ dbName }), 'r', ndjson);
      // A new store instance, as a reloaded page would open.
      const idb = new IndexedDBStore({ dbName });
      expect(await exportRun(idb, 'r'), `cut after ${k} writes`).toBe(ndjson);
      expect(await drive(idb, 'resume'), `cut after ${k} writes`).toEqual(reference.trajectory);
      expectResumed(await exportRun(idb, 'r'), ndjson, `cut after ${k} writes`);
      await idb.close();
    }
  });

  const hostile: [string, (ndjson: string) => string, PolyLoopErrorCode][] = [
    ['a torn last line', (t) => t.slice(0, -20), 'corrupt_log'],
    [
      'a corrupt middle line',
      (t) =>
        t
          .split('\n')
          .map((l, i) => (i === 5 ? '{"kind":"intent",' : l))
          .join('\n'),
      'corrupt_log',
    ],
    ['a log of another run id', (t) => t.replace('"runId":"r"', '"runId":"other"'), 'invalid_request'],
    ['a log of schema major 2', (t) => t.replace(/"v":"1\.\d+"/g, '"v":"2.0"'), 'schema_version'],
  ];

  it.each(hostile)('refuses %s and leaves both object stores empty', async (_name, spoil, code) => {
    const dbName = freshDbName('hostile');
    const store = new IndexedDBStore({ dbName });
    await store.listRuns(); // the database and its object stores exist before the import
    const err = await importRun(store, 'r', spoil(reference.ndjson)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(err, code), String(err)).toBe(true);
    expect(await rawRows(dbName)).toEqual({ records: [], runs: [] });
    await store.close();
  });

  it('refuses to import over a run that has a log, adding nothing to it', async () => {
    const dbName = freshDbName('exists');
    const store = new IndexedDBStore({ dbName });
    await runCut(store, 5);
    const before = await rawRows(dbName);
    const err = await importRun(store, 'r', reference.ndjson).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(err, 'run_exists')).toBe(true);
    expect(await rawRows(dbName)).toEqual(before);
    await store.close();
  });
});

/**
 * `store` whose writes stop before the `at`-th one until `open()`: an import caught in the middle,
 * lease held. `reached` resolves once it is stopped there.
 */
function pausedAt(store: IndexedDBStore, at: number): { store: RunStore; reached: Promise<void>; open: () => void } {
  let writes = 0;
  let open: () => void = () => undefined;
  let arrive: () => void = () => undefined;
  const gate = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (arrive = r));
  const pause = async (): Promise<void> => {
    writes += 1;
    if (writes !== at) return;
    arrive();
    await gate;
  };
  const paused: RunStore = {
    runStarted: async (id, rec) => (await pause(), store.runStarted(id, rec)),
    intent: async (id, rec) => (await pause(), store.intent(id, rec)),
    result: async (id, rid, rec) => (await pause(), store.result(id, rid, rec)),
    step: async (id, rec) => (await pause(), store.step(id, rec)),
    runEnded: async (id, rec) => (await pause(), store.runEnded(id, rec)),
    readLog: (id) => store.readLog(id),
    acquire: (id, o) => store.acquire(id, o),
  };
  return { store: paused, reached, open };
}

/** Start importing the reference log cut after 12 writes; it stops before its 6th write. */
async function importInProgress(dbName: string): Promise<{ done: Promise<void>; open: () => void; ndjson: string }> {
  const memory = new InMemoryStore();
  await runCut(memory, 12);
  const ndjson = await exportRun(memory, 'r');
  const importer = pausedAt(new IndexedDBStore({ dbName }), 6);
  const done = importRun(importer.store, 'r', ndjson);
  await importer.reached;
  return { done, open: importer.open, ndjson };
}

describe('importRun holds the Web Lock of the run (Chromium)', () => {
  it('refuses a second connection with a refusing lease that resumes the run during the import, writing nothing', async () => {
    const dbName = freshDbName('import-lease');
    const { done, open, ndjson } = await importInProgress(dbName);
    const second = new IndexedDBStore({ dbName, lease: 'refuse' });
    const err = await drive(second, 'resume').then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(err, 'run_locked'), String(err)).toBe(true);
    expect(await second.readLog('r')).toHaveLength(5);
    open();
    await done;
    expect(await exportRun(second, 'r')).toBe(ndjson);
    expect(await drive(second, 'resume')).toEqual(reference.trajectory);
    await second.close();
  });

  it('makes a second connection with a waiting lease wait until the import is done, then resume on the whole log', async () => {
    const dbName = freshDbName('import-lease');
    const { done, open, ndjson } = await importInProgress(dbName);
    const second = new IndexedDBStore({ dbName });
    let settled = false;
    const resumed = drive(second, 'resume').finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toBe(false);
    expect(await second.readLog('r')).toHaveLength(5);
    open();
    await done;
    expect(await resumed).toEqual(reference.trajectory);
    expectResumed(await exportRun(second, 'r'), ndjson, 'resumed after the import');
    await second.close();
  });
});
