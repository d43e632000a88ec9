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

/** Whether the open file `fd` is the one at `path` (two synchronous stats, a few microseconds). */
export function isFileAt(fd: number, path: string): boolean {
  const at = lstatSync(path, { throwIfNoEntry: false });
  if (at === undefined) return false;
  const open = fstatSync(fd);
  return at.ino === open.ino && at.dev === open.dev;
}
