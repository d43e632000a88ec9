/**
 * The run lease of {@link IndexedDBStore}: the Web Locks API (`navigator.locks`) where it exists,
 * so two tabs (or a tab and a worker) of one origin never drive the same run; a lease local to
 * this JavaScript realm where it does not (documented in docs/decisions).
 * @module
 */
import { LeaseLostError, RunLockedError } from '../core/index.ts';
import type { ReleaseLease } from '../core/index.ts';

/** What a second driver gets: wait until the lease is free, or a `RunLockedError` at once. */
export type LeaseMode = 'wait' | 'refuse';

/** One lease request. */
export type LeaseRequest = {
  /** Lock name; unique per database and run. */
  readonly name: string;
  readonly runId: string;
  readonly mode: LeaseMode;
  readonly signal?: AbortSignal | undefined;
  /**
   * Told once if the lease is lost while held (another context took the Web Lock with `steal`),
   * never after release.
   */
  readonly onLost?: ((error: LeaseLostError) => void) | undefined;
};

/** The lock name of a run in a database: unambiguous for any dbName and runId. */
export function leaseName(dbName: string, runId: string): string {
  return `polyloop-run:${JSON.stringify([dbName, runId])}`;
}

/** `navigator.locks` when this context has it (secure contexts of current browsers), else null. */
export function webLocks(): LockManager | null {
  const nav = (globalThis as { navigator?: { locks?: LockManager } }).navigator;
  return nav?.locks ?? null;
}

function once(fn: () => Promise<void>): ReleaseLease {
  let done: Promise<void> | null = null;
  return () => (done ??= fn());
}

/**
 * Take a lease through Web Locks. The lock is held by a callback whose promise stays pending
 * until release; release resolves once the browser has actually freed the lock. A lock stolen
 * meanwhile (`steal: true` elsewhere) rejects the request while held: `onLost` is told.
 */
export function acquireWebLock(locks: LockManager, req: LeaseRequest): Promise<ReleaseLease> {
  const { signal } = req;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<ReleaseLease>((resolve, reject) => {
    let settled = false;
    let granted = false;
    let released = false;
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((r) => (letGo = r));
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const options: LockOptions = req.mode === 'refuse' ? { ifAvailable: true } : signal ? { signal } : {};
    const requested = locks.request(req.name, options, (lock) => {
      signal?.removeEventListener('abort', onAbort);
      if (settled) return undefined; // aborted while queued: let the lock go at once
      settled = true;
      if (lock === null) {
        reject(new RunLockedError(req.runId, 'another tab or worker holds its Web Lock'));
        return undefined;
      }
      granted = true;
      resolve(
        once(async () => {
          released = true;
          letGo();
          await requested.catch(() => undefined);
        }),
      );
      return held;
    });
    requested.catch((e: unknown) => {
      signal?.removeEventListener('abort', onAbort);
      if (granted && !released) req.onLost?.(new LeaseLostError(req.runId, 'another tab or worker took its Web Lock'));
      if (settled) return;
      settled = true;
      reject(signal?.aborted ? signal.reason : e);
    });
  });
}

type Waiter = { readonly grant: () => void };
/** Leases held in this realm, by name, with their queues of waiters. */
const localHeld = new Map<string, Waiter[]>();

/**
 * Take a lease that excludes other drivers in this JavaScript realm only (the fallback where
 * Web Locks is missing): same modes and abort behaviour as {@link acquireWebLock}.
 */
export function acquireLocalLease(req: LeaseRequest): Promise<ReleaseLease> {
  const { signal } = req;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const release = once(async () => {
    const queue = localHeld.get(req.name);
    const next = queue?.shift();
    if (next) next.grant();
    else localHeld.delete(req.name);
  });
  const queue = localHeld.get(req.name);
  if (!queue) {
    localHeld.set(req.name, []);
    return Promise.resolve(release);
  }
  if (req.mode === 'refuse')
    return Promise.reject(new RunLockedError(req.runId, 'another driver in this page holds it'));
  return new Promise<ReleaseLease>((resolve, reject) => {
    const waiter: Waiter = {
      grant: () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(release);
      },
    };
    const onAbort = (): void => {
      const i = queue.indexOf(waiter);
      if (i >= 0) queue.splice(i, 1);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    queue.push(waiter);
  });
}
