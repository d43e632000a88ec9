/**
 * FileStore: one append-only JSONL file per run, fsync at barriers, a torn last line ignored
 * and reported, a lock file per run for a single driver. See docs/reliability.md.
 * @module
 */
import { mkdir, open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CorruptLogError, decodeLog, encodeRecord, isBarrier, StoreError } from '../core/index.ts';
import type {
  ActionIntentRecord,
  InputRecord,
  InputRequestRecord,
  IntentRecord,
  LogRecord,
  ReadLogOptions,
  ReleaseLease,
  ResultRecord,
  RunEndedRecord,
  RunStartedRecord,
  RunStore,
  StepWriteRecord,
} from '../core/index.ts';
import { acquireLock, errCode } from './lock.ts';
import { NotRegularFileError, OPEN, openRegular, readRegular } from './regular-file.ts';
import { runIdStem, LOG_EXTENSION } from './run-id.ts';

/** Something a FileStore noticed and repaired or skipped, never fatal. */
export type FileStoreWarning = {
  /**
   * `torn_tail`: a read found a torn last line (a write cut short by a crash) and ignored it.
   * `tail_truncated`: before appending, that torn line was cut off so new lines never glue onto it.
   * `tail_newline_added`: the last record was complete but lacked its newline; one was added.
   */
  readonly code: 'torn_tail' | 'tail_truncated' | 'tail_newline_added';
  readonly runId: string;
  /** The log file. */
  readonly file: string;
  /** 1-based line number of the affected line. */
  readonly line: number;
  readonly message: string;
};

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

type Durability = 'fsync' | 'none';

/**
 * A durable {@link RunStore} on the local file system.
 *
 * Durability: `intent`, `inputRequest` and `input` (the barriers), `step` and `runEnded` resolve
 * after `fsync`; `runStarted` and `result` do not fsync on their own — the next barrier fsyncs
 * the same file, which makes them durable too, and losing them to a power cut before that is harmless (see
 * docs/reliability.md). The directory is fsynced at the first barrier after each tail check (the
 * first write of an instance, or after `acquire`), and the parent of every directory the store
 * created when it made `dir`.
 *
 * The directory may be shared: a log or lock path holding anything but a regular file (a planted
 * symbolic link, a FIFO, a directory) is never followed or opened; the operation rejects with a
 * `StoreError` naming it.
 *
 * @example
 * const store = new FileStore({ dir: './runs' });
 * const agent = defineAgent({ model, interpreter, store, events, syntheticObservations });
 */
export class FileStore implements RunStore {
  /** Absolute path of the log directory. */
  readonly dir: string;
  readonly #onWarning: (w: FileStoreWarning) => void;
  readonly #queues = new Map<string, Promise<void>>();
  /** Runs whose file tail this instance has checked (and repaired) since its last failed write. */
  readonly #tailChecked = new Set<string>();
  /** Runs whose directory entry this instance has not yet fsynced since it checked the tail. */
  readonly #dirSyncPending = new Set<string>();
  #dirReady: Promise<void> | null = null;

  constructor(opts: FileStoreOptions) {
    if (typeof opts?.dir !== 'string' || opts.dir === '') throw new TypeError('FileStore: `dir` must be a non-empty path');
    this.dir = resolve(opts.dir);
    this.#onWarning = opts.onWarning ?? defaultWarning;
  }

  /** The log file of a run (whether or not it exists). */
  logPath(runId: string): string {
    return join(this.dir, runIdStem(runId) + LOG_EXTENSION);
  }

  /** The lock file of a run. */
  lockPath(runId: string): string {
    return join(this.dir, runIdStem(runId) + '.lock');
  }

  /** Contract: see {@link RunStore.runStarted}; not fsynced on its own (the first barrier covers it). */
  runStarted(runId: string, rec: RunStartedRecord): Promise<void> {
    return this.#append(runId, rec, 'none');
  }

  /**
   * Contract: see {@link RunStore.intent}; a barrier resolves after `fsync` of the log (and its
   * directory entry); a safe model-call intent (not a barrier: `isBarrier`) is not fsynced on its own.
   */
  intent(runId: string, rec: IntentRecord): Promise<void> {
    return this.#append(runId, rec, isBarrier(rec) ? 'fsync' : 'none');
  }

  /** Contract: see {@link RunStore.resultAndIntent}; two lines in one append, then `fsync`. */
  resultAndIntent(runId: string, result: ResultRecord, intent: ActionIntentRecord): Promise<void> {
    return this.#append(runId, [result, intent], 'fsync');
  }

  /** Contract: see {@link RunStore.result}; not fsynced on its own (the next barrier covers it). */
  result(runId: string, _resultId: string, rec: ResultRecord): Promise<void> {
    return this.#append(runId, rec, 'none');
  }

  /** Contract: see {@link RunStore.step}; one line, so all-or-nothing; resolves after `fsync`. */
  step(runId: string, rec: StepWriteRecord): Promise<void> {
    return this.#append(runId, rec, 'fsync');
  }

  /** Contract: see {@link RunStore.runEnded}; resolves after `fsync`. */
  runEnded(runId: string, rec: RunEndedRecord): Promise<void> {
    return this.#append(runId, rec, 'fsync');
  }

  /** Contract: see {@link RunStore.inputRequest}; a barrier like `intent`: resolves after `fsync`. */
  inputRequest(runId: string, rec: InputRequestRecord): Promise<void> {
    return this.#append(runId, rec, 'fsync');
  }

  /** Contract: see {@link RunStore.input}; a barrier like `intent`: resolves after `fsync`, before the reply is carried out. */
  input(runId: string, rec: InputRecord): Promise<void> {
    return this.#append(runId, rec, 'fsync');
  }

  /**
   * Contract: see {@link RunStore.readLog}. Waits for this instance's pending writes to the run;
   * a torn last line is dropped and reported to `onWarning` and `opts.onWarning` (code `torn_tail`;
   * `run`/`resume` turn the latter into a `warning` event); a bad line
   * elsewhere rejects with `CorruptLogError` naming the file and line.
   */
  readLog(runId: string, opts?: ReadLogOptions): Promise<readonly LogRecord[]> {
    return this.#serial(runId, async () => {
      const path = this.logPath(runId);
      const bytes = await readRegular(path).catch(refused(runId, 'readLog'));
      if (bytes === null) return [];
      const { records, tornLine } = decodeLog(decodeLogText(bytes, path), { source: path });
      if (tornLine !== null) {
        const warning: FileStoreWarning = { code: 'torn_tail', runId, file: path, line: tornLine, message: `ignored a torn last line (line ${tornLine}) of ${path}: a write cut short by a crash` };
        this.#warn(warning);
        opts?.onWarning?.(warning);
      }
      return records;
    });
  }

  /**
   * Contract: see {@link RunStore.acquire}. Creates `<log>.lock` with `O_EXCL`; rejects with
   * `RunLockedError` (naming pid, host and lock file) while a live process holds it — this one
   * included; removes a lock whose owner pid is dead on this host. Never waits. The first append
   * after it checks the log's tail again, since another driver may have left it torn.
   */
  async acquire(runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<ReleaseLease> {
    opts.signal?.throwIfAborted();
    await this.#ensureDir();
    const release = await acquireLock(this.lockPath(runId), runId).catch(refused(runId, 'acquire'));
    // Another driver may have written (and torn) the tail since this instance last checked it.
    this.#tailChecked.delete(runId);
    return release;
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

  #append(runId: string, recs: LogRecord | readonly LogRecord[], durability: Durability): Promise<void> {
    let line: string;
    const first = Array.isArray(recs) ? (recs[0] as LogRecord) : (recs as LogRecord);
    try {
      line = Array.isArray(recs) ? recs.map((r: LogRecord) => encodeRecord(r) + '\n').join('') : encodeRecord(recs as LogRecord) + '\n';
    } catch (e) {
      return Promise.reject(e); // a promise-returning method never throws synchronously
    }
    return this.#serial(runId, async () => {
      const path = this.logPath(runId);
      const fh = await this.#openForAppend(runId, path).catch(refused(runId, METHOD[first.kind]));
      try {
        await fh.appendFile(line, 'utf8');
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
    });
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
      await this.#repairTail(runId, path, fh);
    } finally {
      await fh.close();
    }
    this.#tailChecked.add(runId);
  }

  /** Cut a torn last line off, or add the newline a complete last record lacks; through `fh`, never by path. */
  async #repairTail(runId: string, path: string, fh: FileHandle): Promise<void> {
    const buf = await fh.readFile();
    if (buf.length > 0) {
      // The last line as readers see it (core drops it unless it is complete JSON), newline or not.
      const start = lastLineStart(buf);
      const hasNewline = buf[buf.length - 1] === NEWLINE;
      const line = countLines(buf, start) + 1;
      if (!isCompleteJson(buf.subarray(start, hasNewline ? buf.length - 1 : buf.length).toString('utf8'))) {
        await fh.truncate(start);
        this.#warn({ code: 'tail_truncated', runId, file: path, line, message: `cut off a torn last line (line ${line}, ${buf.length - start} bytes) of ${path} before appending` });
      } else if (!hasNewline) {
        await fh.write('\n', buf.length, 'utf8');
        await fh.sync();
        this.#warn({ code: 'tail_newline_added', runId, file: path, line, message: `added the missing newline after the complete last record (line ${line}) of ${path}` });
      }
    }
  }

  #warn(w: FileStoreWarning): void {
    try {
      this.#onWarning(w);
    } catch {
      // A warning hook must not turn a repaired log into a failed write.
    }
  }
}

const NEWLINE = 0x0a;

/** The store method that writes each record kind, for error messages. */
const METHOD: Record<LogRecord['kind'], string> = { run_started: 'runStarted', intent: 'intent', result: 'result', step: 'step', run_ended: 'runEnded', input_request: 'inputRequest', input: 'input' };

function noop(): void {}

function defaultWarning(w: FileStoreWarning): void {
  process.emitWarning(w.message, { code: 'POLYLOOP_FILE_STORE' });
}

function countLines(buf: Buffer, end: number): number {
  let n = 0;
  for (let i = buf.indexOf(NEWLINE); i !== -1 && i < end; i = buf.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The log's text. Lines before the last must be valid UTF-8 — a damaged byte would otherwise be
 * read as U+FFFD into a record — so a bad one is a `CorruptLogError` naming its line. Only the
 * last line, which may be torn inside a multi-byte character, is decoded leniently (core drops
 * it unless it is complete JSON).
 */
export function decodeLogText(bytes: Buffer, source: string): string {
  const cut = lastLineStart(bytes);
  let head: string;
  try {
    head = STRICT_UTF8.decode(bytes.subarray(0, cut));
  } catch {
    throw new CorruptLogError(firstBadUtf8Line(bytes.subarray(0, cut)), 'not valid UTF-8', { source });
  }
  return head + bytes.subarray(cut).toString('utf8');
}

/** Where the last line starts (its trailing newline, if any, not counted as a line break). */
function lastLineStart(bytes: Buffer): number {
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

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A `.catch` handler: a planted non-regular file becomes a `StoreError` naming it; anything else passes as is. */
function refused(runId: string, operation: string): (e: unknown) => never {
  return (e) => {
    throw e instanceof NotRegularFileError ? new StoreError(runId, operation, e) : e;
  };
}

/**
 * `mkdir -p` made `first` and everything below it down to `dir`: fsync the parent of each, so
 * the directories themselves survive a power cut (the log's own entry is fsynced at its barrier).
 */
async function syncNewDirs(first: string, dir: string): Promise<void> {
  for (let d = dir; ; d = dirname(d)) {
    await fsyncDir(dirname(d));
    if (d === first || dirname(d) === d) return;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  let fh;
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
