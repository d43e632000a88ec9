/**
 * A FileStore run's stop request: `<name>.stop` beside its log, written by whichever process asks
 * the run to stop, and watched by the process holding the run's lease, which also watches that its
 * lock file still names it. See docs/decisions/0073-file-store-stop.md.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { lstat, rename, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { LeaseLostError, StopRequestedError } from '../core/index.ts';
import type { StopRequest } from '../core/index.ts';
import { fsyncDir } from './dir-sync.ts';
import { errCode, lockState } from './lock.ts';
import { NotRegularFileError, OPEN, openRegular } from './regular-file.ts';

/** How often the lease holder looks at the stop file and its lock file (ms): a stop is seen within this. */
export const STOP_POLL_MS = 200;

/**
 * A stop file is a line of JSON: the run id, a reason of at most 2,000 characters (6 bytes each at
 * most, escaped) and a time. Anything longer than that, with room to spare, is not one we wrote.
 */
const STOP_FILE_BYTES_BESIDES_ID = 64 * 1024;

/** The most bytes a stop file of `runId` can hold: its id (however long) and the rest. */
function maxStopFileBytes(runId: string): number {
  return Buffer.byteLength(JSON.stringify(runId)) + STOP_FILE_BYTES_BESIDES_ID;
}

/**
 * Write the stop request durably: a new file (`O_EXCL`, no link followed) written and fsynced,
 * renamed over `path`, then the directory fsynced. A rename replaces whatever name is at `path`
 * (a link planted there is replaced, never followed), so a reader sees no stop or all of it.
 */
export async function writeStopFile(opts: {
  readonly path: string;
  readonly dir: string;
  readonly runId: string;
  readonly stop: StopRequest;
}): Promise<void> {
  const { path, dir, runId, stop } = opts;
  const reason = typeof stop.reason === 'string' ? { reason: stop.reason } : {};
  const text = `${JSON.stringify({ runId, ...reason, requestedAt: new Date().toISOString() })}\n`;
  const tmp = `${path}.${randomUUID()}.tmp`;
  const fh = await openRegular(tmp, OPEN.createExclusive);
  try {
    try {
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    // Nothing half-written is left behind under a name no one reads; the error says what failed.
    await unlink(tmp).catch(() => undefined);
    throw (await isDirectory(path)) ? new NotRegularFileError(path, 'directory') : e;
  }
  await fsyncDir(dir);
}

/**
 * The stop request at `path`, or null when there is none. Anything at the path is a stop: a file
 * that is not one this store wrote for `runId` (corrupt, too long, of another run), a link, a FIFO,
 * a directory or a file it may not read is a stop without a reason — a stop asked for must never
 * be lost to a damaged file, and only a person or process with the directory in hand can put one there.
 */
export async function readStopFile(path: string, runId: string): Promise<StopRequest | null> {
  let fh: FileHandle;
  try {
    fh = await openRegular(path, OPEN.read);
  } catch (e) {
    const code = errCode(e);
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : {};
  }
  try {
    return parseStop(await readCapped(fh, maxStopFileBytes(runId)), runId);
  } catch {
    return {}; // unreadable, yet there: a stop without its reason
  } finally {
    await fh.close().catch(() => undefined); // a failed close of a read-only descriptor loses nothing
  }
}

/**
 * The stop request a new lease starts with. A stop file beside a run without a log is an earlier
 * run's of the same id (`requestStop` asks only a run with a log): it is removed, not obeyed.
 */
export async function stopAtAcquire(opts: {
  readonly stopPath: string;
  readonly logPath: string;
  readonly runId: string;
}): Promise<StopRequest | null> {
  const stop = await readStopFile(opts.stopPath, opts.runId);
  if (stop === null) return null;
  const log = await lstat(opts.logPath).catch(() => null);
  if (log !== null && log.size > 0) return stop;
  await removeStop(opts.stopPath);
  return null;
}

/** Remove a stop file (none there is fine); a directory planted at its path is refused by name. */
export async function removeStop(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (e) {
    if (errCode(e) === 'ENOENT') return;
    throw (await isDirectory(path)) ? new NotRegularFileError(path, 'directory') : e;
  }
}

/** What the lease holder watches, and how it ends. */
export type StopFileWatch = {
  /** Aborted with `StopRequestedError` on a stop, with `LeaseLostError` when the lock is no longer this lease's. */
  readonly lost: AbortSignal;
  /** Abort `lost` now (a stop this process itself asked for); the watch ends. */
  readonly abort: (reason: StopRequestedError) => void;
  /** End the watch (at release): no more polls, `lost` left as it is. */
  readonly end: () => void;
};

/**
 * Watch a held lease: `lost` starts aborted when `initial` is a stop; otherwise, every
 * {@link STOP_POLL_MS}, the lock file is read (gone or another's: `LeaseLostError`) and then the
 * stop file (there: `StopRequestedError`). The timer is unref'd: a watch never keeps a process alive.
 */
export function watchLease(opts: {
  readonly runId: string;
  readonly stopPath: string;
  readonly lockPath: string;
  readonly token: string;
  readonly initial: StopRequest | null;
}): StopFileWatch {
  const { runId, stopPath, lockPath, token } = opts;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let ended = false;
  const end = (): void => {
    ended = true;
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  const abort = (reason: Error): void => {
    if (ended) return;
    end();
    controller.abort(reason);
  };
  const check = async (): Promise<Error | null> => {
    const lock = await lockState(lockPath, token);
    if (lock.state === 'lost') return new LeaseLostError(runId, lock.detail);
    const stop = await readStopFile(stopPath, runId);
    return stop === null ? null : new StopRequestedError(runId, stop);
  };
  const schedule = (): void => {
    timer = setTimeout(() => {
      timer = null;
      // A failed look (too many open files, …) is not a verdict: look again at the next tick.
      void check().then(
        (found) => (ended ? undefined : found === null ? schedule() : abort(found)),
        () => (ended ? undefined : schedule()),
      );
    }, STOP_POLL_MS);
    timer.unref();
  };
  if (opts.initial === null) schedule();
  else abort(new StopRequestedError(runId, opts.initial));
  return { lost: controller.signal, abort, end };
}

/** The file's first bytes, at most one more than a stop file can hold (`max`). */
async function readCapped(fh: FileHandle, max: number): Promise<Buffer> {
  const buf = Buffer.alloc(max + 1);
  let at = 0;
  while (at < buf.length) {
    const { bytesRead } = await fh.read(buf, at, buf.length - at, at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return buf.subarray(0, at);
}

/** The reason a stop file this store wrote for `runId` holds; anything else is a stop without one. */
function parseStop(bytes: Buffer, runId: string): StopRequest {
  if (bytes.length > maxStopFileBytes(runId)) return {};
  let o: unknown;
  try {
    o = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return {};
  }
  if (typeof o !== 'object' || o === null) return {};
  const { runId: id, reason } = o as { runId?: unknown; reason?: unknown };
  return id === runId && typeof reason === 'string' ? { reason } : {};
}

async function isDirectory(path: string): Promise<boolean> {
  return lstat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
