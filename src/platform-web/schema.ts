/**
 * The IndexedDB schema of {@link IndexedDBStore} and its upgrades.
 *
 * Version history (each upgrade step runs in order inside one `versionchange` transaction, so an
 * upgrade lands whole or not at all):
 * - 1: object store `records`, key path `[runId, seq]`, value `{ runId, seq, text }` where `text`
 *   is `encodeRecord(rec)`. `seq` counts from 0 per run, so a key-range read returns write order.
 * - 2: object store `runs`, key path `runId`, value `{ runId, nextSeq, ended }`: the per-run
 *   sequence counter (no cursor scan per write) and the run list a page shows on reopen.
 *   Upgrading from 1 fills it from the existing records.
 * @module
 */
import type { DBSchema, IDBPDatabase, IDBPTransaction } from 'idb';

/** The schema version this library opens. */
export const DB_VERSION = 2;

/** One stored record: the encoded record text under its run and sequence number. */
export type StoredRecord = { readonly runId: string; readonly seq: number; readonly text: string };

/** Per-run bookkeeping (version 2). */
export type RunMeta = { readonly runId: string; readonly nextSeq: number; readonly ended: boolean };

/** The database shape, for `idb`'s typed API. */
export interface PolyLoopDB extends DBSchema {
  records: { key: [string, number]; value: StoredRecord };
  runs: { key: string; value: RunMeta };
}

type UpgradeTx = IDBPTransaction<PolyLoopDB, ('records' | 'runs')[], 'versionchange'>;

/** True when an encoded record is a `run_ended` record (a cheap look, no full decode). */
export function isEndedText(text: string): boolean {
  try {
    return (JSON.parse(text) as { kind?: unknown }).kind === 'run_ended';
  } catch {
    return false;
  }
}

/**
 * Bring a database from `oldVersion` to {@link DB_VERSION}. Only IndexedDB requests are awaited,
 * so the versionchange transaction stays alive; a failure aborts it and the open fails whole.
 */
export function upgradeSchema(db: IDBPDatabase<PolyLoopDB>, oldVersion: number, tx: UpgradeTx): void {
  if (oldVersion < 1) db.createObjectStore('records', { keyPath: ['runId', 'seq'] });
  if (oldVersion < 2) {
    db.createObjectStore('runs', { keyPath: 'runId' });
    // A failed request aborts the transaction by itself; abort() covers a throw in our own code.
    if (oldVersion >= 1) backfillRuns(tx).catch(() => abortQuietly(tx));
  }
}

function abortQuietly(tx: UpgradeTx): void {
  try {
    tx.abort();
  } catch {
    // already aborting
  }
}

async function backfillRuns(tx: UpgradeTx): Promise<void> {
  const runs = new Map<string, { nextSeq: number; ended: boolean }>();
  let cursor = await tx.objectStore('records').openCursor();
  while (cursor) {
    const { runId, seq, text } = cursor.value;
    const meta = runs.get(runId) ?? { nextSeq: 0, ended: false };
    runs.set(runId, { nextSeq: Math.max(meta.nextSeq, seq + 1), ended: meta.ended || isEndedText(text) });
    cursor = await cursor.continue();
  }
  const store = tx.objectStore('runs');
  await Promise.all([...runs].map(([runId, m]) => store.put({ runId, ...m })));
}
