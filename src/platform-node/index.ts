/**
 * PolyLoop on Node — the `polyloop/node` entry: {@link FileStore} (JSONL logs, fsync at
 * barriers, torn-tail repair, a lock file per run), read-only inspection of a store directory,
 * and the `polyloop` CLI behind the package's `bin`.
 *
 * @example
 * import { FileStore } from 'polyloop/node';
 * const agent = defineAgent({ model, interpreter, store: new FileStore({ dir: './runs' }), events, syntheticObservations });
 * @module
 */
export { FileStore } from './file-store.ts';
export type { FileStoreOptions, FileStoreWarning } from './file-store.ts';
export { describeStatus, inspectRun, listRuns, MissingDirectoryError, summarizeLog } from './inspect.ts';
export type { InFlight, RunListing, RunStatus, RunSummary } from './inspect.ts';
export { EXIT, renderStep, runCli } from './cli.ts';
export type { CliIo } from './cli.ts';
export { MAX_REVERSIBLE_ID_BYTES, parseRunFileName, runIdFileName } from './run-id.ts';
export type { ParsedFileName } from './run-id.ts';
export type { LockOwner } from './lock.ts';
// Not exported: lock.ts internals (acquireLock, isAlive, parseOwner) — reach them through FileStore.acquire.
// Not exported: regular-file.ts (openRegular, NotRegularFileError) — it reaches users only as the `cause` of a StoreError.
