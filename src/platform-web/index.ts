/**
 * `polyloop/web` — run agents in a browser tab that survive a reload: {@link IndexedDBStore}
 * (IndexedDB via `idb`, one strict transaction per barrier, the records in between held for it)
 * with a Web Locks run lease, so two tabs never drive one run.
 * @module
 */
export { IndexedDBStore } from './idb-store.ts';
export type { IndexedDBStoreOptions, StoredRunInfo } from './idb-store.ts';
export { leaseName } from './lease.ts';
export type { LeaseMode } from './lease.ts';
export { DB_VERSION } from './schema.ts';
