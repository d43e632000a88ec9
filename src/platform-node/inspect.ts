/**
 * Read-only inspection of a FileStore directory: what runs are there and where each one stands.
 * Used by the `polyloop` CLI; never takes a lease and never writes.
 * @module
 */
import { lstat, readdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { decodeLog, decodeRecord, isPolyLoopError } from '../core/index.ts';
import type { LogRecord, StepRecord, StopReason } from '../core/index.ts';
import { decodeLogText, FileStore } from './file-store.ts';
import { errCode, isOwnerAlive, parseOwner } from './lock.ts';
import { readRegular } from './regular-file.ts';
import { LOG_EXTENSION, parseRunFileName, runIdFileName } from './run-id.ts';

/** What a run's intent is waiting for, when the log ends inside a step. */
export type InFlight = {
  readonly intent: 'model_call' | 'action';
  readonly stepIndex: number;
  readonly resultId: string;
  readonly replayPolicy: 'safe' | 'never';
};

/**
 * Where a run stands according to its log (and its lock file): `ended`; `running` while a live
 * process on this host holds its lock; otherwise `in_flight` (the log ends inside a step) or
 * `interrupted` (at a step boundary) — both resumable — or `not_started` when the log holds no
 * `run_started` record (empty, or only a torn first line): `resume` would not find it.
 */
export type RunStatus =
  | { readonly state: 'ended'; readonly stopReason: StopReason }
  | { readonly state: 'running'; readonly pid: number; readonly inFlight: InFlight | null }
  | { readonly state: 'in_flight'; readonly inFlight: InFlight }
  | { readonly state: 'interrupted' }
  | { readonly state: 'not_started' };

/** A run's log, summarized. */
export type RunSummary = {
  readonly status: RunStatus;
  readonly steps: number;
  readonly validActions: number;
  readonly finalAnswer: string | null;
  readonly startedAt: string | null;
  readonly trajectory: readonly StepRecord[];
};

/** Summarize decoded records (pure); `driverPid` is the pid of a live lock holder, if any. */
export function summarizeLog(records: readonly LogRecord[], driverPid: number | null = null): RunSummary {
  const trajectory: StepRecord[] = [];
  const resolved = new Set<string>();
  let validActions = 0;
  let pending: InFlight | null = null;
  let startedAt: string | null = null;
  for (const rec of records) {
    if (rec.kind === 'run_started') startedAt = rec.startedAt;
    else if (rec.kind === 'intent') pending = { intent: rec.intent, stepIndex: rec.stepIndex, resultId: rec.resultId, replayPolicy: rec.replayPolicy };
    else if (rec.kind === 'result') resolved.add(rec.resultId);
    else if (rec.kind === 'step') {
      trajectory.push(rec.step);
      if (rec.actionResult) resolved.add(rec.actionResult.resultId);
      if (rec.actionResult?.outcome.status === 'executed') validActions++;
      if (pending && pending.stepIndex === rec.step.stepIndex) pending = null;
    }
  }
  const last = records[records.length - 1];
  if (last?.kind === 'run_ended') {
    return { status: { state: 'ended', stopReason: last.stopReason }, steps: last.steps, validActions: last.validActions, finalAnswer: last.finalAnswer, startedAt, trajectory };
  }
  const inFlight = pending && !resolved.has(pending.resultId) ? pending : null;
  const started = records.some((r) => r.kind === 'run_started');
  const status: RunStatus =
    driverPid !== null
      ? { state: 'running', pid: driverPid, inFlight }
      : inFlight
        ? { state: 'in_flight', inFlight }
        : started
          ? { state: 'interrupted' }
          : { state: 'not_started' };
  return { status, steps: trajectory.length, validActions, finalAnswer: null, startedAt, trajectory };
}

/** One status as a short phrase: `running (pid 7)`, `ended: final_answer`, `in flight: action s2.action (never)`. */
export function describeStatus(status: RunStatus): string {
  if (status.state === 'ended') return `ended: ${status.stopReason}`;
  if (status.state === 'running') return `running (pid ${status.pid})`;
  if (status.state === 'interrupted') return 'interrupted (resumable)';
  if (status.state === 'not_started') return 'not started (no run_started record)';
  const f = status.inFlight;
  return `in flight: ${f.intent === 'action' ? 'action' : 'model call'} ${f.resultId} (${f.replayPolicy})`;
}

/** The pid of a live process on this host holding the run's lock, or null. */
async function livePid(logFile: string): Promise<number | null> {
  // A lock path holding anything but a regular file is no lock (and is never followed or waited on).
  const raw = await readRegular(logFile.slice(0, -LOG_EXTENSION.length) + '.lock').catch(() => null);
  const owner = raw === null ? null : parseOwner(raw.toString('utf8'));
  return owner && owner.hostname === hostname() && (await isOwnerAlive(owner)) ? owner.pid : null;
}

/** A run found in a directory. */
export type RunListing = {
  /** The run id; null when the id was hashed and the log has no `run_started` record. */
  readonly runId: string | null;
  readonly file: string;
  readonly lastWriteAt: string;
  /** Null when the log is corrupt (see `error`). */
  readonly summary: RunSummary | null;
  readonly error: string | null;
  /** Repairs a reader should know about (a torn last line). */
  readonly warnings: readonly string[];
};

/** Thrown for a directory that does not exist or is not a directory (the message says which). */
export class MissingDirectoryError extends Error {
  override readonly name = 'MissingDirectoryError';
}

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
  const s = await stat(dir).catch(() => null);
  if (!s?.isDirectory()) throw await missingDirectory(dir);
  const file = new FileStore({ dir }).logPath(runId);
  if (!(await lstat(file).catch(() => null))) return null;
  return inspectFile(file, runId);
}

/** The error for a `dir` that cannot be listed: missing, a file, or under a file. */
async function missingDirectory(dir: string): Promise<MissingDirectoryError> {
  const code = await stat(dir).then(
    () => 'EXISTS',
    (e: unknown) => errCode(e),
  );
  if (code === 'EXISTS') return new MissingDirectoryError(`not a directory: ${dir} is a file`);
  if (code === 'ENOTDIR') return new MissingDirectoryError(`not a directory: a part of ${dir} is a file`);
  return new MissingDirectoryError(`no such directory: ${dir}`);
}

async function inspectFile(file: string, runId: string | null): Promise<RunListing> {
  const lastWriteAt = (await lstat(file).catch(() => null))?.mtime.toISOString() ?? '-';
  const base = { runId, file, lastWriteAt };
  try {
    // Never through a link or into a FIFO: a planted one is listed with an error (see regular-file.ts).
    const bytes = await readRegular(file);
    if (bytes === null) throw new Error('it no longer exists');
    const { records, tornLine } = decodeLog(decodeLogText(bytes, file), { source: file });
    const warnings = tornLine === null ? [] : [`ignored a torn last line (line ${tornLine}): a write cut short by a crash`];
    return { ...base, warnings, summary: summarizeLog(records, await livePid(file)), error: null };
  } catch (e) {
    if (isPolyLoopError(e, 'corrupt_log') || isPolyLoopError(e, 'schema_version')) return { ...base, warnings: [], summary: null, error: e.message };
    // An unreadable entry (a directory with a log's name, no permission) must not hide the other runs.
    return { ...base, warnings: [], summary: null, error: `cannot read ${file}: ${e instanceof Error ? e.message : String(e)}` };
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
