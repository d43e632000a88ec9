/**
 * Section `capacity` of `npm run bench` (docs/capacity.md): what one action step costs each store
 * that Node can run — records, bytes and durable operations — read back from what the store wrote,
 * never computed from the code. Each figure is the difference between a run of `n2` and one of
 * `n1` steps divided by `n2 - n1`: the cost of one more action step, without the run's fixed
 * writes (`run_started`, the final step, `run_ended`). The floor column holds what the code says
 * the figure must be (docs/design/stores-and-leases.md), so a ratio of 1.00 means code and
 * measurement agree.
 *
 * - InMemoryStore: records a step, and the bytes of its export (what a durable store would hold).
 * - FileStore: the log file's size on disk, and the writes and fsyncs counted by strace in a child
 *   process (bench/capacity-file.ts), the directory's fsyncs included.
 * - IndexedDBStore over fake-indexeddb: transactions counted at `IDBDatabase.transaction` with
 *   their durability, and the stored texts read back; once with an instant model, once with a
 *   model that answers after 60 ms (a record held back is then committed on its own after 50 ms).
 * - Whole-log reads: the heap a resume holds while it reads a log (its lines, the decoded records
 *   and the log's reading), per step — what bounds a run in a 128 MB Durable Object isolate.
 * @module
 */
import 'fake-indexeddb/auto';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeLog, exportRun, InMemoryStore, readRunLog, run } from '../src/core/index.ts';
import type { RunStore } from '../src/core/index.ts';
import { IndexedDBStore } from '../src/platform-web/index.ts';
import { capacityAgent, capacityRequest } from './capacity-workload.ts';
import type { Plan, Row } from './kernel.ts';
import { heapAfterGc } from './stats.ts';

/** What one run of a store left: its records and bytes, and its durable operations by name. */
type Tally = { readonly records: number; readonly bytes: number; readonly ops: Readonly<Record<string, number>> };

const utf8 = new TextEncoder();
const bytesOf = (text: string): number => utf8.encode(text).length;
const FILE_CHILD = fileURLToPath(new URL('./capacity-file.ts', import.meta.url));

async function runOn(store: RunStore, runId: string, n: number, obsChars: number, delayMs = 0): Promise<void> {
  const r = await run(capacityAgent(store, n, delayMs), capacityRequest(runId, n, obsChars));
  if (r.stopReason !== 'final_answer' || r.steps !== n) throw new Error(`capacity run ended ${r.stopReason}`);
}

async function memoryTally(n: number, obsChars: number): Promise<Tally> {
  const store = new InMemoryStore();
  await runOn(store, 'm', n, obsChars);
  return { records: (await store.readLog('m')).length, bytes: bytesOf(await exportRun(store, 'm')), ops: {} };
}

/** A FileStore run in a child under `strace -f -y`: the log's writes and fsyncs, and every fsync. */
async function fileTally(n: number, obsChars: number): Promise<Tally | null> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-capacity-'));
  try {
    const traceFile = join(dir, 'trace.txt');
    const calls = 'trace=write,writev,pwrite64,pwritev,pwritev2,fsync,fdatasync';
    const child = [process.execPath, '--import', 'tsx', FILE_CHILD, join(dir, 'logs'), String(n), String(obsChars)];
    const r = spawnSync('strace', ['-f', '-qq', '-y', '-e', calls, '-s', '0', '-o', traceFile, ...child], {
      encoding: 'utf8',
    });
    if (r.status !== 0) return null;
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as { records: number; bytes: number };
    const ops = { logWrites: 0, logFsyncs: 0, fsyncs: 0 };
    for (const line of (await readFile(traceFile, 'utf8')).split('\n')) {
      if (/ = -1 /.test(line)) continue;
      const onLog = /^\d+ +\w+\(\d+<[^>]*\.jsonl>/.test(line);
      const sync = /^\d+ +(?:fsync|fdatasync)\(/.test(line);
      if (sync) ops.fsyncs++;
      if (onLog && sync) ops.logFsyncs++;
      if (onLog && /^\d+ +(?:write|writev|pwrite64|pwritev2?)\(/.test(line)) ops.logWrites++;
    }
    return { records: out.records, bytes: out.bytes, ops };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Transactions opened through any IDBDatabase, by mode and durability, while `fn` runs. */
async function countingTransactions(fn: () => Promise<void>): Promise<Record<string, number>> {
  const proto = IDBDatabase.prototype;
  const original = proto.transaction;
  const counts: Record<string, number> = { strict: 0, relaxed: 0, default: 0, readonly: 0 };
  proto.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
    const [, mode, opts] = args;
    const key = mode !== 'readwrite' ? 'readonly' : (opts?.durability ?? 'default');
    counts[key] = (counts[key] ?? 0) + 1;
    return original.apply(this, args);
  } as IDBDatabase['transaction'];
  try {
    await fn();
  } finally {
    proto.transaction = original;
  }
  return counts;
}

let dbSeq = 0;

async function idbTally(n: number, obsChars: number, delayMs: number): Promise<Tally> {
  const dbName = `polyloop-capacity-${process.pid}-${dbSeq++}`;
  // Node has no Web Locks: the store warns that its lease is page-local, which changes no write.
  const store = new IndexedDBStore({ dbName, onWarning: () => undefined });
  const ops = await countingTransactions(() => runOn(store, 'i', n, obsChars, delayMs));
  await store.close();
  let rows = 0;
  const texts = await new Promise<string[]>((done, fail) => {
    const open = indexedDB.open(dbName);
    open.onerror = () => fail(open.error);
    open.onsuccess = () => {
      const req = open.result.transaction('records').objectStore('records').getAll();
      req.onerror = () => fail(req.error);
      req.onsuccess = () => {
        // A row holds one record's text (schema 3) or the texts of one transaction (schema 4).
        rows = req.result.length;
        done((req.result as { text?: string; texts?: string[] }[]).flatMap((r) => r.texts ?? [r.text ?? '']));
        open.result.close();
      };
    };
  });
  return { records: texts.length, bytes: texts.reduce((a, t) => a + bytesOf(t), 0), ops: { ...ops, rows } };
}

/** Heap held, per step, by a whole `n`-step log read as a resume reads it: lines, records, reading. */
async function wholeReadHeap(n: number): Promise<number> {
  const store = new InMemoryStore();
  await runOn(store, 'h', n, 0);
  const text = await exportRun(store, 'h');
  const before = heapAfterGc();
  // A fresh copy of each line, as a store reads it from its storage.
  const lines = text.split('\n').map((l) => ` ${l}`.slice(1));
  lines.pop();
  const decoded = decodeLog(lines);
  const view = readRunLog(decoded.records);
  const held = heapAfterGc() - before;
  if (view.steps !== n) throw new Error('the whole log was not read');
  return held / n;
}

function countRow(name: string, unit: string, value: number, floor: number | null, note?: string): Row {
  return {
    section: 'capacity',
    name,
    unit,
    value,
    floor,
    samples: [value],
    floorSamples: [],
    ...(note ? { note } : {}),
  };
}

/** One more action step's cost: (tally at n2 − tally at n1) / (n2 − n1), for each field. */
function perStep(a: Tally, b: Tally, steps: number): Tally {
  const ops: Record<string, number> = {};
  for (const k of Object.keys(b.ops)) ops[k] = ((b.ops[k] ?? 0) - (a.ops[k] ?? 0)) / steps;
  return { records: (b.records - a.records) / steps, bytes: (b.bytes - a.bytes) / steps, ops };
}

/** Section `capacity`: records, bytes and durable operations per action step in each store Node runs. */
export async function capacity(plan: Plan): Promise<Row[]> {
  const n1 = 100;
  const n2 = plan.quick ? 300 : 1_100;
  const span = n2 - n1;
  const rows: Row[] = [];
  const pad = 1_000;
  const note = `per action step: (run of ${n2} − run of ${n1}) / ${span}`;

  const mem = perStep(await memoryTally(n1, 0), await memoryTally(n2, 0), span);
  const memPad = perStep(await memoryTally(n1, pad), await memoryTally(n2, pad), span);
  rows.push(countRow('InMemoryStore: records', 'records/step', mem.records, 4, note));
  rows.push(countRow('bytes of the export (bench workload)', 'bytes/step', mem.bytes, null, note));
  rows.push(
    countRow(
      `copies of the observation a step stores`,
      'copies',
      (memPad.bytes - mem.bytes) / (pad - 'ok 1000'.length),
      null,
      `bytes/step with a ${pad}-character observation minus without, ÷ the characters added`,
    ),
  );
  const largest = await largestRecord(n1);
  rows.push(countRow('largest record of the bench workload', 'bytes', largest, null, 'run_started: the request'));

  const f1 = await fileTally(n1, 0);
  const f2 = f1 && (await fileTally(n2, 0));
  if (f1 && f2) {
    const f = perStep(f1, f2, span);
    rows.push(countRow('FileStore: bytes on disk', 'bytes/step', f.bytes, null, note));
    rows.push(countRow('FileStore: writes of the log', 'writes/step', f.ops['logWrites'] ?? 0, 3, 'strace'));
    rows.push(countRow('FileStore: fsyncs of the log', 'fsyncs/step', f.ops['logFsyncs'] ?? 0, 2, 'strace'));
    rows.push(countRow('FileStore: fsyncs, all files', 'fsyncs/step', f.ops['fsyncs'] ?? 0, 2, 'strace'));
  } else rows.push(countRow('FileStore: not measured (strace cannot trace a child here)', '', 0, null));

  for (const delay of [0, 60]) {
    // The delayed model waits 60 ms a call: fewer steps keep the section short.
    const [a, b] = delay ? [10, plan.quick ? 40 : 110] : [n1, n2];
    const i = perStep(await idbTally(a, 0, delay), await idbTally(b, 0, delay), b - a);
    const model = delay ? 'model answering after 60 ms' : 'instant model';
    const idbNote = `${model}; (run of ${b} − run of ${a}) / ${b - a}`;
    if (delay === 0) {
      rows.push(countRow('IndexedDBStore: bytes stored', 'bytes/step', i.bytes, null, idbNote));
      rows.push(countRow('IndexedDBStore: rows of `records`', 'rows/step', i.ops['rows'] ?? 0, null, idbNote));
    }
    rows.push(countRow('IndexedDBStore: strict transactions', 'tx/step', i.ops['strict'] ?? 0, 2, idbNote));
    rows.push(countRow('IndexedDBStore: relaxed transactions', 'tx/step', i.ops['relaxed'] ?? 0, null, idbNote));
  }

  const heapN = plan.quick ? 2_000 : 10_000;
  const heap = await wholeReadHeap(heapN);
  rows.push(
    countRow(
      `heap a whole-log read holds (lines, records, reading), N=${heapN.toLocaleString('en-US')}`,
      'bytes/step',
      heap,
      null,
      `128 MB ÷ this = ${Math.round(128e6 / heap).toLocaleString('en-US')} steps`,
    ),
  );
  return rows;
}

/** The largest record, in UTF-8 bytes, of an `n`-step run of the bench workload. */
async function largestRecord(n: number): Promise<number> {
  const store = new InMemoryStore();
  await runOn(store, 'l', n, 0);
  const lines = (await exportRun(store, 'l')).split('\n');
  return Math.max(...lines.map(bytesOf));
}
