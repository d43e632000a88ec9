/**
 * PolyLoop on Node — the `polyloop/node` entry: {@link FileStore} (JSONL logs, fsync at
 * barriers, torn-tail repair, a lock file per run) and the helpers behind the `polyloop` CLI.
 * @module
 */
export { FileStore } from './file-store.ts';
export type { FileStoreOptions, FileStoreWarning } from './file-store.ts';
export { parseRunFileName, runIdFileName, MAX_REVERSIBLE_ID_BYTES } from './run-id.ts';
export type { ParsedFileName } from './run-id.ts';
export type { LockOwner } from './lock.ts';
