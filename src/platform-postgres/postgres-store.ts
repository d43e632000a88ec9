/**
 * PostgresStore: run logs in Postgres through the application's own node-postgres pool. Every
 * write is one statement, so one committed transaction; a run lease that expires when its holder
 * stops renewing it; fencing on every write. See docs/postgres.md.
 * @module
 */
import { hostname } from 'node:os';
import { decodeLog, isPolyLoopError, RunLockedError, RunNotFoundError, StoreError } from '../core/index.ts';
import { AppendLogStore, checkOptionKeys, committedLines } from '../core/internal-entry.ts';
import type { LogRecord, ReleaseLease, RunStore, StopRequest, StoredLines } from '../core/index.ts';
import type { LogAppend, OptionKeys } from '../core/internal-entry.ts';
import { describeHolder, readableId, RUN_KEY, takeLease } from './lease.ts';
import type { HeldLease, LeaseContext } from './lease.ts';
import type { PgPoolLike } from './pg-types.ts';
import { quotedSchema } from './schema.ts';
import { RunRowWatch } from './watch.ts';

/** Options of {@link PostgresStore}. */
export type PostgresStoreOptions = {
  /**
   * The application's `pg.Pool` (or anything with its `query` and `connect`). The store never
   * ends it. Give it an `'error'` listener: node-postgres emits one for an idle connection the
   * server dropped (a restart), and an unlistened one ends the process.
   */
  readonly pool: PgPoolLike;
  /** The Postgres schema (namespace) `migrate()` created the tables in; default `polyloop`. */
  readonly schema?: string;
  /** How long a lease lives without renewal, in ms (default 30,000): the longest a dead holder blocks its run. */
  readonly leaseMs?: number;
  /** How often a held lease is renewed, in ms (default a third of `leaseMs`). */
  readonly heartbeatMs?: number;
  /**
   * What `acquire` of a run another process holds does: `'refuse'` (default, `RunLockedError`
   * at once) or `'wait'` (until the holder releases it or its lease expires, or the signal aborts).
   */
  readonly lease?: 'refuse' | 'wait';
  /** Names this process to a refused acquirer (default `<hostname> pid <pid>`). */
  readonly owner?: string;
};

const POSTGRES_STORE_OPTIONS: OptionKeys<PostgresStoreOptions> = {
  pool: true,
  schema: true,
  leaseMs: true,
  heartbeatMs: true,
  lease: true,
  owner: true,
};

/**
 * A durable {@link RunStore} in Postgres, for Node services that run agents on several
 * machines. One row per record in `<schema>.records`, keyed by run and sequence number, holding
 * the record exactly as the run's `LogCodec` writes it (so exports are byte-equal to other stores'),
 * and one row per run in `<schema>.runs` with its sequence counter and lease. Create the tables
 * with {@link migrate} first.
 *
 * Durability: every write resolves once its statement committed (with the server's default
 * `synchronous_commit`, flushed to the WAL), barrier or not: one statement per write, so `step`
 * (one record) and `resultAndIntent` (two, in order) are all-or-nothing. Write failures reject
 * with `StoreError` (its `cause` the driver's error, or a `RunLockedError` when the run's lease
 * belongs to another holder); a failed statement wrote nothing, one whose connection broke at
 * commit may have landed.
 *
 * Lease: `acquire` takes a lease that lives `leaseMs` and is renewed every `heartbeatMs` while
 * held; a killed holder blocks its run for at most `leaseMs`, and a lease whose release failed
 * (the database was down) does not block the next acquire through the same instance. Each
 * write names the writer's lease and is refused when another holder has taken the run since.
 *
 * @example
 * import pg from 'pg';
 * import { migrate, PostgresStore } from 'polyloop/postgres';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * pool.on('error', (e) => console.warn('idle Postgres connection lost:', e.message));
 * await migrate(pool);
 * const agent = defineAgent({ model, interpreter, store: new PostgresStore({ pool }), events, syntheticObservations });
 */
export class PostgresStore extends AppendLogStore implements RunStore {
  readonly #pool: PgPoolLike;
  readonly #schema: string;
  readonly #lease: LeaseContext;
  /** The leases this instance holds, by run: their tokens go with every write (fencing). */
  readonly #held = new Map<string, HeldLease>();
  /** The runs a driver of this instance holds or is acquiring: settles when it released them. */
  readonly #drivers = new Map<string, Promise<void>>();
  /**
   * Tokens of leases this instance took whose release failed (the database was unreachable), by
   * run: still this instance's in the database until they expire, so its next acquire of the run
   * takes them over at once. They never leave the instance; forgotten after `leaseMs`.
   */
  readonly #leftBehind = new Map<string, string>();
  /** Reads the rows of the runs in `#held` every half second: stop requests, leases taken over. */
  readonly #watch: RunRowWatch;

  constructor(options: PostgresStoreOptions) {
    super();
    checkOptionKeys(options, POSTGRES_STORE_OPTIONS, 'new PostgresStore');
    if (typeof options?.pool?.query !== 'function') throw new TypeError('PostgresStore needs a `pool` (a pg.Pool)');
    const leaseMs = options.leaseMs ?? 30_000;
    const heartbeatMs = options.heartbeatMs ?? Math.floor(leaseMs / 3);
    if (!Number.isInteger(leaseMs) || leaseMs < 100)
      throw new TypeError(`PostgresStore leaseMs must be an integer ≥ 100, got ${String(leaseMs)}`);
    if (!Number.isInteger(heartbeatMs) || heartbeatMs < 10 || heartbeatMs >= leaseMs)
      throw new TypeError(
        `PostgresStore heartbeatMs must be an integer ≥ 10 and below leaseMs, got ${String(heartbeatMs)}`,
      );
    if (options.lease !== undefined && options.lease !== 'refuse' && options.lease !== 'wait')
      throw new TypeError(`PostgresStore lease must be 'refuse' or 'wait', got ${JSON.stringify(options.lease)}`);
    this.#pool = options.pool;
    this.#schema = quotedSchema(options.schema);
    const owner = options.owner ?? `${hostname()} pid ${process.pid}`;
    this.#lease = {
      pool: this.#pool,
      schema: this.#schema,
      leaseMs,
      heartbeatMs,
      owner,
      mode: options.lease ?? 'refuse',
    };
    this.#watch = new RunRowWatch(this.#lease, this.#held);
  }

  /**
   * Contract: see {@link RunStore.readLog}. One statement, so one snapshot: records in write
   * order, never a half-written one. Never takes the lease. A record that is not JSON is
   * `CorruptLogError` (a committed row is never torn), a foreign major `SchemaVersionError`,
   * anything else `StoreError`.
   */
  async readLog(runId: string): Promise<readonly LogRecord[]> {
    const { lines, source } = await this.readLogLines(runId);
    return decodeLog(lines, { source }).records;
  }

  /** Contract: see {@link RunStore.readLogLines}; the rows {@link readLog} decodes, refused as it refuses them. */
  async readLogLines(runId: string): Promise<StoredLines> {
    // Another driver may have written since this store's codec followed the log.
    this.forgetWrites(runId);
    let texts: string[];
    try {
      const r = await this.#pool.query({
        name: `polyloop-read-${this.#schema}`,
        text: `SELECT record FROM ${this.#schema}.records WHERE run_key = ${RUN_KEY} ORDER BY seq`,
        values: [JSON.stringify(runId)],
      });
      texts = r.rows.map((row) => String(row['record']));
    } catch (e) {
      throw new StoreError(runId, 'readLog', e);
    }
    return committedLines(texts, `postgres:${this.#schema}.records/${runId}`, 'not valid JSON');
  }

  /**
   * Contract: see {@link RunStore.acquire}. Resolves once this caller holds the run's lease,
   * renewed every `heartbeatMs` until released; rejects with `RunLockedError` naming the holder
   * while another live holder has it (or, with `lease: 'wait'`, waits until it is released or
   * expires); rejects with `signal.reason` when aborted. Through one instance a run has one driver
   * at a time: a second acquire of a run this instance holds is refused (or waits for the
   * release) even once the first lease expired in the database. Release is idempotent and never
   * frees a lease another holder took since. A failed release rejects and the lease expires by
   * itself; until then this instance's next acquire of the run (and only this instance's) takes
   * it over at once (docs/postgres.md, "Lease and fencing").
   *
   * The release carries `lost`, aborted with `StopRequestedError` when a stop is requested (at
   * once when one was stored before this acquire; otherwise within a second, seen by a check of
   * the run's row every half second, by the heartbeat, or by a write), and with `LeaseLostError`
   * when the lease is lost: a renewal, a check or a write finds another holder, or no renewal
   * reached the database for `leaseMs` (so the lease may have expired and been taken).
   */
  async acquire(runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<ReleaseLease> {
    opts.signal?.throwIfAborted();
    // One driver per run in this instance: its writes carry the instance's token for the run, so
    // the database could not refuse a stale driver of this instance once a second one held it.
    for (let busy = this.#drivers.get(runId); busy; busy = this.#drivers.get(runId)) {
      if (this.#lease.mode === 'refuse')
        throw new RunLockedError(runId, `this store instance (${this.#lease.owner}) is driving it`);
      await untilSettled(busy, opts.signal);
    }
    let done: () => void = () => undefined;
    const slot = new Promise<void>((resolve) => (done = resolve));
    this.#drivers.set(runId, slot);
    const free = (): void => {
      if (this.#drivers.get(runId) === slot) this.#drivers.delete(runId);
      done();
    };
    try {
      const reclaim = this.#leftBehind.get(runId) ?? null;
      const { release, held } = await takeLease(
        this.#lease,
        runId,
        opts.signal,
        () => {
          if (this.#held.get(runId) === held) this.#held.delete(runId);
        },
        reclaim,
      );
      if (reclaim !== null && this.#leftBehind.get(runId) === reclaim) this.#leftBehind.delete(runId);
      this.#held.set(runId, held);
      this.#watch.wake();
      let releasing: Promise<void> | null = null;
      const leaveBehind = (e: unknown): never => {
        if (!held.lost) this.#leaveBehind(runId, held.token);
        throw e;
      };
      // The slot stays taken until the database lease is free too, so the next driver's acquire finds it free.
      const releaseOnce = (): Promise<void> => (releasing ??= release().catch(leaveBehind).finally(free));
      return Object.assign(releaseOnce, { lost: held.signal });
    } catch (e) {
      free();
      if (opts.signal?.aborted && e === opts.signal.reason) throw e;
      throw isPolyLoopError(e) ? e : new StoreError(runId, 'acquire', e);
    }
  }

  /** Keep a failed release's token for this instance's next acquire of the run, until the lease expired anyway. */
  #leaveBehind(runId: string, token: string): void {
    this.#leftBehind.set(runId, token);
    const forget = setTimeout(() => {
      if (this.#leftBehind.get(runId) === token) this.#leftBehind.delete(runId);
    }, this.#lease.leaseMs);
    forget.unref?.();
  }

  /**
   * Contract: see {@link RunStore.requestStop}. Resolves once the request is committed in the
   * run's row (`stop_request`, `stop_requested_at`), where the driver holding the lease, in any
   * process, reads it within a second; a driver of this instance sees it at once, and the next
   * acquire of a run nobody drives resolves with `lost` already aborted. A second request replaces
   * the first's reason. Rejects with `RunNotFoundError` when the run has no row, `StoreError` when
   * the database fails.
   */
  async requestStop(runId: string, stop: StopRequest): Promise<void> {
    const kept: StopRequest = stop.reason === undefined ? {} : { reason: stop.reason };
    let found: number | null;
    try {
      const r = await this.#pool.query({
        name: `polyloop-stop-${this.#schema}`,
        text:
          `UPDATE ${this.#schema}.runs SET stop_request = $2, stop_requested_at = now() ` +
          `WHERE run_key = ${RUN_KEY}`,
        values: [JSON.stringify(runId), JSON.stringify(kept)],
      });
      found = r.rowCount;
    } catch (e) {
      throw new StoreError(runId, 'requestStop', olderSchema(e));
    }
    if (found !== 1) throw new RunNotFoundError(runId);
    this.#held.get(runId)?.stopRequested(JSON.stringify(kept));
  }

  /**
   * Contract: see {@link AppendLogStore.append}; a barrier or not, the records are committed, in
   * one statement, when it resolves; rejects with `StoreError`. The statement bumps the run's
   * counter by their number and inserts them under the old value on, only if the writer's lease is
   * the run's (or, writing without one, nobody holds a live lease). The counter row's lock orders
   * concurrent writers of a run. It also reads the run's stop request: a writer holding the lease
   * is stopped by one it finds, and loses the lease when the write is refused.
   */
  protected async append(write: LogAppend): Promise<void> {
    try {
      await this.#append(write);
    } catch (e) {
      this.forgetWrites(write.runId); // it may not have landed: write the step in flight in full from here
      throw e;
    }
  }

  async #append(write: LogAppend): Promise<void> {
    const { runId, records, method } = write;
    const held = this.#held.get(runId);
    let row: Record<string, unknown> | undefined;
    const sentAt = performance.now();
    try {
      const texts = this.encodeWrite(write);
      const r = await this.#pool.query({
        name: `polyloop-append-${this.#schema}`,
        text: `WITH run AS (
                 INSERT INTO ${this.#schema}.runs AS r (run_key, run_id, next_seq) VALUES (${RUN_KEY}, $2, $7::int)
                 ON CONFLICT (run_key) DO UPDATE SET next_seq = r.next_seq + $7::int,
                   lease_expires_at = CASE WHEN $3::text IS NULL THEN r.lease_expires_at
                     ELSE greatest(r.lease_expires_at, now() + $6::float8 * interval '1 millisecond') END
                 WHERE r.lease_holder IS NOT DISTINCT FROM $3::text
                    OR ($3::text IS NULL AND r.lease_expires_at <= now())
                 RETURNING r.run_key, r.next_seq - $7::int AS first, r.stop_request),
               written AS (
                 INSERT INTO ${this.#schema}.records (run_key, seq, run_id, kind, record)
                 SELECT run.run_key, run.first + t.ord::int - 1, $2, t.kind, t.record
                 FROM run, unnest($4::text[], $5::text[]) WITH ORDINALITY AS t (kind, record, ord)
                 RETURNING seq)
               SELECT (SELECT count(*) FROM written)::int AS landed, (SELECT stop_request FROM run) AS stop_request`,
        values: [
          JSON.stringify(runId),
          readableId(runId),
          held?.token ?? null,
          records.map((x) => x.kind),
          texts,
          this.#lease.leaseMs,
          records.length,
        ],
      });
      row = r.rows[0];
    } catch (e) {
      throw new StoreError(runId, method, olderSchema(e));
    }
    if (Number(row?.['landed']) !== records.length)
      throw new StoreError(runId, method, await this.#refusal(runId, held));
    if (!held) return;
    held.renewed(sentAt);
    const stop = row?.['stop_request'];
    if (stop !== null && stop !== undefined) held.stopRequested(stop);
  }

  /** Why a write was refused: the lease is another holder's (ours was lost), or someone else's live one. */
  async #refusal(runId: string, held: HeldLease | undefined): Promise<RunLockedError> {
    // Lost before the question below goes out: the driver must stop at once, not a round trip later.
    held?.lose('a write found another holder of its lease');
    const holder = await describeHolder(this.#lease, runId).catch(() => null);
    const lost = held ? 'this writer lost its lease; ' : '';
    return new RunLockedError(runId, `${lost}${holder?.detail ?? 'another holder took its lease'}`);
  }
}

/** Postgres's "no such column" (42703): the tables predate this library's, so say what to do. */
function olderSchema(e: unknown): unknown {
  if ((e as { code?: unknown } | null)?.code !== '42703') return e;
  return new Error(
    `${(e as Error).message}: the tables are at an older version than this library's; run migrate() ` +
      '(docs/postgres.md, "Tables")',
    { cause: e },
  );
}

/** Resolve once `p` settled; reject with `signal.reason` when aborted first. */
function untilSettled(p: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void p.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, resolve);
  });
}
