/**
 * The IndexedDB schema of {@link IndexedDBStore} and its upgrades.
 *
 * Version history (each upgrade step runs in order inside one `versionchange` transaction, so an
 * upgrade lands whole or not at all):
 * - 1: object store `records`, key path `[runId, seq]`, value `{ runId, seq, text }` where `text`
 *   is the line the run's `LogCodec` writes. `seq` counts from 0 per run, so a key-range read returns write order.
 * - 2: object store `runs`, key path `runId`, value `{ runId, nextSeq, ended }`: the per-run
 *   sequence counter (no cursor scan per write) and an `ended` flag.
 * - 3: `runs` rows are `{ runId, nextSeq }`. The flag is gone: whether a run ended (and every
 *   other fact about it) is read from its log by core's `readRunLog`, the one reader of a log
 *   (docs/design/run-log.md#one-reader, decision 0021). Upgrading from 1 or 2 rebuilds `runs`
 *   from the record keys.
 *
 *   Since version 3, `runs` also holds a run's stop request (decision 0074): the row
 *   `{ runId: ['stop', runId], stop: { reason? } }`, under an array key, so it never equals a run's
 *   own row (a string key). Every upgrade keeps these rows.
 * - 4: a `records` row is one transaction, `{ runId, seq, texts }`: the texts of the records it
 *   committed, in write order, and `seq` counts rows from 0 per run. In Chromium each request of a
 *   transaction costs about as much again as the transaction's round trip, so a barrier that
 *   carries held records is one request, not one per record plus the counter's put (decision 0082).
 *   A row of an earlier version, `{ runId, seq, text }`, is a row of one record and stays as it is:
 *   its `seq` was its record's position, which is its row's, so new rows continue the same keys.
 *   `runs` holds stop rows only: the counters are deleted, and a writer reads the last row's key
 *   once per connection and run instead. A tab of an earlier release cannot read the new rows, so
 *   it is refused the upgraded database (`VersionError`) rather than shown broken logs.
 * @module
 */
import type { DBSchema, IDBPDatabase, IDBPTransaction } from 'idb';

/** The schema version this library opens. */
export const DB_VERSION = 4;

/** One stored row (version 4): the encoded texts one transaction committed to a run, in write order. */
export type StoredRow = { readonly runId: string; readonly seq: number; readonly texts: readonly string[] };

/** A row written before version 4: one encoded record. Read as it is, never rewritten. */
export type LegacyRow = { readonly runId: string; readonly seq: number; readonly text: string };

/** The encoded record texts a row holds, in write order, whichever version wrote it. */
export function rowTexts(row: StoredRow | LegacyRow): readonly string[] {
  return 'texts' in row ? row.texts : [row.text];
}

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
  records: { key: [string, number]; value: StoredRow | LegacyRow };
  runs: { key: string | StopKey; value: StopRow };
}

type UpgradeTx = IDBPTransaction<PolyLoopDB, ('records' | 'runs')[], 'versionchange'>;

/**
 * Bring a database from `oldVersion` to {@link DB_VERSION}. Only IndexedDB requests are awaited,
 * so the versionchange transaction stays alive; a failure aborts it and the open fails whole.
 * No record is read, decoded or rewritten: rows of every version are read as they are.
 */
export function upgradeSchema(db: IDBPDatabase<PolyLoopDB>, oldVersion: number, tx: UpgradeTx): void {
  if (oldVersion < 1) db.createObjectStore('records', { keyPath: ['runId', 'seq'] });
  if (oldVersion < 2) db.createObjectStore('runs', { keyPath: 'runId' });
  // The counters (and version 2's `ended` flags) are the rows under string keys. Every string
  // sorts before every array and `[]` before any other array, so this range is exactly them and
  // leaves the stop rows. A failed request aborts the upgrade by itself (the open then rejects with
  // its error), so its promise is only kept from being an unhandled rejection.
  if (oldVersion >= 2 && oldVersion < 4)
    tx.objectStore('runs')
      .delete(IDBKeyRange.bound('', [], false, true))
      .catch(() => undefined);
}
