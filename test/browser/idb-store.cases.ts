/**
 * IndexedDBStore cases beyond the shared contract: schema upgrade, versionchange, decoding
 * checks, options. Web APIs only, so real Chromium (test/browser) and fake-indexeddb
 * (test/node/platform-web) run the same cases.
 */
import { deleteDB, openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { encodeRecord, isPolyLoopError } from '../../src/core/index.ts';
import type { LogRecord } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { DB_VERSION } from '../../src/platform-web/schema.ts';
import { actionIntent, ended, modelIntent, modelResult, started, stepWrite } from '../contract/run-store.contract.ts';

let counter = 0;
/** A database name no other case uses. */
export function freshDbName(prefix: string): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

type StoredRow = { runId: string; seq: number; text: string };

/** Write raw rows the way version 1 of the schema stored them. */
async function createVersion1(dbName: string, rows: readonly StoredRow[]): Promise<void> {
  const db = await openDB(dbName, 1, {
    upgrade(d) {
      d.createObjectStore('records', { keyPath: ['runId', 'seq'] });
    },
  });
  const tx = db.transaction('records', 'readwrite');
  await Promise.all([...rows.map((r) => tx.store.put(r)), tx.done]);
  db.close();
}

/** Write raw rows the way version 2 of the schema stored them (records, and a `runs` row with `ended`). */
async function createVersion2(
  dbName: string,
  rows: readonly StoredRow[],
  runs: readonly { runId: string; nextSeq: number; ended: boolean }[],
): Promise<void> {
  const db = await openDB(dbName, 2, {
    upgrade(d) {
      d.createObjectStore('records', { keyPath: ['runId', 'seq'] });
      d.createObjectStore('runs', { keyPath: 'runId' });
    },
  });
  const tx = db.transaction(['records', 'runs'], 'readwrite');
  await Promise.all([
    ...rows.map((r) => tx.objectStore('records').put(r)),
    ...runs.map((r) => tx.objectStore('runs').put(r)),
    tx.done,
  ]);
  db.close();
}

/**
 * Write raw rows the way version 3 of the schema stored them: a row per record, a `runs` row with
 * each run's next sequence number, and stop requests under `['stop', runId]`.
 */
export async function createVersion3(
  dbName: string,
  logs: Readonly<Record<string, readonly LogRecord[]>>,
  stops: Readonly<Record<string, { reason?: string }>>,
): Promise<void> {
  const db = await openDB(dbName, 3, {
    upgrade(d) {
      d.createObjectStore('records', { keyPath: ['runId', 'seq'] });
      d.createObjectStore('runs', { keyPath: 'runId' });
    },
  });
  const tx = db.transaction(['records', 'runs'], 'readwrite');
  await Promise.all([
    ...Object.entries(logs).flatMap(([runId, log]) => [
      ...rowsOf(runId, log).map((r) => tx.objectStore('records').put(r)),
      tx.objectStore('runs').put({ runId, nextSeq: log.length }),
    ]),
    ...Object.entries(stops).map(([runId, stop]) => tx.objectStore('runs').put({ runId: ['stop', runId], stop })),
    tx.done,
  ]);
  db.close();
}

function rowsOf(runId: string, recs: readonly LogRecord[]): StoredRow[] {
  return recs.map((rec, seq) => ({ runId, seq, text: encodeRecord(rec) }));
}

export function indexedDbStoreCases(label: string): void {
  describe(`IndexedDBStore (${label})`, () => {
    it('upgrades a version-1 database in place, keeping every log and continuing its sequence', async () => {
      const dbName = freshDbName('upgrade');
      const open = [started('open'), modelIntent(0)];
      const done = [started('done'), modelIntent(0), modelResult(0), actionIntent(0), stepWrite(0), ended(1)];
      await createVersion1(dbName, [...rowsOf('open', open), ...rowsOf('done', done)]);
      const store = new IndexedDBStore({ dbName });
      expect(await store.readLog('open')).toEqual(open);
      expect(await store.listRuns()).toEqual([
        { runId: 'done', records: 6, state: 'ended', ended: true, steps: 1, error: null },
        { runId: 'open', records: 2, state: 'in_flight', ended: false, steps: 0, error: null },
      ]);
      await store.result('open', 's0.model', modelResult(0));
      expect(await store.readLog('open')).toEqual([...open, modelResult(0)]);
      await store.close();
      const raw = await openDB(dbName);
      expect(raw.version).toBe(DB_VERSION);
      expect(await raw.get('records', ['open', 2])).toEqual({ runId: 'open', seq: 2, texts: [expect.any(String)] });
      expect(await raw.getAll('runs')).toEqual([]);
      raw.close();
      await deleteDB(dbName);
    });

    it('upgrades a version-2 database in place, dropping the ended flag it kept beside each run and continuing its sequence', async () => {
      const dbName = freshDbName('upgrade2');
      const open = [started('open'), modelIntent(0)];
      // A version-2 row that claims the run ended although its log says otherwise: the log wins.
      await createVersion2(dbName, rowsOf('open', open), [{ runId: 'open', nextSeq: 2, ended: true }]);
      const store = new IndexedDBStore({ dbName });
      expect(await store.listRuns()).toEqual([
        { runId: 'open', records: 2, state: 'in_flight', ended: false, steps: 0, error: null },
      ]);
      await store.result('open', 's0.model', modelResult(0));
      expect(await store.readLog('open')).toEqual([...open, modelResult(0)]);
      await store.close();
      const raw = await openDB(dbName);
      expect(raw.version).toBe(DB_VERSION);
      expect(await raw.getAllKeys('records')).toEqual([
        ['open', 0],
        ['open', 1],
        ['open', 2],
      ]);
      expect(await raw.getAll('runs')).toEqual([]);
      raw.close();
      await deleteDB(dbName);
    });

    it('upgrades a version-3 database in place: its rows stay as written, the counters go, a stop stays, new rows continue its keys', async () => {
      const dbName = freshDbName('upgrade3');
      const open = [started('open'), modelIntent(0)];
      const done = [started('done'), modelIntent(0), modelResult(0), actionIntent(0), stepWrite(0), ended(1)];
      await createVersion3(dbName, { open, done }, { open: { reason: 'enough' } });
      const store = new IndexedDBStore({ dbName, onWarning: () => undefined });
      expect(await store.readLog('done')).toEqual(done);
      expect(await store.listRuns()).toEqual([
        { runId: 'done', records: 6, state: 'ended', ended: true, steps: 1, error: null },
        { runId: 'open', records: 2, state: 'in_flight', ended: false, steps: 0, error: null },
      ]);
      const release = await store.acquire('open');
      expect(release.lost?.aborted).toBe(true);
      expect(release.lost?.reason).toMatchObject({ name: 'StopRequestedError', stop: { reason: 'enough' } });
      // A result alone is held; the step's transaction carries it, both in one row after the old ones.
      await store.result('open', 's0.model', modelResult(0));
      await store.step('open', stepWrite(0));
      await release();
      await store.close();
      const raw = await openDB(dbName);
      expect(raw.version).toBe(DB_VERSION);
      expect(await raw.getAll('records', IDBKeyRange.bound(['open', 0], ['open', 9]))).toEqual([
        ...rowsOf('open', open),
        { runId: 'open', seq: 2, texts: [expect.any(String), expect.any(String)] },
      ]);
      expect(await raw.getAll('records', IDBKeyRange.bound(['done', 0], ['done', 9]))).toEqual(rowsOf('done', done));
      expect(await raw.getAll('runs')).toEqual([{ runId: ['stop', 'open'], stop: { reason: 'enough' } }]);
      raw.close();
      const reopened = new IndexedDBStore({ dbName });
      expect(await reopened.readLog('open')).toEqual([...open, modelResult(0), stepWrite(0)]);
      await reopened.close();
      await deleteDB(dbName);
    });

    it('closes its connection when another tab deletes the database, instead of blocking it, and reopens after', async () => {
      const dbName = freshDbName('versionchange');
      const store = new IndexedDBStore({ dbName, onWarning: () => undefined });
      // A barrier, so the connection is open and the record stored (a run_started alone is held).
      await store.step('r', stepWrite(0));
      let blocked = false;
      await deleteDB(dbName, { blocked: () => (blocked = true) });
      expect(blocked).toBe(false);
      expect(await store.readLog('r')).toEqual([]);
      await store.step('r', stepWrite(0));
      expect(await store.readLog('r')).toHaveLength(1);
      await store.close();
      await deleteDB(dbName);
    });

    it('lets another tab upgrade to a newer version, then refuses that database with a StoreError', async () => {
      const dbName = freshDbName('newer');
      const store = new IndexedDBStore({ dbName });
      await store.runStarted('r', started('r'));
      const newer = await openDB(dbName, DB_VERSION + 1);
      newer.close();
      const err = await store.readLog('r').then(
        () => null,
        (e: unknown) => e,
      );
      expect(isPolyLoopError(err, 'store_error')).toBe(true);
      expect((err as Error & { cause?: { name?: string } }).cause?.name).toBe('VersionError');
      await deleteDB(dbName);
    });

    it('refuses a record written by a future schema major with SchemaVersionError', async () => {
      const dbName = freshDbName('major');
      await createVersion1(dbName, [{ runId: 'r', seq: 0, text: JSON.stringify({ ...started('r'), v: '2.0' }) }]);
      const store = new IndexedDBStore({ dbName });
      const err = await store.readLog('r').then(
        () => null,
        (e: unknown) => e,
      );
      expect(isPolyLoopError(err, 'schema_version')).toBe(true);
      await store.close();
      await deleteDB(dbName);
    });

    it('reports a damaged record with CorruptLogError naming its position, wherever it sits', async () => {
      const dbName = freshDbName('corrupt');
      const good = rowsOf('r', [started('r'), modelIntent(0)]);
      await createVersion1(dbName, [
        good[0]!,
        { runId: 'r', seq: 1, text: '{"kind":"intent",' },
        { ...good[1]!, seq: 2 },
      ]);
      const store = new IndexedDBStore({ dbName });
      const err = await store.readLog('r').then(
        () => null,
        (e: unknown) => e,
      );
      expect(isPolyLoopError(err, 'corrupt_log')).toBe(true);
      expect((err as { line?: number }).line).toBe(2);
      await store.close();
      await deleteDB(dbName);
    });

    it('refuses options without a database name or with an unknown lease mode', () => {
      expect(() => new IndexedDBStore({ dbName: '' })).toThrow(/dbName/);
      expect(() => new IndexedDBStore({ dbName: 'x', lease: 'maybe' as 'wait' })).toThrow(/lease/);
    });

    it('lists each run with the state, ended flag and step count readRunLog reads from its log', async () => {
      const dbName = freshDbName('list');
      const store = new IndexedDBStore({ dbName });
      await store.runStarted('c', started('c'));
      await store.intent('c', modelIntent(0));
      await store.runStarted('b', started('b'));
      await store.runStarted('a', started('a'));
      await store.runEnded('a', ended(0));
      expect(await store.listRuns()).toEqual([
        { runId: 'a', records: 2, state: 'ended', ended: true, steps: 0, error: null },
        { runId: 'b', records: 1, state: 'at_boundary', ended: false, steps: 0, error: null },
        { runId: 'c', records: 2, state: 'in_flight', ended: false, steps: 0, error: null },
      ]);
      await store.close();
      await deleteDB(dbName);
    });

    it('lists a run whose log readRunLog refuses with that error and no state, and still lists the others', async () => {
      const dbName = freshDbName('list-bad');
      // A record after run_ended: a classifier that only looked for run_ended would call it ended.
      const afterEnd = rowsOf('after-end', [started('after-end'), ended(0), modelIntent(0)]);
      const damaged = rowsOf('damaged', [started('damaged')]);
      await createVersion1(dbName, [
        ...afterEnd,
        ...damaged,
        { runId: 'damaged', seq: 1, text: '{"kind":' },
        ...rowsOf('good', [started('good')]),
      ]);
      const store = new IndexedDBStore({ dbName });
      const runs = await store.listRuns();
      expect(runs.map((r) => [r.runId, r.records, r.state, r.ended])).toEqual([
        ['after-end', 3, null, false],
        ['damaged', 2, null, false],
        ['good', 1, 'at_boundary', false],
      ]);
      expect(runs[0]?.error).toMatch(/records after run_ended/);
      expect(runs[1]?.error).toMatch(/indexeddb:.*\/damaged:2: not valid JSON/);
      expect(runs[2]?.error).toBeNull();
      await store.close();
      await deleteDB(dbName);
    });
  });
}
