/**
 * Making directory entries durable: a new file or directory survives a power cut only once the
 * directory holding it has been fsynced.
 * @module
 */
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errCode } from './lock.ts';

/**
 * `mkdir -p` made `first` and everything below it down to `dir`: fsync the parent of each, so
 * the directories themselves survive a power cut (the log's own entry is fsynced at its barrier).
 */
export async function syncNewDirs(first: string, dir: string): Promise<void> {
  for (let d = dir; ; d = dirname(d)) {
    await fsyncDir(dirname(d));
    if (d === first || dirname(d) === d) return;
  }
}

/** fsync a directory, so the entries made in it survive a power cut. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await open(dir, 'r');
  } catch (e) {
    // Windows cannot open a directory for fsync (and needs no such step); elsewhere it is an error.
    if (process.platform === 'win32' && ['EISDIR', 'EPERM', 'EACCES'].includes(errCode(e) ?? '')) return;
    throw e;
  }
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
