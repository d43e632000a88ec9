/**
 * The page of bench/long-browser.ts: the long run (bench/long-workload.ts) on IndexedDBStore in
 * the tab, its crash and its resume. The heap reading comes from Node over the DevTools protocol
 * (`longHeap`, exposed by the script: a forced GC, then the isolate's used heap); stored bytes are
 * the UTF-8 length of the record texts the store put in its `records` object store (a row holds one
 * record's text, or since schema 4 the texts of one transaction).
 */
import { IndexedDBStore } from '../src/platform-web/index.ts';
import { formatLong } from './long-report.ts';
import { crashedLongRun, LONG_SLICE, resumeLong, utf8Bytes } from './long-workload.ts';
import type { LongProbe } from './long-workload.ts';

type Page = typeof globalThis & { longHeap(): Promise<number>; longRun?: (n: number) => Promise<unknown> };
const page = globalThis as Page;
const RUN = 'long';

/** A `records` row: one record's text (schema 3), or the texts one transaction wrote (schema 4). */
type Row = { readonly seq: number; readonly text?: string; readonly texts?: readonly string[] };
const textsOf = (row: Row): readonly string[] => row.texts ?? (row.text === undefined ? [] : [row.text]);

function openDb(name: string): Promise<IDBDatabase> {
  return new Promise((ok, fail) => {
    const req = indexedDB.open(name);
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
}

/** Visit the run's records after `seq` (a read-only cursor), returning how many and their bytes. */
async function recordsAfter(dbName: string, seq: number): Promise<{ bytes: number; last: number }> {
  const db = await openDb(dbName);
  try {
    return await new Promise((ok, fail) => {
      const range = IDBKeyRange.bound([RUN, seq + 1], [RUN, Number.POSITIVE_INFINITY]);
      const req = db.transaction('records', 'readonly').objectStore('records').openCursor(range);
      let bytes = 0;
      let last = seq;
      req.onsuccess = () => {
        const c = req.result;
        if (!c) return ok({ bytes, last });
        const v = c.value as Row;
        for (const text of textsOf(v)) bytes += utf8Bytes(text);
        last = v.seq;
        c.continue();
      };
      req.onerror = () => fail(req.error);
    });
  } finally {
    db.close();
  }
}

/** The resume's floor: `getAll` of the run's records and a `JSON.parse` of each text. */
async function floorMs(dbName: string): Promise<{ ms: number; records: number }> {
  const t0 = performance.now();
  const db = await openDb(dbName);
  const rows = await new Promise<Row[]>((ok, fail) => {
    const range = IDBKeyRange.bound([RUN, 0], [RUN, Number.POSITIVE_INFINITY]);
    const req = db.transaction('records', 'readonly').objectStore('records').getAll(range);
    req.onsuccess = () => ok(req.result as Row[]);
    req.onerror = () => fail(req.error);
  });
  let parsed = 0;
  for (const r of rows) for (const text of textsOf(r)) parsed += JSON.parse(text) === null ? 0 : 1;
  db.close();
  return { ms: performance.now() - t0, records: parsed };
}

page.longRun = async (n: number) => {
  const dbName = `long-${Date.now()}`;
  let seen = -1;
  const probe: LongProbe = {
    heap: () => page.longHeap(),
    async storedSince() {
      const { bytes, last } = await recordsAfter(dbName, seen);
      seen = last;
      return bytes;
    },
  };
  const every = Math.min(LONG_SLICE, n / 10);
  const store = new IndexedDBStore({ dbName });
  const figures = await crashedLongRun({ store, runId: RUN, n, probe, every });
  const floors = [await floorMs(dbName), await floorMs(dbName), await floorMs(dbName)];
  const resumed = await resumeLong({ store: new IndexedDBStore({ dbName }), runId: RUN, n, probe });
  const estimate = await navigator.storage.estimate();
  const text = formatLong('IndexedDBStore (Chromium)', figures, {
    resumeMs: [resumed.ms],
    floorMs: floors.map((f) => f.ms),
    records: floors[0]?.records ?? 0,
    heapAtResume: resumed.heapBytes,
  });
  return { text, figures, resumeMs: resumed.ms, floors, usage: estimate.usage ?? null };
};
document.body.dataset['ready'] = 'true';
