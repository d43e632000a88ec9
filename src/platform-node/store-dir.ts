/**
 * What readers of a FileStore directory outside the store need (the `polyloop` CLI and the viewer's
 * server): whether the directory is there, and whether a live process holds a run's lock.
 * @module
 */
import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { PolyLoopError } from '../core/index.ts';
import { errCode, isOwnerAlive, parseOwner } from './lock.ts';
import { readRegular } from './regular-file.ts';
import { LOG_EXTENSION } from './run-id.ts';

/** The pid of a live process on this host holding the run's lock, or null. */
export async function livePid(logFile: string): Promise<number | null> {
  // A lock path holding anything but a regular file is no lock (and is never followed or waited on).
  const raw = await readRegular(`${logFile.slice(0, -LOG_EXTENSION.length)}.lock`).catch(() => null);
  const owner = raw === null ? null : parseOwner(raw.toString('utf8'));
  return owner && owner.hostname === hostname() && (await isOwnerAlive(owner)) ? owner.pid : null;
}

/**
 * Thrown for a directory that does not exist or is not a directory (the message says which). Code `missing_directory`.
 */
export class MissingDirectoryError extends PolyLoopError {
  override readonly name = 'MissingDirectoryError';
  constructor(message?: string, options?: { cause?: unknown }) {
    super('missing_directory', message ?? '', options);
  }
}

/** Rejects with `MissingDirectoryError` unless `dir` is a directory. */
export async function requireDirectory(dir: string): Promise<void> {
  const s = await stat(dir).catch(() => null);
  if (!s?.isDirectory()) throw await missingDirectory(dir);
}

/** The error for a `dir` that cannot be listed: missing, a file, or under a file. */
export async function missingDirectory(dir: string): Promise<MissingDirectoryError> {
  const code = await stat(dir).then(
    () => 'EXISTS',
    (e: unknown) => errCode(e),
  );
  if (code === 'EXISTS') return new MissingDirectoryError(`not a directory: ${dir} is a file`);
  if (code === 'ENOTDIR') return new MissingDirectoryError(`not a directory: a part of ${dir} is a file`);
  return new MissingDirectoryError(`no such directory: ${dir}`);
}
