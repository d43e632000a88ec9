/**
 * The store's single-driver lease as `run`/`resume` hold it
 * (docs/design/stores-and-leases.md#leases): taken before the log is read, given up on abort even
 * if the store ignores the signal, released once, and a failed release reported rather than
 * swallowed.
 * @module
 */
import type { Cancellation } from './cancellation.ts';
import { describeError, isPolyLoopError, StoreError } from './errors.ts';
import type { EventSink, ReleaseLease, RunStore } from './ports.ts';
import type { RunEvent } from './types.ts';

/** A store's lease, released at most once. */
export class Lease {
  readonly #release: () => Promise<void>;
  #released = false;
  /** The store's signal that the lease is lost or a stop was requested; null for a store without one. */
  readonly lost: AbortSignal | null;
  constructor(release: ReleaseLease) {
    this.#release = release;
    const { lost } = release;
    this.lost = isSignal(lost) ? lost : null;
  }
  get released(): boolean {
    return this.#released;
  }
  release(): Promise<void> {
    if (this.#released) return Promise.resolve();
    this.#released = true;
    return Promise.resolve().then(() => this.#release());
  }

  /**
   * The release when `run`/`resume` settles, unless the driver already released it. A write the
   * grace period gave up on (`abandoned`) may still land: the lease outlives it, so no second
   * driver can append before it (decision 0012); the caller does not wait for that, and a failure
   * then has no event left to report it. Otherwise a failed release is a `warning` to `sink`.
   */
  async settle(abandoned: Promise<unknown> | null, sink: EventSink, runId: string): Promise<void> {
    if (this.#released) return;
    if (abandoned)
      void abandoned
        .then(
          () => this.release(),
          () => this.release(),
        )
        .catch(() => undefined);
    else await this.release().catch((e: unknown) => deliverQuietly(sink, releaseWarning(runId, e)));
  }
}

export function releaseWarning(runId: string, e: unknown): RunEvent {
  return {
    type: 'warning',
    runId,
    code: 'lease_release_failed',
    message: `the store failed to release the run's lease: ${describeError(e)}`,
  };
}

/** Deliver one event outside a driver (a failed lease release after an error); a failure is dropped. */
async function deliverQuietly(sink: EventSink, event: RunEvent): Promise<void> {
  try {
    await sink.deliver(Object.freeze(event));
  } catch {
    // The run has already failed; there is no result left to count this in.
  }
}

/**
 * Take the store's lease, giving up when the signal aborts even if the store ignores it; a
 * lease granted after that is handed straight back.
 */
export async function acquireLease(cancel: Cancellation, runId: string, store: RunStore): Promise<ReleaseLease> {
  const pending = Promise.resolve().then(() => store.acquire!(runId, { signal: cancel.signal }));
  try {
    return await guardedRead(runId, 'acquire', () => cancel.seam(() => pending), cancel.signal);
  } catch (e) {
    pending.then(
      (late) => late().catch(() => undefined),
      () => undefined,
    );
    throw e;
  }
}

/**
 * A read, the lease or another store call: a failure becomes `StoreError`, except the library's
 * own errors (decision 0004) and an abort of `signal`, if given, which pass through as its reason.
 */
export async function guardedRead<T>(
  runId: string,
  operation: string,
  fn: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (signal?.aborted && e === signal.reason) throw e;
    if (isPolyLoopError(e) && e.code !== 'store_error') throw e;
    throw e instanceof StoreError ? e : new StoreError(runId, operation, e);
  }
}

/**
 * A store's `lost` value that can be listened to, and stopped listening to when the run settles (a
 * plain JavaScript store may give anything; one without `removeEventListener` is ignored).
 */
function isSignal(v: unknown): v is AbortSignal {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown };
  return (
    typeof s.aborted === 'boolean' &&
    typeof s.addEventListener === 'function' &&
    typeof s.removeEventListener === 'function'
  );
}
