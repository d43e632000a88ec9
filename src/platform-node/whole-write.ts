/**
 * Appending to an open log: every byte of a record (a short write is continued), and whether the
 * open file is still the one at the log's path (decision 0047).
 * @module
 */
import { fstatSync, lstatSync, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** Append all of `text` with `write(2)` (a short write is continued). */
export function writeAllSync(fd: number, text: string): void {
  const buf = Buffer.from(text, 'utf8');
  for (let at = 0; at < buf.length; ) at += writeSync(fd, buf, at, buf.length - at);
}

/** Append all of `text` (a short write is continued, as `appendFile` does). */
export async function writeAll(fh: FileHandle, text: string): Promise<void> {
  const buf = Buffer.from(text, 'utf8');
  for (let at = 0; at < buf.length; ) at += (await fh.write(buf, at, buf.length - at)).bytesWritten;
}

/** What names a file on its device: an open log is compared with what is at its path by these. */
export type FileIdentity = { readonly ino: number; readonly dev: number };

/** The identity of the open file `fd` (one `fstat`: taken once, when the lease opens the log). */
export function identityOf(fd: number): FileIdentity {
  const { ino, dev } = fstatSync(fd);
  return { ino, dev };
}

/**
 * Whether the file at `path` is `open` (one synchronous `lstat`, a microsecond or two): an open
 * descriptor's identity never changes, so only the path is looked at again on each write.
 */
export function isFileAt(open: FileIdentity, path: string): boolean {
  const at = lstatSync(path, { throwIfNoEntry: false });
  return at !== undefined && at.ino === open.ino && at.dev === open.dev;
}
