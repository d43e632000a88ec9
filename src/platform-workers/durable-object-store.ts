/**
 * DurableObjectStore: a run log in a Durable Object's SQLite-backed storage.
 * @module
 */
import { decodeLog, encodeRecord, LogCodec, PolyLoopError, RunLockedError, StopRequestedError } from '../core/index.ts';
import { AppendLogStore, checkOptionKeys, committedLines } from '../core/internal-entry.ts';
import type { LogRecord, ReleaseLease, RunStore, StopRequest, StoredLines } from '../core/index.ts';
import type { LogAppend, OptionKeys } from '../core/internal-entry.ts';

/** The part of `ctx.storage` the store uses (SQLite-backed Durable Object storage). */
export type DurableObjectSqlStorage = Pick<DurableObjectStorage, 'sql' | 'transactionSync' | 'sync'>;

/** One stored record: its per-run sequence number (0, 1, 2 … in write order) and its JSON line. */
export type StoredLine = { readonly seq: number; readonly line: string };

/** Options of {@link DurableObjectStore}. */
export type DurableObjectStoreOptions = {
  /**
   * Largest encoded record accepted, in UTF-16 code units (default 16 Mi). A bigger record is
   * refused with {@link RecordTooLargeError} before anything is written — never truncated.
   */
  readonly maxRecordChars?: number;
  /**
   * Called synchronously after each record is committed, in write order
   * (live SSE feeds on it). A throw is logged, never fails the write.
   */
  readonly onAppend?: (runId: string, entry: StoredLine) => void;
};

/**
 * A row holds at most this many UTF-16 code units of a record (≤ 768 KiB as UTF-8), well under
 * the platform's 2 MB limit for one SQLite string or row; bigger records span several rows.
 */
const PART_CHARS = 256 * 1024;
const DO_STORE_OPTIONS: OptionKeys<DurableObjectStoreOptions> = { maxRecordChars: true, onAppend: true };
const DEFAULT_MAX_RECORD_CHARS = 16 * 1024 * 1024;
const TABLE = 'polyloop_log';
/** One row per run a stop was asked of: the request as JSON (`{}` or `{ "reason": … }`). */
const STOPS = 'polyloop_stop';

/** A record was bigger than the store accepts; nothing was written. Code `store_error`. */
export class RecordTooLargeError extends PolyLoopError {
  override readonly name = 'RecordTooLargeError';
  readonly runId: string;
  readonly recordChars: number;
  readonly maxRecordChars: number;
  constructor(runId: string, recordChars: number, maxRecordChars: number) {
    super(
      'store_error',
      `record of ${recordChars} characters for run ${JSON.stringify(runId.slice(0, 200))} ` +
        `exceeds DurableObjectStore's limit of ${maxRecordChars}; ` +
        'nothing was written (raise maxRecordChars or truncate the observation in the executor)',
    );
    this.runId = runId;
    this.recordChars = recordChars;
    this.maxRecordChars = maxRecordChars;
  }
}

/** Split a line into parts of at most `size` code units, never between a surrogate pair. */
function splitLine(line: string, size: number): string[] {
  const parts: string[] = [];
  let start = 0;
  while (start < line.length) {
    let end = Math.min(start + size, line.length);
    const last = line.charCodeAt(end - 1);
    if (end < line.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    parts.push(line.slice(start, end));
    start = end;
  }
  return parts;
}

/**
 * A {@link RunStore} over a Durable Object's SQLite-backed storage (`ctx.storage`). One table,
 * one row per record part, keyed by (runId, sequence, part); several runs may share one object.
 *
 * Durability: every write is one `transactionSync` (all parts of a record, so the `step` write —
 * action result and step record — is atomic, and a chunked record lands whole or not at all).
 * Barriers (`isBarrier`: intents but a safe model-call intent, `resultAndIntent` — one
 * transaction —, input requests and replies, upgrades, the last record; not the `step` write) also
 * await `storage.sync()`, which resolves only once the write is durable. Other writes resolve at
 * commit; the Durable Object output gate still holds every outgoing message (response, fetch to a
 * model or tool) until they are durable.
 *
 * @example
 * export class MyObject extends DurableObject {
 *   store = new DurableObjectStore(this.ctx.storage);
 * }
 */
export class DurableObjectStore extends AppendLogStore implements RunStore {
  readonly #storage: DurableObjectSqlStorage;
  readonly #maxRecordChars: number;
  readonly #onAppend: ((runId: string, entry: StoredLine) => void) | undefined;
  /** The next sequence number of each run this instance wrote, as of its last commit. */
  readonly #nextSeq = new Map<string, number>();
  /** The lease each run driven through this instance is held by: its token, and the signal its holder watches. */
  readonly #leases = new Map<string, { readonly token: symbol; readonly lost: AbortController }>();

  constructor(storage: DurableObjectSqlStorage, opts: DurableObjectStoreOptions = {}) {
    super();
    checkOptionKeys(opts, DO_STORE_OPTIONS, 'new DurableObjectStore');
    this.#storage = storage;
    this.#maxRecordChars = opts.maxRecordChars ?? DEFAULT_MAX_RECORD_CHARS;
    this.#onAppend = opts.onAppend;
    storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS ${TABLE} ` +
        '(run_id TEXT NOT NULL, seq INTEGER NOT NULL, part INTEGER NOT NULL, body TEXT NOT NULL, ' +
        'PRIMARY KEY (run_id, seq, part))',
    );
    storage.sql.exec(`CREATE TABLE IF NOT EXISTS ${STOPS} (run_id TEXT PRIMARY KEY, request TEXT NOT NULL)`);
  }

  /**
   * Contract: see {@link RunStore.acquire}. The lease is this instance's: a Durable Object runs in
   * one instance at a time, so no other driver can hold the run while this one lives. Refuses
   * (never waits) with `RunLockedError` while another driver of this instance holds it; rejects
   * with `signal.reason` if already aborted. `lost` is aborted with `StopRequestedError` at once
   * when a stop is kept for a run with a log, and when {@link requestStop} runs while the lease is
   * held. Release is idempotent and frees only its own lease.
   */
  acquire(runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<ReleaseLease> {
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    if (this.#leases.has(runId))
      return Promise.reject(new RunLockedError(runId, 'another driver in this object holds it'));
    const token = Symbol(runId);
    const lost = new AbortController();
    this.#leases.set(runId, { token, lost });
    if (this.hasLog(runId)) this.#tellHolder(runId);
    const release = (): Promise<void> => {
      if (this.#leases.get(runId)?.token === token) this.#leases.delete(runId);
      return Promise.resolve();
    };
    return Promise.resolve(Object.assign(release, { lost: lost.signal }));
  }

  /**
   * Contract: see {@link RunStore.requestStop}. Stored in the object's storage and durable when
   * this resolves; the driver holding the run's lease through this instance sees it at once, the
   * next one at its `acquire` (after an eviction too). The first stop asked of a run is the one
   * kept: a second one changes nothing, so the reason the run ends with is the one first given.
   * A stop of a run with no record yet (the run object keeps one asked between its `POST /runs`
   * and the run's first write) reaches the driver once `run_started` is written, not before: a
   * run is stopped only once it has a log to end.
   */
  async requestStop(runId: string, stop: StopRequest): Promise<void> {
    const kept = stop.reason === undefined ? {} : { reason: stop.reason };
    this.#storage.sql.exec(
      `INSERT OR IGNORE INTO ${STOPS} (run_id, request) VALUES (?, ?)`,
      runId,
      JSON.stringify(kept),
    );
    await this.#storage.sync();
    if (this.hasLog(runId)) this.#tellHolder(runId);
  }

  /** Abort the `lost` signal of the run's lease held through this instance, if any, with the stop kept for it. */
  #tellHolder(runId: string): void {
    const stop = this.stopOf(runId);
    if (stop !== null) this.#leases.get(runId)?.lost.abort(new StopRequestedError(runId, stop));
  }

  /** The stop asked of the run and kept for it ({@link requestStop}), or null. Synchronous. */
  stopOf(runId: string): StopRequest | null {
    const row = this.#storage.sql
      .exec<{ request: string }>(`SELECT request FROM ${STOPS} WHERE run_id = ?`, runId)
      .toArray()[0];
    if (row === undefined) return null;
    const { reason } = JSON.parse(row.request) as { reason?: unknown };
    return typeof reason === 'string' ? { reason } : {};
  }

  /**
   * Contract: see {@link AppendLogStore.append}. One transaction (every part of each record): all
   * or nothing; a barrier then awaits `storage.sync()` — but the `step` write, which resolves at
   * commit like a non-barrier (decision 0007): the output gate holds whatever leaves the object
   * until it is durable. Rejects on storage failure or {@link RecordTooLargeError}.
   */
  protected async append(write: LogAppend): Promise<void> {
    const { runId, barrier, method } = write;
    try {
      this.#commit(write);
    } catch (e) {
      this.forgetWrites(runId); // it did not land: write the step in flight in full from here
      throw e;
    }
    if (barrier && method !== 'step') await this.#storage.sync();
    // A stop kept before the run's first record (see requestStop) reaches its driver now.
    if (method === 'runStarted') this.#tellHolder(runId);
  }

  /**
   * Append the write's records in one transaction (every part of each), then tell the observer of
   * each, as `encodeRecord` writes it (every field out: readable on its own, unlike the stored line).
   */
  #commit(write: LogAppend): void {
    const { runId, records } = write;
    const lines = this.encodeWrite(write);
    for (const line of lines)
      if (line.length > this.#maxRecordChars) throw new RecordTooLargeError(runId, line.length, this.#maxRecordChars);
    const first = this.#insert(runId, lines);
    if (!this.#onAppend) return;
    records.forEach((rec, k) => {
      try {
        this.#onAppend?.(runId, { seq: first + k, line: encodeRecord(rec) });
      } catch (e) {
        // The record is committed; a failing observer must not turn that into a failed write.
        console.error('polyloop: DurableObjectStore onAppend listener threw:', e);
      }
    });
  }

  /**
   * Insert `lines` in one transaction after the run's last record; the first sequence number. The
   * next sequence of a run this instance wrote is remembered, which saves a `MAX(seq)` query per
   * write; if another store on the same storage appended meanwhile, that sequence is taken, the
   * insert fails and rolls back, and the write is made again after reading the sequence.
   */
  #insert(runId: string, lines: readonly string[]): number {
    const { sql } = this.#storage;
    const write = (next: number): number => {
      lines.forEach((line, k) =>
        splitLine(line, PART_CHARS).forEach((part, i) =>
          sql.exec(`INSERT INTO ${TABLE} (run_id, seq, part, body) VALUES (?, ?, ?, ?)`, runId, next + k, i, part),
        ),
      );
      return next;
    };
    const known = this.#nextSeq.get(runId);
    let first: number;
    try {
      first = this.#storage.transactionSync(() => write(known ?? this.lastSeq(runId) + 1));
    } catch (e) {
      this.#nextSeq.delete(runId);
      if (known === undefined) throw e;
      first = this.#storage.transactionSync(() => write(this.lastSeq(runId) + 1));
    }
    this.#nextSeq.set(runId, first + lines.length);
    return first;
  }

  /** Contract: decoded records in write order, `[]` for a run never written; fresh objects each call. */
  async readLog(runId: string): Promise<readonly LogRecord[]> {
    return this.readLogSync(runId);
  }

  /**
   * {@link readLog}, synchronously: for a reader that must act on the log in the same turn it read
   * it (no append can slip in between). Throws `CorruptLogError` or `SchemaVersionError` as `readLog` rejects.
   */
  readLogSync(runId: string): readonly LogRecord[] {
    const { lines, source } = this.readLogLinesSync(runId);
    return decodeLog(lines, { source }).records;
  }

  /** Contract: see {@link RunStore.readLogLines}; the lines {@link readLog} decodes, refused as it refuses them. */
  async readLogLines(runId: string): Promise<StoredLines> {
    return this.readLogLinesSync(runId);
  }

  /** {@link readLogLines}, synchronously, as {@link readLogSync} is. */
  readLogLinesSync(runId: string): StoredLines {
    // Another driver may have written since this store's codec followed the log.
    this.forgetWrites(runId);
    const lines = this.readLines(runId).map((l) => l.line);
    return committedLines(lines, `durable-object:${runId.slice(0, 200)}`, 'a committed record is not valid JSON');
  }

  /**
   * The encoded records of a run with a sequence number above `afterSeq` (default: all), in write
   * order. Synchronous, so a reader can register for live appends in the same turn with no gap.
   */
  readLines(runId: string, afterSeq = -1): StoredLine[] {
    const rows = this.#storage.sql.exec<{ seq: number; body: string }>(
      `SELECT seq, body FROM ${TABLE} WHERE run_id = ? AND seq > ? ORDER BY seq, part`,
      runId,
      afterSeq,
    );
    const out: { seq: number; line: string }[] = [];
    for (const row of rows) {
      const last = out[out.length - 1];
      if (last && last.seq === row.seq) last.line += row.body;
      else out.push({ seq: row.seq, line: row.body });
    }
    return out;
  }

  /**
   * {@link readLines}, each record as `encodeRecord` writes it (every field out), for a reader that
   * takes lines one at a time (the event stream): a stored line may leave out what the records of
   * its step before it hold (docs/log-format.md#the-lean-form). The log is read from its start to
   * fill those in; a line that does not decode, and every line after it, is given as stored.
   */
  readRecordLines(runId: string, afterSeq = -1): StoredLine[] {
    const codec = new LogCodec();
    const out: StoredLine[] = [];
    let readable = true;
    for (const entry of this.readLines(runId)) {
      let line = entry.line;
      if (readable) {
        try {
          line = encodeRecord(codec.decode(entry.line));
        } catch {
          readable = false;
        }
      }
      if (entry.seq > afterSeq) out.push({ seq: entry.seq, line });
    }
    return out;
  }

  /** The sequence number of the run's last record, -1 for a run never written. */
  lastSeq(runId: string): number {
    const top = this.#storage.sql
      .exec<{ m: number | null }>(`SELECT MAX(seq) AS m FROM ${TABLE} WHERE run_id = ?`, runId)
      .one();
    return top.m ?? -1;
  }

  /**
   * Delete every record of a run, and a stop asked of it, in one transaction. Not a
   * {@link RunStore} method: to the library a log is append-only. The run object uses it only to
   * drop an import that never completed, which no client was told about.
   */
  discard(runId: string): void {
    this.#storage.transactionSync(() => {
      this.#storage.sql.exec(`DELETE FROM ${TABLE} WHERE run_id = ?`, runId);
      // A stop asked of the run dropped here must not stop the next run of the same id.
      this.#storage.sql.exec(`DELETE FROM ${STOPS} WHERE run_id = ?`, runId);
    });
    this.#nextSeq.delete(runId);
  }

  /** True when the run has at least one record. */
  hasLog(runId: string): boolean {
    return this.#storage.sql.exec(`SELECT 1 AS x FROM ${TABLE} WHERE run_id = ? LIMIT 1`, runId).toArray().length > 0;
  }
}
