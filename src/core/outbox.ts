/**
 * Everything a run sends out: records to its store and events to its sink, with the rules both
 * follow (docs/design/step.md#events, decisions 0006, 0012): a failed write stops all writing;
 * after an abort a write is waited for at most `cancelGraceMs`, then abandoned; events go out in
 * order, each awaited, each failure counted and never re-emitted, nothing after the run is closed.
 * @module
 */
import { GRACE_EXPIRED } from './cancellation.ts';
import type { Cancellation } from './cancellation.ts';
import { StoreError } from './errors.ts';
import type { EventSink, RunStore } from './ports.ts';
import { isThenable } from './seam-values.ts';
import { isTraceparent } from './record-fields.ts';
import { callStore, operationOf } from './store-write.ts';
import type { ActionIntentRecord, ActionsIntentRecord, LogRecord, RunEvent } from './types.ts';

/**
 * The answer of every delivery that needs no waiting (a settled promise). The step's path compares
 * with it rather than awaiting it: an await, even of a settled promise, costs a microtask and some
 * 200 bytes, and a step emits seven events.
 */
export const DELIVERED: Promise<void> = Promise.resolve();

/** One run's writes and events. */
export class Outbox {
  readonly #store: RunStore;
  readonly #sink: EventSink;
  readonly #runId: string;
  readonly #cancel: Cancellation;
  #writeFailed = false;
  #closed = false;
  /** Event deliveries that threw or rejected so far. */
  deliveryFailures = 0;
  /** A write the grace period gave up on; it may still land. */
  abandonedWrite: Promise<unknown> | null = null;
  readonly #handlers: Record<string, (e: unknown) => never> = Object.create(null);

  constructor(store: RunStore, sink: EventSink, runId: string, cancel: Cancellation) {
    this.#store = store;
    this.#sink = sink;
    this.#runId = runId;
    this.#cancel = cancel;
  }

  /** A write failed: this driver writes nothing more to this log (a later record could land after a missing one). */
  get writeFailed(): boolean {
    return this.#writeFailed;
  }

  /** The `run_ended` event went out (or the run settled): no event may follow it. */
  get closed(): boolean {
    return this.#closed;
  }

  /** No event after this. */
  close(): void {
    this.#closed = true;
  }

  /**
   * One write (with `intent`: a model result and its action intent as one). A failure becomes
   * `StoreError` and stops all writing; after an abort the write is waited for at most until the
   * grace period ends, then abandoned (it may still land) and the run rejects with `signal.reason`.
   */
  write(rec: LogRecord, intent?: ActionIntentRecord | ActionsIntentRecord): Promise<void> {
    return this.writeThen(rec, intent, undefined);
  }

  /**
   * {@link write}, then `next` once the write landed, in the write's own `then` (a step's joint
   * write and its step record go on this way: a `then` of their own costs a promise more each).
   */
  writeThen<T>(
    rec: LogRecord,
    intent: ActionIntentRecord | ActionsIntentRecord | undefined,
    next: (() => T) | undefined,
  ): Promise<Awaited<T>> {
    // A driver that lost its lease writes nothing more: another driver may own the log now.
    if (this.#cancel.leaseLost) return Promise.reject(this.#cancel.signal.reason);
    const operation = operationOf(rec, intent);
    let p: Promise<void>;
    try {
      p = Promise.resolve(callStore(this.#store, this.#runId, rec, intent));
    } catch (e) {
      p = Promise.reject(e);
    }
    // The caller cannot abort the run: no racing, just the failure made a StoreError.
    if (!this.#cancel.writesBounded) return p.then(next, this.#failure(operation)) as Promise<Awaited<T>>;
    // A plain write gets no `then` of its own: the bounded promise is what it waits for.
    const bounded = this.#bounded(operation, p);
    return (next === undefined ? bounded : bounded.then(next)) as Promise<Awaited<T>>;
  }

  /**
   * Deliver in order, awaited; a failure is counted, never re-emitted. Events are frozen, so a
   * sink cannot change what the run goes on with. Before the end, a delivery is abandoned when
   * the signal aborts; the `run_ended` event of a cancelled run waits at most for the grace period.
   */
  emit(event: RunEvent): Promise<void> {
    if (this.#closed) return DELIVERED;
    Object.freeze(event);
    let delivered: void | Promise<void>;
    try {
      delivered = this.#sink.deliver(event);
    } catch {
      this.deliveryFailures++;
      return DELIVERED;
    }
    // A sink that returns nothing costs no new promise, and its caller no await.
    return isThenable(delivered) ? this.#awaitDelivery(event, delivered) : DELIVERED;
  }

  /**
   * The W3C trace context of the span the sink opened for this run's first driver, if it has the
   * optional `traceparent` method; null otherwise. A sink that throws, or answers with something
   * that is not a valid `traceparent`, counts as a failed delivery, and the run goes on untraced.
   */
  traceparent(): string | null {
    let value: unknown;
    try {
      // Read inside the try: a sink's hook may be a getter that throws.
      const ask = this.#sink.traceparent;
      if (typeof ask !== 'function') return null;
      value = ask.call(this.#sink, this.#runId);
    } catch {
      this.deliveryFailures++;
      return null;
    }
    if (value === undefined || value === null) return null;
    if (isTraceparent(value)) return value;
    this.deliveryFailures++;
    return null;
  }

  /**
   * The rejection handler of `operation`'s writes, made once a run for each store method: three
   * writes a step would otherwise each build a closure that is almost never called.
   */
  #failure(operation: string): (e: unknown) => never {
    this.#handlers[operation] ??= (e: unknown) => this.#failed(operation, e);
    return this.#handlers[operation];
  }

  #failed(operation: string, e: unknown): never {
    this.#writeFailed = true;
    throw e instanceof StoreError ? e : new StoreError(this.#runId, operation, e);
  }

  async #bounded(operation: string, p: Promise<void>): Promise<void> {
    const { settled, pending } = this.#cancel.bounded(() => p);
    // biome-ignore lint/suspicious/noConfusingVoidType: what a store write resolves with, or the grace period's end.
    let outcome: void | typeof GRACE_EXPIRED;
    try {
      outcome = await settled;
    } catch (e) {
      this.#failed(operation, e);
    }
    if (outcome === GRACE_EXPIRED) {
      this.abandonedWrite = pending;
      throw this.#cancel.signal.reason;
    }
  }

  async #awaitDelivery(event: RunEvent, delivered: Promise<void>): Promise<void> {
    const signal = this.#cancel.signal;
    const late = signal.aborted && event.type === 'run_ended';
    try {
      if (late) await this.#cancel.bounded(() => delivered).settled;
      else await this.#cancel.seam(() => delivered);
    } catch (e) {
      if (!(signal.aborted && e === signal.reason)) this.deliveryFailures++;
    }
  }
}
