/**
 * Opening the files of a store directory without trusting what sits at their paths. The
 * directory may be shared and writable by others: a symbolic link planted at a log or lock path
 * would redirect a truncate or an append to the link's target, and a FIFO would block the open
 * for ever. So every log and lock file is opened with `O_NOFOLLOW | O_NONBLOCK` and used only
 * if it is a regular file. See docs/decisions/0015-leases-and-planted-files.md.
 * @module
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { PolyLoopError, StoreError } from '../core/index.ts';

// Windows has neither flag (nor FIFOs, and its links need privileges): there they are 0.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** Flags of the opens this module does; `O_NOFOLLOW | O_NONBLOCK` are added to each. */
export const OPEN = {
  read: constants.O_RDONLY,
  readWrite: constants.O_RDWR,
  append: constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
  createExclusive: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
} as const;

/**
 * Something other than a regular file sits at a path where the store keeps a log or a lock. Code
 * `store_error`: the store cannot go on there, as with any other store failure.
 */
export class NotRegularFileError extends PolyLoopError {
  override readonly name = 'NotRegularFileError';
  readonly path: string;
  /** What was found instead: `symbolic link`, `FIFO`, `directory`, … */
  readonly found: string;
  constructor(path: string, found: string) {
    super(
      'store_error',
      `refusing ${path}: it is a ${found}, not a regular file ` +
        '(the store never follows a link or opens a special file at a log or lock path; remove it if it is not yours)',
    );
    this.path = path;
    this.found = found;
  }
}

/**
 * Open `path` with `flags` (one of {@link OPEN}) without following a symbolic link and without
 * blocking on a FIFO. Rejects with {@link NotRegularFileError} when what is there is not a
 * regular file; other failures (ENOENT, EEXIST, permissions) reject as the system reported them.
 */
export async function openRegular(path: string, flags: number): Promise<FileHandle> {
  let fh: FileHandle;
  try {
    fh = await open(path, flags | NOFOLLOW | NONBLOCK, 0o644);
  } catch (e) {
    // ELOOP (a link), EISDIR, ENXIO (a FIFO nobody reads) …: name what is there, if it is odd.
    const found = await lstat(path).then(kindOf, () => null);
    if (found !== null && found !== 'regular file') throw new NotRegularFileError(path, found);
    throw e;
  }
  const found = kindOf(
    await fh.stat().catch(async (e: unknown) => {
      await fh.close();
      throw e;
    }),
  );
  if (found !== 'regular file') {
    await fh.close();
    throw new NotRegularFileError(path, found);
  }
  return fh;
}

/** The bytes of the regular file at `path`, or null when nothing is there. Never follows a link. */
export async function readRegular(path: string): Promise<Buffer | null> {
  let fh: FileHandle;
  try {
    fh = await openRegular(path, OPEN.read);
  } catch (e) {
    if ((e as { code?: unknown } | null)?.code === 'ENOENT') return null;
    throw e;
  }
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

function kindOf(s: Stats): string {
  if (s.isFile()) return 'regular file';
  if (s.isSymbolicLink()) return 'symbolic link';
  if (s.isDirectory()) return 'directory';
  if (s.isFIFO()) return 'FIFO';
  if (s.isSocket()) return 'socket';
  return 'device';
}

/** A planted non-regular file becomes a `StoreError` naming it (its `cause`); anything else is as it was. */
export function refusedNow(runId: string, operation: string, e: unknown): unknown {
  return e instanceof NotRegularFileError ? new StoreError(runId, operation, e) : e;
}

/** {@link refusedNow} as a `.catch` handler. */
export function refused(runId: string, operation: string): (e: unknown) => never {
  return (e) => {
    throw refusedNow(runId, operation, e);
  };
}
