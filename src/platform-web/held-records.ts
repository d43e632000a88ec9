/**
 * The non-barrier records an {@link IndexedDBStore} holds in memory until its next write to the
 * same run (decision 0043): encoded text per run, in write order.
 * @module
 */

/**
 * How long a held record waits for the next write before it is committed on its own (ms). A step
 * on an instant model writes its next record within microseconds, so the hold costs nothing there;
 * a model call slower than this pays one relaxed transaction (~1 ms) against at least 50 ms of its
 * own, and a tab that dies during a long call has most likely stored its intent by then.
 */
export const HOLD_MS = 50;

/** Per-run queues of held record texts, with one flush timer per run. */
export class HeldRecords {
  readonly #texts = new Map<string, string[]>();
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  readonly #onTimer: (runId: string) => void;

  /** `onTimer(runId)` is called once a run's records have waited {@link HOLD_MS} without a write. */
  constructor(onTimer: (runId: string) => void) {
    this.#onTimer = onTimer;
  }

  /** Hold `texts` after what the run already holds, and start its timer if none runs. */
  hold(runId: string, texts: readonly string[]): void {
    const held = this.#texts.get(runId);
    if (held) held.push(...texts);
    else this.#texts.set(runId, [...texts]);
    if (!this.#timers.has(runId)) {
      this.#timers.set(
        runId,
        setTimeout(() => {
          this.#timers.delete(runId);
          this.#onTimer(runId);
        }, HOLD_MS),
      );
    }
  }

  /** What the run holds, in order; the caller must not keep the array across a write. */
  peek(runId: string): readonly string[] {
    return this.#texts.get(runId) ?? [];
  }

  /** Every run that holds records now. */
  runs(): string[] {
    return [...this.#texts.keys()];
  }

  /** Remove and return what the run holds (they are about to be committed before the next record). */
  take(runId: string): string[] {
    const held = this.#texts.get(runId);
    if (!held) return [];
    this.#texts.delete(runId);
    this.#stopTimer(runId);
    return held;
  }

  /**
   * Put records back in front of what the run holds: the transaction that carried them failed,
   * and wrote nothing. No timer is started: the next write or the release carries them.
   */
  putBack(runId: string, texts: readonly string[]): void {
    if (texts.length === 0) return;
    const held = this.#texts.get(runId);
    this.#texts.set(runId, held ? [...texts, ...held] : [...texts]);
  }

  #stopTimer(runId: string): void {
    const timer = this.#timers.get(runId);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timers.delete(runId);
  }
}
