/**
 * The bytes of a JSONL run log as text: where its last line starts, whether that line is complete
 * JSON, and strict UTF-8 for every line before it. Shared by FileStore (reading, and repairing a
 * torn tail before appending) and the CLI's readers of a log directory.
 * @module
 */
import type { FileHandle } from 'node:fs/promises';
import { CorruptLogError } from '../core/index.ts';

/** The byte every log line ends with. */
export const NEWLINE = 0x0a;

/** How many line breaks precede byte `end`. */
export function countLines(buf: Buffer, end: number): number {
  let n = 0;
  for (let i = buf.indexOf(NEWLINE); i !== -1 && i < end; i = buf.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The log's text. Lines before the last must be valid UTF-8 — a damaged byte would otherwise be
 * read as U+FFFD into a record — so a bad one is a `CorruptLogError` naming its line. Only the
 * last line, which may be torn inside a multi-byte character, is decoded leniently when it is
 * torn (core drops it); a complete last line with a bad byte is as corrupt as any other.
 */
export function decodeLogText(bytes: Buffer, source: string): string {
  const cut = lastLineStart(bytes);
  let head: string;
  try {
    head = STRICT_UTF8.decode(bytes.subarray(0, cut));
  } catch {
    throw new CorruptLogError(firstBadUtf8Line(bytes.subarray(0, cut)), 'not valid UTF-8', { source });
  }
  const tail = bytes.subarray(cut);
  try {
    return head + STRICT_UTF8.decode(tail);
  } catch {
    // A torn write may end inside a character; a line that is complete JSON was not torn, so a bad
    // byte inside it is damage, as on any other line.
    const lenient = tail.toString('utf8');
    if (isCompleteJson(lenient.endsWith('\n') ? lenient.slice(0, -1) : lenient))
      throw new CorruptLogError(countLines(bytes, cut) + 1, 'not valid UTF-8', { source });
    return head + lenient;
  }
}

/** Where the last line starts (its trailing newline, if any, not counted as a line break). */
export function lastLineStart(bytes: Buffer): number {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE ? bytes.length - 1 : bytes.length;
  return end === 0 ? 0 : bytes.lastIndexOf(NEWLINE, end - 1) + 1;
}

function firstBadUtf8Line(bytes: Buffer): number {
  let line = 1;
  for (let start = 0; start < bytes.length; line++) {
    const end = bytes.indexOf(NEWLINE, start);
    try {
      STRICT_UTF8.decode(bytes.subarray(start, end));
    } catch {
      return line;
    }
    start = end + 1;
  }
  return line;
}

/** Whether `text` parses as JSON. */
export function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** What {@link repairTail} did to a log's last line (1-based), if anything. */
export type TailRepair = {
  readonly code: 'tail_truncated' | 'tail_newline_added';
  readonly line: number;
  readonly bytes: number;
};

/** What {@link repairTail} reads first from a log's end: a last line is rarely longer. */
const TAIL_CHUNK = 64 * 1024;

/**
 * Make the log behind `fh` end at a line boundary, so the next line never glues onto garbage:
 * cut a torn last line off, or add the newline a complete last record lacks (fsynced). Works
 * through `fh`, never by path. Reads only the last line (from the end, in growing chunks): a
 * resumed run's first append must not read a long log a second time. The whole file is read only
 * to number the line of a repair.
 */
export async function repairTail(fh: FileHandle): Promise<TailRepair | null> {
  const { size } = await fh.stat();
  if (size === 0) return null;
  let from: number;
  let buf: Buffer;
  let start: number;
  for (let chunk = TAIL_CHUNK; ; chunk *= 4) {
    from = Math.max(0, size - chunk);
    buf = await readAt(fh, from, size - from);
    start = lastLineStart(buf);
    // A line break before the last line is in the chunk, or the chunk is the whole file.
    if (start > 0 || from === 0) break;
  }
  // The last line as readers see it (core drops it unless it is complete JSON), newline or not.
  const hasNewline = buf[buf.length - 1] === NEWLINE;
  if (!isCompleteJson(buf.subarray(start, hasNewline ? buf.length - 1 : buf.length).toString('utf8'))) {
    const line = await lineNumberAt(fh, from + start);
    await fh.truncate(from + start);
    return { code: 'tail_truncated', line, bytes: size - from - start };
  }
  if (hasNewline) return null;
  const line = await lineNumberAt(fh, from + start);
  await fh.write('\n', size, 'utf8');
  await fh.sync();
  return { code: 'tail_newline_added', line, bytes: 1 };
}

/** The 1-based number of the line that starts at byte `offset` of the file behind `fh`. */
async function lineNumberAt(fh: FileHandle, offset: number): Promise<number> {
  return offset === 0 ? 1 : countLines(await readAt(fh, 0, offset), offset) + 1;
}

/** `length` bytes of the file behind `fh` from byte `position` (positioned reads: the handle's offset stays). */
async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, position + got);
    if (bytesRead === 0) break; // the file shrank meanwhile: what is there is what there is
    got += bytesRead;
  }
  return buf.subarray(0, got);
}
