/**
 * The run lease of {@link PostgresStore}: a row in `runs` naming its holder (a random token per
 * acquisition) and an expiry in the database's clock, renewed by a heartbeat while held. A
 * holder that stops renewing (a killed process, a lost network) loses the run once the expiry
 * passes; every write checks the holder token in its own statement (fencing), so a holder whose
 * lease another process took writes nothing. See docs/decisions/0036-postgres-store.md.
 * @module
 */
import { LeaseLostError, RunLockedError, StopRequestedError } from '../core/index.ts';
import type { ReleaseLease, StopRequest } from '../core/index.ts';
import type { PgPoolLike } from './pg-types.ts';

/** What the lease needs to know of its store. */
export type LeaseContext = {
  readonly pool: PgPoolLike;
  /** The quoted schema name. */
  readonly schema: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** Who takes leases: shown to a refused acquirer. */
  readonly owner: string;
  /** `'wait'`: an acquire of a held run polls until it is free (or aborted); `'refuse'`: RunLockedError at once. */
  readonly mode: 'refuse' | 'wait';
};

/** The key of a run: sha256 of its id's JSON text (lossless for any string, and short enough to index). */
export const RUN_KEY = `sha256(convert_to($1::text, 'UTF8'))`;

const LONE_OR_NUL = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/g;

/** The id as a readable column: a lone surrogate or NUL cannot be Postgres text, so they become U+FFFD. */
export function readableId(runId: string): string {
  return runId.replace(LONE_OR_NUL, '\uFFFD');
}

/**
 * A lease this process holds: its token, whether it is known lost, and the signal its driver
 * watches (the release's `lost`), aborted when the lease is lost or a stop is requested.
 */
export class HeldLease {
  readonly token: string;
  /** Known lost: another holder took the run, or the lease may have expired. Its token is then no longer kept. */
  lost = false;
  readonly #runId: string;
  readonly #leaseMs: number;
  readonly #controller = new AbortController();
  /** `performance.now()` when the last statement that renewed the lease was sent. */
  #renewedAt: number;

  constructor(runId: string, token: string, leaseMs: number, sentAt: number) {
    this.#runId = runId;
    this.token = token;
    this.#leaseMs = leaseMs;
    this.#renewedAt = sentAt;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * A statement sent at `sentAt` (`performance.now()`) renewed the lease. The database set its
   * expiry `leaseMs` after it ran, which was after it was sent: so the lease lives at least until
   * `sentAt + leaseMs` by this process's clock, whenever the answer arrives.
   */
  renewed(sentAt: number): void {
    if (sentAt > this.#renewedAt) this.#renewedAt = sentAt;
  }

  /** How long the lease is certainly still this holder's, in ms (≤ 0: it may have expired). */
  get remainingMs(): number {
    return this.#renewedAt + this.#leaseMs - performance.now();
  }

  /** The lease is gone (or may be): the driver must stop and write nothing more. */
  lose(detail: string): void {
    this.lost = true;
    if (!this.#controller.signal.aborted) this.#controller.abort(new LeaseLostError(this.#runId, detail));
  }

  /** A stop request was found in the run's row (its `stop_request` text). */
  stopRequested(stored: unknown): void {
    if (!this.#controller.signal.aborted)
      this.#controller.abort(new StopRequestedError(this.#runId, parseStopRequest(stored)));
  }
}

/** A `stop_request` column as a stop request: its reason when the text holds one; a stop either way. */
export function parseStopRequest(stored: unknown): StopRequest {
  try {
    const parsed: unknown = JSON.parse(String(stored));
    const reason = (parsed as { reason?: unknown } | null)?.reason;
    return typeof reason === 'string' ? { reason } : {};
  } catch {
    return {};
  }
}

/**
 * Take the lease of a run, or say who holds it. Resolves with the release and the held lease
 * (whose token every write of this driver carries); rejects with `RunLockedError` (refuse mode)
 * or keeps polling until the holder's lease is released or expires (wait mode), and with
 * `signal.reason` when aborted. `reclaim`: a token of this caller's whose release never reached
 * the database; a lease still held under it is taken over at once instead of waited out.
 */
export async function takeLease(
  ctx: LeaseContext,
  runId: string,
  signal: AbortSignal | undefined,
  onEnd: () => void,
  reclaim: string | null = null,
): Promise<{ release: ReleaseLease; held: HeldLease }> {
  signal?.throwIfAborted();
  const token = crypto.randomUUID();
  // Rounds in a row whose holder was gone by the time it was asked about.
  let vanished = 0;
  for (;;) {
    const sentAt = performance.now();
    const got = await ctx.pool.query({
      name: `polyloop-acquire-${ctx.schema}`,
      text:
        `INSERT INTO ${ctx.schema}.runs AS r ` +
        `(run_key, run_id, lease_holder, lease_owner, lease_expires_at, lease_epoch)
             VALUES (${RUN_KEY}, $2, $3, $4, now() + $5::float8 * interval '1 millisecond', 1)
             ON CONFLICT (run_key) DO UPDATE SET lease_holder = $3, lease_owner = $4,
               lease_expires_at = now() + $5::float8 * interval '1 millisecond', lease_epoch = r.lease_epoch + 1
             WHERE r.lease_holder IS NULL OR r.lease_expires_at <= now() OR r.lease_holder = $6::text
             RETURNING r.stop_request`,
      values: [JSON.stringify(runId), readableId(runId), token, ctx.owner, ctx.leaseMs, reclaim],
    });
    if (got.rowCount === 1) {
      if (signal?.aborted) {
        // Granted after the caller gave up: hand it straight back.
        await freeLease(ctx, runId, token).catch(() => undefined);
        throw signal.reason;
      }
      const held = new HeldLease(runId, token, ctx.leaseMs, sentAt);
      // A stop asked while no driver ran: this driver sees it before it does anything.
      const stop = got.rows[0]?.['stop_request'];
      if (stop !== null && stop !== undefined) held.stopRequested(stop);
      return { release: holdLease(ctx, runId, held, onEnd), held };
    }
    const holder = await describeHolder(ctx, runId);
    if (holder === null) {
      // Released between the two statements: ask again. Refusing, a run that keeps changing
      // hands is busy; waiting, it is waited for like any held run.
      if (++vanished <= 3) continue;
      if (ctx.mode === 'refuse') throw new RunLockedError(runId, 'its lease keeps changing hands');
      await pause(20, signal);
      continue;
    }
    vanished = 0;
    if (ctx.mode === 'refuse') throw new RunLockedError(runId, holder.detail);
    await pause(Math.max(20, Math.min(ctx.heartbeatMs, holder.remainingMs)), signal);
  }
}

/**
 * Renew the lease every `heartbeatMs` until released. A renewal that finds another holder loses
 * the lease; one that finds a stop request stops the driver. And the moment the lease may have
 * expired by this process's clock (no renewal went out and came back for `leaseMs`: the process
 * stalled, or the database was out of reach), it is lost too: any other driver may take the run
 * from then on, so this one must not begin anything it cannot take back. That check is a timer due
 * at the expiry, so after a stall it runs before any timer of the driver's due later.
 */
function holdLease(ctx: LeaseContext, runId: string, held: HeldLease, onEnd: () => void): ReleaseLease {
  let beating = false;
  const stopBeating = (): void => {
    clearInterval(timer);
    clearTimeout(deadline);
  };
  const timer = setInterval(() => {
    if (beating) return;
    beating = true;
    const sentAt = performance.now();
    renew(ctx, runId, held.token)
      .then((row) => {
        if (row === null) {
          held.lose('another driver took the run over after its lease expired');
          stopBeating();
          return;
        }
        held.renewed(sentAt);
        if (row.stop !== null) held.stopRequested(row.stop);
      })
      // A renewal that failed (the database restarting) is tried again at the next beat; the
      // lease stays ours until it expires (the deadline below).
      .catch(() => undefined)
      .finally(() => (beating = false));
  }, ctx.heartbeatMs);
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const checkExpiry = (): void => {
    const left = held.remainingMs;
    if (left > 0) {
      deadline = setTimeout(checkExpiry, Math.ceil(left));
      deadline.unref?.();
      return;
    }
    held.lose(`no renewal of it reached the database for ${ctx.leaseMs} ms, so it may have expired and been taken`);
    stopBeating();
  };
  checkExpiry();
  // The heartbeat alone must not keep a process alive.
  timer.unref?.();
  let released: Promise<void> | null = null;
  return () =>
    (released ??= (async () => {
      stopBeating();
      onEnd();
      await freeLease(ctx, runId, held.token);
    })());
}

/** Extend the lease if it is still this token's: null when it is not; else the run's stop request, if any. */
async function renew(ctx: LeaseContext, runId: string, token: string): Promise<{ readonly stop: unknown } | null> {
  const r = await ctx.pool.query({
    name: `polyloop-renew-${ctx.schema}`,
    text:
      `UPDATE ${ctx.schema}.runs SET lease_expires_at = now() + $3::float8 * interval '1 millisecond' ` +
      `WHERE run_key = ${RUN_KEY} AND lease_holder = $2 RETURNING stop_request`,
    values: [JSON.stringify(runId), token, ctx.leaseMs],
  });
  const row = r.rows[0];
  return row ? { stop: row['stop_request'] ?? null } : null;
}

/** Free the lease if it is still this token's; never another holder's. */
async function freeLease(ctx: LeaseContext, runId: string, token: string): Promise<void> {
  await ctx.pool.query({
    name: `polyloop-release-${ctx.schema}`,
    text:
      `UPDATE ${ctx.schema}.runs SET lease_holder = NULL, lease_owner = NULL, lease_expires_at = NULL ` +
      `WHERE run_key = ${RUN_KEY} AND lease_holder = $2`,
    values: [JSON.stringify(runId), token],
  });
}

/** Who holds the run's lease and for how much longer (null: nobody does any more). */
export async function describeHolder(
  ctx: Pick<LeaseContext, 'pool' | 'schema'>,
  runId: string,
): Promise<{ readonly detail: string; readonly remainingMs: number } | null> {
  const r = await ctx.pool.query({
    text:
      'SELECT lease_owner, greatest(0, extract(epoch FROM lease_expires_at - now()) * 1000)::float8 AS remaining ' +
      `FROM ${ctx.schema}.runs
           WHERE run_key = ${RUN_KEY} AND lease_holder IS NOT NULL`,
    values: [JSON.stringify(runId)],
  });
  const row = r.rows[0];
  if (!row) return null;
  const remainingMs = Number(row['remaining']);
  return {
    detail:
      `its Postgres lease is held by ${String(row['lease_owner'])}, ` +
      `expiring in ${Math.ceil(remainingMs)} ms unless renewed`,
    remainingMs,
  };
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
