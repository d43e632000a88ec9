/**
 * The IndexedDB schema of {@link IndexedDBStore} and its upgrades.
 *
 * Version history (each upgrade step runs in order inside one `versionchange` transaction, so an
 * upgrade lands whole or not at all):
 * - 1: object store `records`, key path `[runId, seq]`, value `{ runId, seq, text }` where `text`
 *   is `encodeRecord(rec)`. `seq` counts from 0 per run, so a key-range read returns write order.
 * - 2: object store `runs`, key path `runId`, value `{ runId, nextSeq, ended }`: the per-run
 *   sequence counter (no cursor scan per write) and an `ended` flag.
 * - 3: `runs` rows are `{ runId, nextSeq }`. The flag is gone: whether a run ended (and every
 *   other fact about it) is read from its log by core's `readRunLog`, the one reader of a log
 *   (docs/design/run-log.md#one-reader, decision 0021). Upgrading from 1 or 2 rebuilds `runs`
 *   from the record keys.
 *
 * Since version 3, `runs` also holds a run's stop request (decision 0074): the row
 * `{ runId: ['stop', runId], stop: { reason? } }`. Its key is an array, so it never equals a run's
 * own row (a string key), and nothing reads `records` differently: a tab of an earlier release
 * opens the same database and sees the same logs. So no version step: an upgrade would lock such a
 * tab out (`VersionError`). An upgrade that clears or rebuilds `runs` must keep these rows.
 * @module
 */
import type { DBSchema, IDBPDatabase, IDBPTransaction } from 'idb';

/** The schema version this library opens. */
export const DB_VERSION = 3;

/** One stored record: the encoded record text under its run and sequence number. */
export type StoredRecord = { readonly runId: string; readonly seq: number; readonly text: string };

/** Per-run bookkeeping (version 3): the next sequence number, so a write needs no cursor scan. */
export type RunMeta = { readonly runId: string; readonly nextSeq: number };

/** The `runs` key of a run's stop request: an array, so no run id (a string) can equal it. */
export type StopKey = ['stop', string];

/** A stop request kept for a run (`IndexedDBStore.requestStop`), in `runs` under its {@link StopKey}. */
export type StopRow = { readonly runId: StopKey; readonly stop: { readonly reason?: string } };

/** The `runs` key of the stop request of `runId`. */
export function stopKey(runId: string): StopKey {
  return ['stop', runId];
}

/** The database shape, for `idb`'s typed API. */
export interface PolyLoopDB extends DBSchema {
  records: { key: [string, number]; value: StoredRecord };
  runs: { key: string | StopKey; value: RunMeta | StopRow };
}

type UpgradeTx = IDBPTransaction<PolyLoopDB, ('records' | 'runs')[], 'versionchange'>;

/**
 * Bring a database from `oldVersion` to {@link DB_VERSION}. Only IndexedDB requests are awaited,
 * so the versionchange transaction stays alive; a failure aborts it and the open fails whole.
 */
export function upgradeSchema(db: IDBPDatabase<PolyLoopDB>, oldVersion: number, tx: UpgradeTx): void {
  if (oldVersion < 1) db.createObjectStore('records', { keyPath: ['runId', 'seq'] });
  if (oldVersion < 2) db.createObjectStore('runs', { keyPath: 'runId' });
  // A failed request aborts the transaction by itself; abort() covers a throw in our own code.
  if (oldVersion >= 1 && oldVersion < 3) rebuildRuns(tx).catch(() => abortQuietly(tx));
}

function abortQuietly(tx: UpgradeTx): void {
  try {
    tx.abort();
  } catch {
    // already aborting
  }
}

/** Rows `{ runId, nextSeq }` from the record keys alone: no record is decoded or classified here. */
async function rebuildRuns(tx: UpgradeTx): Promise<void> {
  const nextSeq = new Map<string, number>();
  let cursor = await tx.objectStore('records').openKeyCursor();
  while (cursor) {
    const [runId, seq] = cursor.key;
    nextSeq.set(runId, Math.max(nextSeq.get(runId) ?? 0, seq + 1));
    cursor = await cursor.continue();
  }
  const runs = tx.objectStore('runs');
  await runs.clear();
  await Promise.all([...nextSeq].map(([runId, n]) => runs.put({ runId, nextSeq: n })));
}
