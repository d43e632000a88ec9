/**
 * Read-only inspection of a FileStore directory: what runs are there and where each one stands, as
 * `readRunLog` reads it (no second classifier, docs/design/run-log.md#one-reader), plus whether a
 * live process holds the run's lock. Used by the `polyloop` CLI; never takes a lease and never
 * writes.
 * @module
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CorruptLogError, decodeLog, decodeRecord, encodeRecord, isPolyLoopError, readRunLog } from '../core/index.ts';
import type { LogRecord, RunLogView } from '../core/index.ts';
import { decodeLogText, FileStore } from '../platform-node/file-store.ts';
import { errCode } from '../platform-node/lock.ts';
import { readRegular } from '../platform-node/regular-file.ts';
import { parseRunFileName, runIdFileName } from '../platform-node/run-id.ts';
import { livePid, missingDirectory, requireDirectory } from '../platform-node/store-dir.ts';

/** A run found in a directory. */
export type RunListing = {
  /** The run id; null when the id was hashed and the log has no `run_started` record. */
  readonly runId: string | null;
  readonly file: string;
  readonly lastWriteAt: string;
  /** What `readRunLog` says; null when the log is corrupt or unreadable (see `error`). */
  readonly view: RunLogView | null;
  /** The pid of a live process on this host holding the run's lock, or null. */
  readonly driverPid: number | null;
  readonly error: string | null;
  /** Repairs a reader should know about (a torn last line). */
  readonly warnings: readonly string[];
};

/** Every run log in `dir`, sorted by last write (oldest first). Corrupt or unreadable logs are listed with `error`. */
export async function listRuns(dir: string): Promise<readonly RunListing[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    const code = errCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw await missingDirectory(dir);
    throw e;
  }
  const out: RunListing[] = [];
  for (const name of names.sort()) {
    const parsed = parseRunFileName(name);
    if (parsed === null) continue;
    const file = join(dir, name);
    const runId = parsed.form === 'reversible' ? parsed.runId : await hashedRunId(file, name);
    out.push(await inspectFile(file, runId));
  }
  return out.sort((a, b) => a.lastWriteAt.localeCompare(b.lastWriteAt));
}

/** Inspect one run by id; null when it has no log in `dir`. */
export async function inspectRun(dir: string, runId: string): Promise<RunListing | null> {
  await requireDirectory(dir);
  const file = new FileStore({ dir }).logPath(runId);
  if (!(await lstat(file).catch(() => null))) return null;
  return inspectFile(file, runId);
}

/** Whether `dir` holds a log of `runId` (read-only: the file is not opened). */
export async function hasRun(dir: string, runId: string): Promise<boolean> {
  return (await lstat(new FileStore({ dir }).logPath(runId)).catch(() => null)) !== null;
}

async function inspectFile(file: string, runId: string | null): Promise<RunListing> {
  const lastWriteAt = (await lstat(file).catch(() => null))?.mtime.toISOString() ?? '-';
  const base = { runId, file, lastWriteAt, driverPid: null };
  try {
    // Never through a link or into a FIFO: a planted one is listed with an error (see regular-file.ts).
    const bytes = await readRegular(file);
    if (bytes === null) throw new Error('it no longer exists');
    const { records, tornLine } = decodeLog(decodeLogText(bytes, file), { source: file });
    const warnings =
      tornLine === null ? [] : [`ignored a torn last line (line ${tornLine}): a write cut short by a crash`];
    const view = readRunLog(records);
    requireEncodable(records, file);
    return { ...base, warnings, view, driverPid: await livePid(file), error: null };
  } catch (e) {
    if (isPolyLoopError(e, 'corrupt_log'))
      return { ...base, warnings: [], view: null, error: atSource(e as CorruptLogError, file).message };
    if (isPolyLoopError(e, 'schema_version')) return { ...base, warnings: [], view: null, error: e.message };
    // An unreadable entry (a directory with a log's name, no permission) must not hide the other runs.
    return {
      ...base,
      warnings: [],
      view: null,
      error: `cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
}

/** The id in a hashed log's `run_started`, if it is the id this file name stands for (not a copy's). */
async function hashedRunId(file: string, name: string): Promise<string | null> {
  const bytes = await readRegular(file).catch(() => null);
  if (bytes === null) return null;
  const text = bytes.toString('utf8');
  const first = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
  try {
    const rec = decodeRecord(first);
    return rec.kind === 'run_started' && runIdFileName(rec.runId) === name ? rec.runId : null;
  } catch {
    return null;
  }
}

/**
 * Rejects with `CorruptLogError` naming the line when a record cannot be encoded again: JSON.parse
 * reads values nested deeper than JSON.stringify can write (a planted or hand-made log), and
 * every printer, exporter and store would then die on a RangeError instead of naming the log.
 */
export function requireEncodable(records: readonly LogRecord[], source: string): void {
  records.forEach((r, i) => {
    try {
      encodeRecord(r);
    } catch (e) {
      if (e instanceof RangeError)
        throw new CorruptLogError(i + 1, 'a value is nested too deeply to be encoded', { source });
      throw e;
    }
  });
}

/**
 * The same error, naming `source`: `readRunLog` numbers records (which are the log's lines, one
 * record a line) but cannot know the file, so its errors say "run log".
 */
export function atSource(e: CorruptLogError, source: string): CorruptLogError {
  if (e.source === source) return e;
  const prefix = `corrupt run log at ${e.source === null ? `line ${e.line}` : `${e.source}:${e.line}`}: `;
  const reason = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return new CorruptLogError(e.line, reason, { source, cause: e });
}
