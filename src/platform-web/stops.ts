/**
 * How a stop request of {@link IndexedDBStore} reaches the tab that drives the run (decision 0074):
 * the request is a durable row in the database first, then a BroadcastChannel message to every
 * context of the origin; the lease holder listens, and re-reads the row every {@link POLL_MS} in
 * case the message never came (a tab that closed between its write and its message sends none,
 * and a context without BroadcastChannel hears nothing).
 * @module
 */
import type { IDBPDatabase } from 'idb';
import { StopRequestedError, StoreError } from '../core/index.ts';
import type { ReleaseLease, StopRequest } from '../core/index.ts';
import { stopKey } from './schema.ts';
import type { PolyLoopDB, StopRow } from './schema.ts';

/**
 * How often a lease holder re-reads its run's stop row (ms): one readonly transaction (~0.2 ms)
 * per held run, and a stop whose message was missed is still seen within a second.
 */
export const POLL_MS = 500;

/** Every record key of a run, in `records`. */
export function runRange(runId: string): IDBKeyRange {
  return IDBKeyRange.bound([runId, 0], [runId, Number.POSITIVE_INFINITY]);
}

/** Store the stop request of a run, durable when it resolves (it overwrites an earlier one). */
export async function writeStopRow(db: IDBPDatabase<PolyLoopDB>, runId: string, stop: StopRequest): Promise<void> {
  const tx = db.transaction('runs', 'readwrite', { durability: 'strict' });
  await Promise.all([tx.store.put({ runId: stopKey(runId), stop } satisfies StopRow), tx.done]);
}

/**
 * The stop request of a run, or null: none, or a row an earlier run of the same id left behind
 * when its log was removed (a run without a stored log cannot be asked to stop: `requestStop`
 * refuses it, so such a row is stale, and the new run's first commit deletes it).
 */
export async function readStopRow(db: IDBPDatabase<PolyLoopDB>, runId: string): Promise<StopRequest | null> {
  const tx = db.transaction(['records', 'runs'], 'readonly');
  const [row, first] = await Promise.all([
    tx.objectStore('runs').get(stopKey(runId)),
    tx.objectStore('records').getKey(runRange(runId)),
    tx.done,
  ]);
  return row !== undefined && 'stop' in row && first !== undefined ? row.stop : null;
}

/** The BroadcastChannel name of a database's stop requests: unambiguous for any dbName. */
export function stopChannelName(dbName: string): string {
  return `polyloop-stop:${JSON.stringify(dbName)}`;
}

type StopMessage = { readonly runId: string; readonly stop: StopRequest };

/** The stop a message carries for `runId`, or null (another run's, or not a stop message). */
function stopOf(data: unknown, runId: string): StopRequest | null {
  if (typeof data !== 'object' || data === null) return null;
  const { runId: id, stop } = data as Partial<StopMessage>;
  if (id !== runId || typeof stop !== 'object' || stop === null) return null;
  return typeof stop.reason === 'string' ? { reason: stop.reason } : {};
}

/** Node's BroadcastChannel and timers keep a process alive; a watcher must not. */
function unref(handle: unknown): void {
  (handle as { unref?: () => void } | null)?.unref?.();
}

/** Tell every context of this origin that `runId` was asked to stop (nothing where BroadcastChannel is missing). */
export function announceStop(dbName: string, runId: string, stop: StopRequest): void {
  if (typeof BroadcastChannel === 'undefined') return;
  const channel = new BroadcastChannel(stopChannelName(dbName));
  try {
    channel.postMessage({ runId, stop } satisfies StopMessage);
  } finally {
    channel.close();
  }
}

/** What {@link watchStops} watches and whom it tells. */
export type StopWatch = {
  readonly dbName: string;
  readonly runId: string;
  /** Read the run's stop row: its request, or null. A failure is ignored (the next read retries). */
  readonly read: () => Promise<StopRequest | null>;
  /** Told of the stop, once; watching ends there. */
  readonly onStop: (stop: StopRequest) => void;
};

/**
 * Watch a held run for a stop: the broadcast at once, and the row every {@link POLL_MS}. Returns
 * the function that ends the watch (idempotent; call it at release, or when the lease is lost).
 */
export function watchStops(watch: StopWatch): () => void {
  let done = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(stopChannelName(watch.dbName));
  const end = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    channel?.close();
  };
  const stopped = (stop: StopRequest): void => {
    if (done) return;
    end();
    watch.onStop(stop);
  };
  if (channel) {
    channel.onmessage = (event: MessageEvent<unknown>) => {
      const stop = stopOf(event.data, watch.runId);
      if (stop) stopped(stop);
    };
    unref(channel);
  }
  const poll = (): void => {
    timer = setTimeout(() => {
      watch.read().then(
        (stop) => (stop ? stopped(stop) : done || poll()),
        () => done || poll(),
      );
    }, POLL_MS);
    unref(timer);
  };
  poll();
  return end;
}

/** A lease just taken, and how to read its run's stop request. */
export type TakenLease = {
  readonly dbName: string;
  readonly runId: string;
  /** The release of the lease (it ends the watch first). */
  readonly release: () => Promise<void>;
  /** Aborted when the lease is lost; {@link watchedLease} aborts it on a stop. */
  readonly lost: AbortController;
  readonly read: () => Promise<StopRequest | null>;
};

/**
 * The lease as `acquire` resolves it, carrying `lost`: watched for a stop from now on (so none
 * announced after the read below is missed), then aborted at once if the run already has one.
 * If that read fails the lease is released and this rejects with `StoreError`.
 */
export async function watchedLease(taken: TakenLease): Promise<ReleaseLease> {
  const { runId, lost, release } = taken;
  const unwatch = watchStops({
    dbName: taken.dbName,
    runId,
    read: taken.read,
    onStop: (stop) => lost.abort(new StopRequestedError(runId, stop)),
  });
  lost.signal.addEventListener('abort', unwatch, { once: true });
  let stop: StopRequest | null;
  try {
    stop = await taken.read();
  } catch (e) {
    unwatch();
    await release().catch(() => undefined);
    throw new StoreError(runId, 'acquire', e);
  }
  if (stop) lost.abort(new StopRequestedError(runId, stop));
  const watchedRelease = (): Promise<void> => {
    unwatch();
    return release();
  };
  return Object.assign(watchedRelease, { lost: lost.signal });
}
