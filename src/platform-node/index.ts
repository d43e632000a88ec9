/**
 * PolyLoop on Node — the `polyloop/node` entry: {@link FileStore} (JSONL logs, fsync at
 * barriers, torn-tail repair, a lock file per run) and how it names its files.
 *
 * @example
 * import { FileStore } from 'polyloop/node';
 * const store = new FileStore({ dir: './runs' });
 * const agent = defineAgent({ model, interpreter, store, events, syntheticObservations });
 * @module
 */
export { FileStore } from './file-store.ts';
export type { FileStoreOptions } from './file-store.ts';
export type { FileStoreWarning } from './file-store-warnings.ts';
// The `polyloop` command lives in src/cli/ (the viewer's server in src/viewer/server/) — it is a
// program, not an API: `bin/polyloop.mjs` runs dist/cli/cli.js directly, and a program
// reads a run with `readRunLog(await store.readLog(runId))` from `polyloop`.
// Not exported: run-id.ts (runIdFileName, parseRunFileName, MAX_REVERSIBLE_ID_BYTES) — how FileStore
// names its files is its own business; docs/log-format.md describes the names.
// Not exported: lock.ts internals (LockOwner) (acquireLock,
// isAlive, parseOwner) — reach them through FileStore.acquire.
// Not exported: regular-file.ts (openRegular, NotRegularFileError)
// — it reaches users only as the `cause` of a StoreError.
// Not exported: stop-file.ts (the stop file and the lease's watch) and whole-write.ts — reach them
// through FileStore.requestStop and the `lost` signal of FileStore.acquire.
