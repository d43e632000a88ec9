/**
 * FileStore: one append-only JSONL file per run, fsync at barriers, a torn last line ignored
 * and reported, a lock file per run for a single driver. See docs/reliability.md.
 * @module
 */
import { mkdir } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { decodeLog, StopRequestedError, StoreError } from '../core/index.ts';
import { AppendLogStore, checkOptionKeys, committedLines } from '../core/internal-entry.ts';
import type { LogRecord, ReadLogOptions, ReleaseLease, RunStore, StopRequest, StoredLines } from '../core/index.ts';
import type { LogAppend, OptionKeys } from '../core/internal-entry.ts';
import { acquireLock, errCode } from './lock.ts';
import { fsyncDir, syncNewDirs } from './dir-sync.ts';
import { decodeLogText, isCompleteJson, repairTail } from './log-text.ts';
import { identityOf, isFileAt, writeAll, writeAllSync } from './whole-write.ts';
import type { FileIdentity } from './whole-write.ts';
import { OPEN, openRegular, readRegular, refused, refusedNow } from './regular-file.ts';
import { runIdStem, LOG_EXTENSION } from './run-id.ts';
import { removeStop, stopAtAcquire, watchLease, writeStopFile } from './stop-file.ts';
import type { StopFileWatch } from './stop-file.ts';
import { emitFileStoreWarning, tailRepairWarning, tornTailWarning } from './file-store-warnings.ts';
import type { FileStoreWarning } from './file-store-warnings.ts';

// Re-exported: the CLI's readers decode log bytes the way the store does.
export { decodeLogText };

/** Options of {@link FileStore}. */
export type FileStoreOptions = {
  /** Directory of the run logs; created on the first write. */
  readonly dir: string;
  /**
   * Receives warnings (torn tails). Default: `process.emitWarning` with code `POLYLOOP_FILE_STORE`,
   * so they show on stderr without ending anything. Must not throw.
   */
  readonly onWarning?: (warning: FileStoreWarning) => void;
};

const FILE_STORE_OPTIONS: OptionKeys<FileStoreOptions> = { dir: true, onWarning: true };

type Durability = 'fsync' | 'none';

/** What an instance keeps for a run while it holds the run's lease (decision 0041). */
type Lease = {
  /** The log's path, computed once a lease rather than at every write. */
  readonly path: string;
  /** The log, opened (no link followed, a regular file) at the first append of the lease; closed at its end. */
  fh: FileHandle | null;
  /** What `fh` is on its device, taken when it was opened: each write compares the path with it (decision 0047). */
  opened: FileIdentity | null;
  /** Its `lost` signal: the stop file and the lock file, polled while the lease is held. */
  readonly watch: StopFileWatch;
};

/**
 * A record up to this size is written into the page cache
 * synchronously; a bigger one is not allowed to block the event loop.
 */
const SYNC_WRITE_MAX = 64 * 1024;

/**
 * A durable {@link RunStore} on the local file system.
 *
 * Durability: the barriers (`isBarrier`: `intent` — but a safe model-call intent —,
 * `resultAndIntent`, `inputRequest`, `input`, `upgrade`, `step`, `runEnded`) resolve after `fsync`;
 * `runStarted`, `result` and a safe model-call intent do not fsync on their own — the next barrier
 * fsyncs the same file, which makes them durable too, and losing them to a power cut before that is
 * harmless (see docs/reliability.md). The directory is fsynced at the first barrier after each tail check (the
 * first write of an instance, or after `acquire`), and the parent of every directory the store
 * created when it made `dir`.
 *
 * While it holds a run's lease (`acquire`, as `run` and `resume` do), the instance keeps the log
 * open until the lease ends (or `runEnded`, or a failed write) and writes a record of up to 64 KiB
 * with one synchronous `write` into the page cache — so a record whose promise resolved survives
 * the process, as before, without a trip through the thread pool — and a barrier's fsync
 * asynchronously (decision 0041). Without the lease every write opens, appends and closes the log.
 * A write under the lease rejects with `StoreError` if the open log is no longer the file at the
 * log path (another process deleted, moved or replaced it; decision 0047).
 *
 * The directory may be shared: a log or lock path holding anything but a regular file (a planted
 * symbolic link, a FIFO, a directory) is never followed or opened; the operation rejects with a
 * `StoreError` naming it.
 *
 * `requestStop` writes `<name>.stop` beside the log, which the lease holder watches; anything at
 * that path is a stop (a damaged file one without its reason; decision 0073).
 *
 * @example
 * const store = new FileStore({ dir: './runs' });
 * const agent = defineAgent({ model, interpreter, store, events, syntheticObservations });
 */
export class FileStore extends AppendLogStore implements RunStore {
  /** Absolute path of the log directory. */
  readonly dir: string;
  readonly #onWarning: (w: FileStoreWarning) => void;
  readonly #queues = new Map<string, Promise<void>>();
  /** Runs whose file tail this instance has checked (and repaired) since its last failed write. */
  readonly #tailChecked = new Set<string>();
  /** Runs whose directory entry this instance has not yet fsynced since it checked the tail. */
  readonly #dirSyncPending = new Set<string>();
  #dirReady: Promise<void> | null = null;
  /** Runs this instance holds the lease of (between `acquire` and its release). */
  readonly #leases = new Map<string, Lease>();

  constructor(opts: FileStoreOptions) {
    super();
    checkOptionKeys(opts, FILE_STORE_OPTIONS, 'new FileStore');
    if (typeof opts?.dir !== 'string' || opts.dir === '')
      throw new TypeError('FileStore: `dir` must be a non-empty path');
    this.dir = resolve(opts.dir);
    this.#onWarning = opts.onWarning ?? emitFileStoreWarning;
  }

  /** The log file of a run (whether or not it exists). */
  logPath(runId: string): string {
    return join(this.dir, runIdStem(runId) + LOG_EXTENSION);
  }

  /** The lock file of a run. */
  lockPath(runId: string): string {
    return join(this.dir, `${runIdStem(runId)}.lock`);
  }

  /** The stop file of a run (`requestStop` writes it; whether or not it exists). */
  stopPath(runId: string): string {
    return join(this.dir, `${runIdStem(runId)}.stop`);
  }

  /**
   * Contract: see {@link RunStore.readLog}. Waits for this instance's pending writes to the run;
   * a torn last line is dropped and reported to `onWarning` and `opts.onWarning` (code `torn_tail`;
   * `run`/`resume` turn the latter into a `warning` event); a bad line
   * elsewhere rejects with `CorruptLogError` naming the file and line.
   */
  async readLog(runId: string, opts?: ReadLogOptions): Promise<readonly LogRecord[]> {
    const { lines, source } = await this.readLogLines(runId, opts);
    // The torn last line is dropped already: a last line that is not JSON now is damage (resume refuses it too).
    return decodeLog(committedLines(lines, source, 'not valid JSON').lines, { source }).records;
  }

  /**
   * Contract: see {@link RunStore.readLogLines}: the lines {@link readLog} decodes, as this store
   * wrote them (what `resume` reads a long log from). Reads, refuses and warns as `readLog` does.
   */
  readLogLines(runId: string, opts?: ReadLogOptions): Promise<StoredLines> {
    return this.#serial(runId, async () => {
      this.forgetWrites(runId);
      const path = this.logPath(runId);
      const bytes = await readRegular(path).catch(refused(runId, 'readLog'));
      if (bytes === null) return { lines: [], source: path };
      const lines = decodeLogText(bytes, path).split('\n');
      if (lines.at(-1) === '') lines.pop();
      // A last line that is not complete JSON is a torn write, dropped as `readLog` drops it.
      if (lines.length > 0 && !isCompleteJson(lines.at(-1) as string)) {
        lines.pop();
        const warning = tornTailWarning(runId, path, lines.length + 1);
        this.#warn(warning);
        opts?.onWarning?.(warning);
      }
      return { lines, source: path };
    });
  }

  /**
   * Contract: see {@link RunStore.acquire}. Creates `<log>.lock` with `O_EXCL`; rejects with
   * `RunLockedError` (naming pid, host and lock file) while a live process holds it — this one
   * included; removes a lock whose owner pid is dead on this host. Never waits. The first append
   * after it checks the log's tail again, since another driver may have left it torn.
   *
   * The release carries `lost`: already aborted with `StopRequestedError` when the run's stop file
   * is there; while the lease is held, the stop file and the lock file are looked at every 200 ms
   * (an unref'd timer, ended by the release), and `lost` aborts with `StopRequestedError` once a
   * stop file appears, or with `LeaseLostError` once the lock file is gone or names another holder.
   */
  async acquire(runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<ReleaseLease> {
    opts.signal?.throwIfAborted();
    await this.#ensureDir();
    const lock = await acquireLock(this.lockPath(runId), runId).catch(refused(runId, 'acquire'));
    let initial: StopRequest | null;
    try {
      initial = await stopAtAcquire({ stopPath: this.stopPath(runId), logPath: this.logPath(runId), runId });
    } catch (e) {
      await lock.unlock();
      throw refusedNow(runId, 'acquire', e);
    }
    // Another driver may have written (and torn) the tail since this instance last checked it.
    this.#tailChecked.delete(runId);
    const stale = this.#leases.get(runId);
    if (stale) await this.#serial(runId, () => this.#endLease(runId, stale));
    const watch = watchLease({
      runId,
      stopPath: this.stopPath(runId),
      lockPath: this.lockPath(runId),
      token: lock.token,
      initial,
    });
    const lease: Lease = { path: this.logPath(runId), fh: null, opened: null, watch };
    this.#leases.set(runId, lease);
    let released: Promise<void> | null = null;
    const release = (): Promise<void> => {
      watch.end(); // a stop seen after the run let go of its lease is the next driver's
      return (released ??= this.#serial(runId, () => this.#endLease(runId, lease)).finally(lock.unlock));
    };
    return Object.assign(release, { lost: watch.lost });
  }

  /**
   * Contract: see {@link RunStore.requestStop}. Writes the run's stop file (`stopPath`) durably:
   * a new file fsynced, renamed over the path (a link planted there is replaced, never followed),
   * the directory fsynced. The lease holder sees it within 200 ms, in any process; a lease this
   * instance holds, at once. The file stays after the run ends (an ended run ignores it).
   */
  async requestStop(runId: string, stop: StopRequest): Promise<void> {
    await this.#ensureDir();
    await writeStopFile({ path: this.stopPath(runId), dir: this.dir, runId, stop }).catch(
      refused(runId, 'requestStop'),
    );
    this.#leases.get(runId)?.watch.abort(new StopRequestedError(runId, stop));
  }

  /** Close the lease's log and end its watch; later writes (without a lease) open the log each time again. */
  async #endLease(runId: string, lease: Lease): Promise<void> {
    lease.watch.end();
    if (this.#leases.get(runId) === lease) this.#leases.delete(runId);
    await closeLog(lease);
  }

  /**
   * Append `text` through the lease's open log (opening it first, tail checked); fsync when asked.
   * On the way of a step's record nothing else happens: one `write`, its `fsync` if a barrier, and
   * one `lstat` of the path (decision 0047) — no open, close, `fstat` or path computed again.
   */
  async #leasedWrite(runId: string, lease: Lease, text: string, durability: Durability, method: string): Promise<void> {
    try {
      if (lease.fh === null) {
        lease.fh = await this.#openForAppend(runId, lease.path).catch(refused(runId, method));
        lease.opened = identityOf(lease.fh.fd);
      }
      // Synchronous: one system call into the page cache, cheaper than a thread-pool round trip.
      if (text.length <= SYNC_WRITE_MAX) writeAllSync(lease.fh.fd, text);
      else await writeAll(lease.fh, text);
      if (durability === 'fsync') await lease.fh.sync();
      // Another process may have deleted, moved or replaced the log since the lease opened it:
      // then the record is in no file at the log path, and its promise must not resolve (decision 0047).
      if (lease.opened === null || !isFileAt(lease.opened, lease.path))
        throw new StoreError(
          runId,
          method,
          new Error(
            `the log this lease opened is no longer at ${lease.path} ` +
              "(deleted, moved or replaced by another process); the record was not written to the run's log",
          ),
        );
    } catch (e) {
      // The write may have landed in part: look at the tail again (through a new handle) before the next append.
      this.#tailChecked.delete(runId);
      this.#dirReady = null;
      await closeLog(lease).catch(() => undefined); // the write's own error is the one to report
      throw e;
    }
    if (durability === 'fsync' && this.#dirSyncPending.has(runId)) {
      await fsyncDir(this.dir);
      this.#dirSyncPending.delete(runId);
    }
  }

  /** Open the log for appending, its tail checked; if the directory vanished since, make it again once. */
  async #openForAppend(runId: string, path: string): Promise<FileHandle> {
    for (let attempt = 0; ; attempt++) {
      await this.#ensureDir();
      if (!this.#tailChecked.has(runId)) await this.#checkTail(runId, path);
      try {
        return await openRegular(path, OPEN.append);
      } catch (e) {
        if (errCode(e) !== 'ENOENT' || attempt > 0) throw e;
        this.#dirReady = null;
        this.#tailChecked.delete(runId);
      }
    }
  }

  /** `mkdir -p` once per instance, not per write (it was ~19% of a durable step); retried after a failed write. */
  #ensureDir(): Promise<void> {
    this.#dirReady ??= mkdir(this.dir, { recursive: true }).then(
      (first) => (first === undefined ? undefined : syncNewDirs(first, this.dir)),
      (e: unknown) => {
        this.#dirReady = null;
        throw e;
      },
    );
    return this.#dirReady;
  }

  /** Run `fn` after every earlier operation on this run (in this instance) has settled. */
  #serial<T>(runId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#queues.get(runId) ?? Promise.resolve();
    const result = prev.then(fn);
    const settled = result.then(noop, noop);
    this.#queues.set(runId, settled);
    void settled.then(() => {
      if (this.#queues.get(runId) === settled) this.#queues.delete(runId);
    });
    return result;
  }

  /**
   * Contract: see {@link AppendLogStore.append}. The records' lines in one append (a step is one
   * line, so all-or-nothing; a joint write two); a barrier resolves after `fsync`, the rest is not
   * fsynced on its own (the next barrier covers it). Waits for this instance's earlier writes to the run.
   * `runStarted` first removes a stop file left by an earlier run of the same id: a new run must
   * not end at the stop someone asked of the one before.
   */
  protected append(write: LogAppend): Promise<void> {
    const { runId, barrier, method } = write;
    let text: string;
    try {
      text = `${this.encodeWrite(write).join('\n')}\n`;
    } catch (e) {
      this.forgetWrites(runId);
      return Promise.reject(e); // a promise-returning method never throws synchronously
    }
    const durability: Durability = barrier ? 'fsync' : 'none';
    return this.#serial(runId, async () => {
      if (method === 'runStarted') await removeStop(this.stopPath(runId)).catch(refused(runId, method));
      const lease = this.#leases.get(runId);
      if (!lease) return this.#appendAlone(runId, text, durability, method);
      await this.#leasedWrite(runId, lease, text, durability, method);
      // The run's last record: nothing more to write through this handle.
      if (method === 'runEnded') await closeLog(lease);
    }).catch((e: unknown) => {
      this.forgetWrites(runId); // it may not have landed: write the step in flight in full from here
      throw e;
    });
  }

  /** One write without a lease: open, append, fsync when asked, close. */
  async #appendAlone(runId: string, text: string, durability: Durability, method: string): Promise<void> {
    const path = this.logPath(runId);
    const fh = await this.#openForAppend(runId, path).catch(refused(runId, method));
    try {
      await writeAll(fh, text);
      if (durability === 'fsync') await fh.sync();
    } catch (e) {
      // The write may have landed in part: look at the tail again before the next append.
      this.#tailChecked.delete(runId);
      this.#dirReady = null;
      throw e;
    } finally {
      await fh.close();
    }
    if (durability === 'fsync' && this.#dirSyncPending.has(runId)) {
      await fsyncDir(this.dir);
      this.#dirSyncPending.delete(runId);
    }
  }

  /** Make sure the file ends at a line boundary, so the next line never glues onto garbage. */
  async #checkTail(runId: string, path: string): Promise<void> {
    // The file's directory entry may not be durable yet, whoever made it (a process that died
    // before its first barrier never fsynced it): the next barrier fsyncs the directory too.
    this.#dirSyncPending.add(runId);
    let fh: FileHandle;
    try {
      fh = await openRegular(path, OPEN.readWrite);
    } catch (e) {
      if (errCode(e) !== 'ENOENT') throw e;
      this.#tailChecked.add(runId);
      return;
    }
    try {
      const repair = await repairTail(fh);
      if (repair !== null) this.#warn(tailRepairWarning(runId, path, repair));
    } finally {
      await fh.close();
    }
    this.#tailChecked.add(runId);
  }

  #warn(w: FileStoreWarning): void {
    try {
      this.#onWarning(w);
    } catch {
      // A warning hook must not turn a repaired log into a failed write.
    }
  }
}

function noop(): void {}

/** Close the lease's log, if open; the next write of the lease opens it again (tail checked). */
async function closeLog(lease: Lease): Promise<void> {
  const fh = lease.fh;
  lease.fh = null;
  lease.opened = null;
  await fh?.close();
}
