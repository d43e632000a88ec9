/**
 * How a run waits on code it does not control once its signal may abort
 * (docs/design/step.md#cancellation, decision 0012): a seam (model call, action, event delivery) is
 * abandoned the moment the signal aborts, and a store write is waited for at most `cancelGraceMs`
 * after the abort. Either way `run`/`resume` settle on time whatever the seam does; what settles
 * late is ignored.
 *
 * One abort listener per run serves every wait (a listener or a `Promise.race` per wait would
 * cost microseconds, or memory, on every step).
 * @module
 */
import { isPolyLoopError } from './errors.ts';

/** What {@link Cancellation.bounded} resolves with when the grace period ran out first. */
export const GRACE_EXPIRED: unique symbol = Symbol('grace_expired');

/** The abort and grace-period bookkeeping of one run. */
export class Cancellation {
  /** Aborted by the caller's signal or, once joined, the store's `lost` signal: whichever comes first. */
  readonly signal: AbortSignal;
  readonly #controller = new AbortController();
  readonly #caller: AbortSignal;
  #lost: AbortSignal | null = null;
  /** The store's lease was lost: this driver may write nothing more. */
  #leaseLost = false;
  #graceMs: number;
  /** Seams waiting: each gives up (rejects with the abort's reason) when the signal aborts. */
  readonly #onAbort = new WaitList();
  /** Writes waiting: each gives up (resolves `GRACE_EXPIRED`) when the grace period is over. */
  readonly #onGraceOver = new WaitList();
  /** The signals handed to sub-agents' runs, aborted with this one. */
  readonly #linked = new Set<AbortController>();
  #graceOver = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #listener = (): void => this.#abort(this.#caller.reason);
  readonly #lostListener = (): void => this.#abort((this.#lost as AbortSignal).reason);

  #abortable: boolean;
  /**
   * Whether the store's writes are raced against the grace period: only when the caller's signal
   * may abort. A stop or a lost lease waits for a write in flight (the store's own I/O, not code the
   * run does not control), so the common run pays for no racing of its writes.
   */
  readonly writesBounded: boolean;

  /** `abortable` false: `signal` can never abort (nobody holds its controller); only a joined signal may. */
  constructor(signal: AbortSignal, graceMs: number, abortable = true) {
    this.#caller = signal;
    this.signal = this.#controller.signal;
    this.#abortable = abortable;
    this.writesBounded = abortable;
    this.#graceMs = graceMs;
    if (signal.aborted) this.#abort(signal.reason);
    // A signal nobody can abort (a run without its caller's) is not listened to: a listener added
    // and removed costs some 20 µs a run in Node, a fifth of a microsecond a step at N = 100.
    else if (abortable) signal.addEventListener('abort', this.#listener, { once: true });
  }

  /** False for a run without a signal of its caller's or a lease that can be lost: no wait needs a racer. */
  get abortable(): boolean {
    return this.#abortable;
  }

  /** Whether the run was aborted because the store's lease was lost: nothing more may be written. */
  get leaseLost(): boolean {
    return this.#leaseLost;
  }

  /**
   * Abort with the store's `lost` signal too (a stop request, a lost lease;
   * docs/design/control.md#a-stop-that-reaches-any-driver): the run's seams, handlers and
   * sub-agents see it as they see the caller's abort.
   */
  join(lost: AbortSignal): void {
    this.#abortable = true;
    this.#lost = lost;
    if (lost.aborted) this.#lostListener();
    else lost.addEventListener('abort', this.#lostListener, { once: true });
  }

  /** The grace period, known only once a run resumed by id has read its log (nothing is written before). */
  set graceMs(ms: number) {
    this.#graceMs = ms;
  }

  /** Whether the grace period after the abort has run out. */
  get graceOver(): boolean {
    return this.#graceOver;
  }

  /**
   * `fn()`'s promise, or a rejection with `signal.reason` as soon as the signal aborts (the seam
   * is abandoned: whatever it does later changes nothing). A synchronous throw rejects.
   */
  seam<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.abandoning(start(fn));
  }

  /**
   * {@link seam} of a call already made, inside the caller's own `try` (a synchronous throw is its
   * to catch): no closure is built, for the two seams every step calls, the model and the action.
   */
  abandoning<T>(called: T | Promise<T>): Promise<T> {
    const p = Promise.resolve(called);
    if (!this.abortable) return p;
    if (this.signal.aborted) {
      p.catch(noop);
      return Promise.reject(this.signal.reason);
    }
    return this.#onAbort.wait(p);
  }

  /**
   * `fn()`'s promise, or {@link GRACE_EXPIRED} once `cancelGraceMs` have passed since the abort.
   * Before any abort it waits as long as `fn` takes.
   */
  bounded<T>(fn: () => T | Promise<T>): {
    readonly settled: Promise<T | typeof GRACE_EXPIRED>;
    readonly pending: Promise<T>;
  } {
    const p = start(fn);
    if (!this.abortable) return { settled: p, pending: p };
    if (this.#graceOver) {
      p.catch(noop);
      return { settled: Promise.resolve(GRACE_EXPIRED), pending: p };
    }
    return {
      settled: this.#onGraceOver.wait<T | typeof GRACE_EXPIRED>(p),
      pending: p,
    };
  }

  /**
   * A signal of its own that aborts with this run (with the same reason), for a sub-agent's run:
   * each child listens to its own signal, so a run with many children adds no listener to its
   * caller's signal. `release` forgets it once the child has settled.
   */
  linked(): { readonly signal: AbortSignal; readonly release: () => void } {
    const controller = new AbortController();
    if (this.signal.aborted) controller.abort(this.signal.reason);
    else this.#linked.add(controller);
    return { signal: controller.signal, release: () => void this.#linked.delete(controller) };
  }

  /** Stop listening and clear the timer (the run has settled). */
  dispose(): void {
    this.#linked.clear();
    // Where none was added, none is removed: that costs as much as the adding.
    if (this.writesBounded) this.#caller.removeEventListener('abort', this.#listener);
    this.#lost?.removeEventListener('abort', this.#lostListener);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#onAbort.clear();
    this.#onGraceOver.clear();
  }

  #abort(reason: unknown): void {
    if (this.signal.aborted) return;
    this.#leaseLost = isPolyLoopError(reason, 'lease_lost');
    this.#controller.abort(reason);
    for (const c of this.#linked) c.abort(reason);
    this.#linked.clear();
    this.#onAbort.giveUp(Promise.reject(reason));
    this.#timer = setTimeout(() => {
      this.#graceOver = true;
      this.#onGraceOver.giveUp(GRACE_EXPIRED);
    }, this.#graceMs);
  }
}

/** One wait in a {@link WaitList}: linked in while its promise is pending. */
type Waiting = {
  prev: Waiting | null;
  next: Waiting | null;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
};

/**
 * The resolving functions of the promise `new Promise(capture)` has just made, read at once: one
 * executor for every wait, where a closure of its own would be built (with its context) for each.
 */
let capturedResolve: (v: unknown) => void = noop;
let capturedReject: (e: unknown) => void = noop;
function capture(resolve: (v: unknown) => void, reject: (e: unknown) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/**
 * The waits one event ends (an abort, the grace period's end), as a doubly linked list: linking
 * and unlinking cost a few field writes, where a set of per-wait closures cost microseconds a
 * seam (every step of a run that can be stopped waits on two).
 */
class WaitList {
  #head: Waiting | null = null;

  /** `p`'s outcome, or the give-up answer if the list gives up first. */
  wait<R>(p: Promise<R>): Promise<R> {
    const outer = new Promise<unknown>(capture) as Promise<R>;
    const w: Waiting = { prev: null, next: this.#head, resolve: capturedResolve, reject: capturedReject };
    if (this.#head) this.#head.prev = w;
    this.#head = w;
    try {
      p.then(
        (v) => {
          this.#unlink(w);
          w.resolve(v);
        },
        (e: unknown) => {
          this.#unlink(w);
          w.reject(e);
        },
      );
    } catch (e) {
      // A promise whose own `then` throws: the wait rejects with it, as an executor's throw would.
      w.reject(e);
    }
    return outer;
  }

  /** Settle every wait with `answer` (a rejected promise rejects them); the list is then empty. */
  giveUp(answer: unknown): void {
    if (answer instanceof Promise) answer.catch(noop);
    let w = this.#head;
    this.#head = null;
    while (w !== null) {
      const next = w.next;
      w.prev = w.next = null;
      w.resolve(answer);
      w = next;
    }
  }

  clear(): void {
    this.#head = null;
  }

  #unlink(w: Waiting): void {
    if (w.prev) w.prev.next = w.next;
    else if (this.#head === w) this.#head = w.next;
    else return; // already given up on
    if (w.next) w.next.prev = w.prev;
    w.prev = w.next = null;
  }
}

function start<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(e);
  }
}

function noop(): void {}
