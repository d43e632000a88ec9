/**
 * `polyloop/web` — run agents in a browser tab that survive a reload: {@link IndexedDBStore}
 * (IndexedDB via `idb`, one strict transaction per barrier, the records in between held for it)
 * with a Web Locks run lease, so two tabs never drive one run.
 * @module
 */
export { IndexedDBStore } from './idb-store.ts';
export type { IndexedDBStoreOptions } from './idb-store.ts';
export type { StoredRunInfo } from './run-info.ts';
export type { LeaseMode } from './lease.ts';
// Not exported: leaseName (the Web Locks name of a run's lease) and DB_VERSION (the database's
// schema version) — IndexedDBStore uses them; they are no API of their own.
