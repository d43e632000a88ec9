/**
 * IndexedDBStore: run logs in the browser's IndexedDB (via `idb`), one row in one transaction per
 * barrier, with a Web Locks run lease.
 * @module
 */
import { openDB } from 'idb';
import type { IDBPDatabase } from 'idb';
import { decodeLog, isPolyLoopError, StoreError } from '../core/index.ts';
import { AppendLogStore, checkOptionKeys, committedLines } from '../core/internal-entry.ts';
import type { LogRecord, ReleaseLease, RunStore, StopRequest, StoredLines } from '../core/index.ts';
import type { LogAppend, OptionKeys } from '../core/internal-entry.ts';
import { HeldRecords } from './held-records.ts';
import { runInfo, storedSource } from './run-info.ts';
import type { StoredRunInfo } from './run-info.ts';
import { acquireLocalLease, acquireWebLock, leaseName, webLocks } from './lease.ts';
import type { LeaseMode } from './lease.ts';
import { DB_VERSION, rowTexts, stopKey, upgradeSchema } from './schema.ts';
import type { LegacyRow, PolyLoopDB, StoredRow } from './schema.ts';
import { announceStop, readStopRow, runRange, watchedLease, writeStopRow } from './stops.ts';

/** Options of {@link IndexedDBStore}. */
export type IndexedDBStoreOptions = {
  /** The IndexedDB database name; one database holds any number of runs. */
  readonly dbName: string;
  /**
   * What a second driver of a run gets from `acquire`: `'wait'` (default: a reloading page frees
   * its lock a moment late, so the new page waits for it) or `'refuse'` (`RunLockedError` at once).
   */
  readonly lease?: LeaseMode;
  /**
   * Told about degraded operation: Web Locks missing (the lease then only excludes drivers in
   * this page) or an upgrade blocked by an old tab that does not close. Default `console.warn`.
   */
  readonly onWarning?: (message: string) => void;
};

const IDB_STORE_OPTIONS: OptionKeys<IndexedDBStoreOptions> = { dbName: true, lease: true, onWarning: true };

/**
 * A {@link RunStore} over IndexedDB, for agents that run in a browser tab (or a worker) and must
 * survive a reload. A barrier (`isBarrier`: an intent but a safe model-call intent,
 * `resultAndIntent`, `step`, `inputRequest` — a closed tab still shows it on reopen —, `input` — a
 * click is never asked for twice —, `upgrade`, `run_ended`) is one readwrite transaction with
 * `{ durability: 'strict' }` that resolves on `complete`. The rest (`run_started`, a safe
 * model-call intent, a result alone, a call result) are held in memory and committed first in the run's next
 * transaction, or on their own (`relaxed`) after 50 ms without one, at the lease's release, or at
 * `close` (decision 0043): a tab or OS crash may lose them, never out of order, which leaves the
 * run at its last barrier. `readLog` and `listRuns` of the same instance include them. An action
 * step is two strict transactions of one request each, whether it holds one call or several: a
 * transaction writes one row holding its records (decision 0082).
 * Records are stored as the run's `LogCodec` writes them and decoded with the core decoder, so a
 * record of a foreign schema major is refused with `SchemaVersionError`. Write failures (a full
 * quota among them) reject with `StoreError` whose `cause` is the browser's error; the aborted transaction
 * leaves nothing half-written. The open connection closes itself when another tab upgrades or
 * deletes the database, and reopens on the next call.
 *
 * A stop request (core's `requestStop`) is a row in the database and a BroadcastChannel message:
 * the lease holder's `lost` aborts at once, or at its next re-read of the row (0.5 s) when the
 * message was missed; the next `acquire` sees it otherwise (decision 0074).
 *
 * @example
 * const store = new IndexedDBStore({ dbName: 'my-agent' });
 * const agent = defineAgent({ model, interpreter, store, events, syntheticObservations });
 * const result = await resume(agent, request); // after a reload: continues where the tab left off
 */
export class IndexedDBStore extends AppendLogStore implements RunStore {
  readonly dbName: string;
  readonly #mode: LeaseMode;
  readonly #warn: (message: string) => void;
  #conn: Promise<IDBPDatabase<PolyLoopDB>> | null = null;
  #warnedNoLocks = false;
  /** The next row number of each run this instance wrote, as of its last commit. */
  readonly #nextSeq = new Map<string, number>();
  readonly #held = new HeldRecords((runId) => void this.#flush(runId).catch(() => undefined));
  /** Runs whose `run_started` waits for its commit, which deletes an earlier run's stop request. */
  readonly #starting = new Set<string>();

  constructor(options: IndexedDBStoreOptions) {
    super();
    checkOptionKeys(options, IDB_STORE_OPTIONS, 'new IndexedDBStore');
    if (typeof options?.dbName !== 'string' || options.dbName === '') {
      throw new TypeError('IndexedDBStore needs a non-empty dbName');
    }
    if (options.lease !== undefined && options.lease !== 'wait' && options.lease !== 'refuse') {
      throw new TypeError(`IndexedDBStore lease must be 'wait' or 'refuse', got ${JSON.stringify(options.lease)}`);
    }
    this.dbName = options.dbName;
    this.#mode = options.lease ?? 'wait';
    this.#warn = options.onWarning ?? ((m) => console.warn(m));
  }

  /**
   * Contract: never takes the lease; fresh decoded objects in write order, the records this
   * instance still holds after the stored ones; `[]` for an unknown run;
   * `CorruptLogError`/`SchemaVersionError` for a bad record, `StoreError` for other failures.
   */
  async readLog(runId: string): Promise<readonly LogRecord[]> {
    const { lines, source } = await this.readLogLines(runId);
    return decodeLog(lines, { source }).records;
  }

  /** Contract: see {@link RunStore.readLogLines}; the texts {@link readLog} decodes, refused as it refuses them. */
  async readLogLines(runId: string): Promise<StoredLines> {
    // Another driver may have written since this store's codec followed the log.
    this.forgetWrites(runId);
    let texts: string[];
    try {
      texts = await this.#withDb((db) => {
        // The read transaction and the held snapshot are taken together: a write that took held
        // records opened its transaction before, and this read waits for it.
        const rows = db.getAll('records', runRange(runId));
        const held = [...this.#held.peek(runId)];
        return rows.then((r) => [...r.flatMap(rowTexts), ...held]);
      });
    } catch (e) {
      throw isPolyLoopError(e) ? e : new StoreError(runId, 'readLog', e);
    }
    return committedLines(texts, storedSource(this.dbName, runId), 'not valid JSON');
  }

  /**
   * Take the single-driver lease of a run (Web Locks, per origin: tabs and workers).
   *
   * Contract: resolves with an idempotent release once this caller is the only driver; in
   * `'refuse'` mode rejects with `RunLockedError` when another driver holds it, in `'wait'` mode
   * waits; rejects with `opts.signal.reason` when aborted while waiting. Without Web Locks the
   * lease only excludes drivers in this page, and `onWarning` is told once. The release carries
   * `lost`: aborted with `StopRequestedError` (already, if asked while no one held the run), or
   * `LeaseLostError` when the Web Lock is stolen (what the run holds in memory is then dropped:
   * it would land behind the thief's records). `StoreError` (lease freed) if the stop cannot be read.
   */
  acquire(runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<ReleaseLease> {
    const lost = new AbortController();
    const onLost = (error: Error): void => {
      this.#held.take(runId);
      lost.abort(error);
    };
    const req = { name: leaseName(this.dbName, runId), runId, mode: this.#mode, signal: opts.signal, onLost };
    const locks = webLocks();
    if (!locks && !this.#warnedNoLocks) {
      this.#warnedNoLocks = true;
      this.#warn(
        'polyloop: Web Locks (navigator.locks) is not available here; ' +
          `the run lease of IndexedDBStore ${JSON.stringify(this.dbName)} excludes other drivers in this page only, ` +
          'not other tabs',
      );
    }
    return (locks ? acquireWebLock(locks, req) : acquireLocalLease(req)).then((release) =>
      watchedLease({
        dbName: this.dbName,
        runId,
        lost,
        release: this.#committingRelease(runId, release),
        read: () => this.#withDb((db) => readStopRow(db, runId)),
      }),
    );
  }

  /**
   * Contract: see {@link RunStore.requestStop}. One strict transaction stores the request under
   * the run (what this instance holds of the run is committed first, so the run's log is there
   * before it), then a BroadcastChannel message tells the tab holding the run's lease.
   * Rejects with `StoreError`; nothing is announced then.
   */
  async requestStop(runId: string, stop: StopRequest): Promise<void> {
    const kept = stop.reason === undefined ? {} : { reason: stop.reason };
    await this.#flush(runId);
    try {
      await this.#withDb((db) => writeStopRow(db, runId, kept));
    } catch (e) {
      throw new StoreError(runId, 'requestStop', e);
    }
    announceStop(this.dbName, runId, kept);
  }

  /**
   * The lease's release, which first commits what the run holds, so the next driver reads it. If
   * that commit fails the held records are dropped (a crash would have lost them too, leaving the
   * run at its last barrier): kept, they would land later behind the next driver's records. The
   * lease is freed either way; the failure is then reported.
   */
  #committingRelease(runId: string, release: ReleaseLease): ReleaseLease {
    let done: Promise<void> | null = null;
    const commitThenRelease = async (): Promise<void> => {
      let failure: unknown = null;
      await this.#flush(runId).catch((e: unknown) => {
        this.#held.take(runId);
        failure = e;
      });
      await release();
      if (failure !== null) throw failure;
    };
    return () => (done ??= commitThenRelease());
  }

  /**
   * Runs with a log in this database, sorted by runId, each as `readRunLog` reads its log (no
   * state is kept beside the log, so none can disagree with it). Reads every log in one readonly
   * transaction: ~0.1–0.3 s for 100 runs of 50 records in Chromium on a loaded 2-core machine,
   * nearly all of it reading the records (decision 0021). A log that cannot be read is listed
   * with its `error`; rejects with `StoreError` only when the database cannot be read at all.
   */
  async listRuns(): Promise<readonly StoredRunInfo[]> {
    let rows: (StoredRow | LegacyRow)[];
    let held: [string, string[]][] = [];
    try {
      rows = await this.#withDb((db) => {
        const all = db.getAll('records');
        held = this.#held.runs().map((runId) => [runId, [...this.#held.peek(runId)]]);
        return all;
      });
    } catch (e) {
      throw new StoreError('*', 'listRuns', e);
    }
    // Keys are [runId, seq], so getAll returns each run's records together and in write order;
    // what this instance holds follows each run's stored records.
    const byRun = new Map<string, string[]>();
    for (const row of rows) {
      const texts = byRun.get(row.runId);
      if (texts) texts.push(...rowTexts(row));
      else byRun.set(row.runId, [...rowTexts(row)]);
    }
    for (const [runId, texts] of held) {
      const stored = byRun.get(runId);
      if (stored) stored.push(...texts);
      else byRun.set(runId, [...texts]);
    }
    return [...byRun]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([runId, texts]) => runInfo(this.dbName, runId, texts));
  }

  /**
   * Commit the records this instance holds, then close the connection (a later call reopens it).
   * Call before deleting the database. Rejects with the `StoreError` of a commit that failed
   * (those records are then dropped; the connection is closed all the same).
   */
  async close(): Promise<void> {
    const flushes = await Promise.allSettled(this.#held.runs().map((runId) => this.#flush(runId)));
    for (const runId of this.#held.runs()) this.#held.take(runId);
    const conn = this.#conn;
    this.#conn = null;
    if (conn) (await conn.catch(() => null))?.close();
    const failed = flushes.find((f): f is PromiseRejectedResult => f.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Contract: see {@link AppendLogStore.append}. A barrier is one readwrite transaction with
   * `{ durability: 'strict' }` (what the run holds first), resolving on `complete`: all or nothing,
   * durable when it resolves. Anything else is held for the run's next transaction (see above).
   * Rejects with `StoreError`.
   */
  protected async append(write: LogAppend): Promise<void> {
    const { runId, barrier, method } = write;
    try {
      const texts = this.encodeWrite(write);
      if (method === 'runStarted') this.#starting.add(runId);
      if (!barrier) this.#held.hold(runId, texts);
      else await this.#withDb((db) => this.#commit(db, runId, texts, 'strict'));
    } catch (e) {
      this.forgetWrites(runId); // it may not have landed: write the step in flight in full from here
      throw new StoreError(runId, method, e);
    }
  }

  /** Commit what the run holds on its own (`relaxed`); nothing to do when it holds nothing. */
  async #flush(runId: string): Promise<void> {
    if (this.#held.peek(runId).length === 0) return;
    try {
      await this.#withDb((db) => this.#commit(db, runId, [], 'relaxed'));
    } catch (e) {
      throw new StoreError(runId, 'flush', e);
    }
  }

  /**
   * One transaction: what the run holds, then `texts`. The held records are taken in the same
   * synchronous turn the transaction is opened, so no read or write can come between them; if the
   * transaction fails (it then wrote nothing) they go back in front of whatever is held now.
   */
  async #commit(
    db: IDBPDatabase<PolyLoopDB>,
    runId: string,
    texts: readonly string[],
    durability: 'strict' | 'relaxed',
  ): Promise<void> {
    const held = this.#held.take(runId);
    const all = held.length === 0 ? texts : [...held, ...texts];
    if (all.length === 0) return;
    try {
      if (!(await this.#write(db, runId, all, durability, this.#nextSeq.get(runId))))
        await this.#write(db, runId, all, durability, undefined);
    } catch (e) {
      this.#nextSeq.delete(runId);
      this.#held.putBack(runId, held);
      throw e;
    }
  }

  /**
   * Append `texts` to the run as one row in one transaction: one request, whatever the number of
   * records (decision 0082). With the row number this instance last wrote (`known`) the row goes
   * out at once, without reading the run's last key first: that saves a round trip to the storage
   * process per write. Row numbers are contiguous, so if another connection appended meanwhile the
   * slot `known` is taken, the add fails with ConstraintError and the transaction aborts (nothing
   * written); false is returned, for a retry that reads the last key first. A database deleted or
   * upgraded by another tab drops the connection, and with it every remembered row number.
   */
  async #write(
    db: IDBPDatabase<PolyLoopDB>,
    runId: string,
    texts: readonly string[],
    durability: 'strict' | 'relaxed',
    known: number | undefined,
  ): Promise<boolean> {
    // The run's first commit deletes a stop request an earlier run of the same id left behind.
    const starting = this.#starting.has(runId);
    const scope: ('records' | 'runs')[] = starting ? ['records', 'runs'] : ['records'];
    const tx = db.transaction(scope, 'readwrite', { durability });
    const records = tx.objectStore('records');
    const seq = known ?? ((await records.openKeyCursor(runRange(runId), 'prev'))?.key[1] ?? -1) + 1;
    try {
      const done = Promise.all([
        records.add({ runId, seq, texts }),
        ...(starting ? [tx.objectStore('runs').delete(stopKey(runId))] : []),
        tx.done,
      ]);
      // Nothing more goes in: saying so lets the browser commit without first telling this page
      // that the add succeeded and waiting to see whether it adds more. commit() throws only if
      // the transaction already ended (a request aborted it); `done` then rejects with why.
      try {
        tx.commit();
      } catch {}
      await done;
    } catch (e) {
      if (known !== undefined && e instanceof DOMException && e.name === 'ConstraintError') return false;
      throw e;
    }
    this.#nextSeq.set(runId, seq + 1);
    if (starting) this.#starting.delete(runId);
    return true;
  }

  /**
   * Run `fn` on the open connection. If another tab's upgrade or delete closed that connection
   * under us (`InvalidStateError`), run it once more on a fresh one: a transaction that failed
   * that way wrote nothing, so the retry cannot duplicate a record.
   */
  async #withDb<T>(fn: (db: IDBPDatabase<PolyLoopDB>) => Promise<T>): Promise<T> {
    const conn = this.#db();
    try {
      return await fn(await conn);
    } catch (e) {
      const closedUnderUs = e instanceof DOMException && e.name === 'InvalidStateError' && this.#conn !== conn;
      if (!closedUnderUs) throw e;
      return fn(await this.#db());
    }
  }

  #db(): Promise<IDBPDatabase<PolyLoopDB>> {
    if (this.#conn) return this.#conn;
    const conn = openDB<PolyLoopDB>(this.dbName, DB_VERSION, {
      upgrade: (db, oldVersion, _newVersion, tx) => upgradeSchema(db, oldVersion, tx),
      blocked: (current) => {
        this.#warn(
          `polyloop: upgrading IndexedDB ${JSON.stringify(this.dbName)} from version ${current} ` +
            'waits for another tab to close it',
        );
      },
      // Another tab upgrades or deletes the database: let it, and reopen on our next call.
      blocking: () => this.#drop(conn, true),
      terminated: () => this.#drop(conn, false),
    });
    this.#conn = conn;
    conn.catch(() => this.#drop(conn, false));
    return conn;
  }

  #drop(conn: Promise<IDBPDatabase<PolyLoopDB>>, close: boolean): void {
    if (this.#conn === conn) this.#conn = null;
    this.#nextSeq.clear();
    if (close)
      void conn.then(
        (db) => db.close(),
        () => undefined,
      );
  }
}
