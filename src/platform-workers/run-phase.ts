/**
 * What a run object's instance is doing with its run, as one value with its transitions in one
 * place. Only this instance's memory is here: what must outlive it (halted, a cancel asked for)
 * is in the run row (`run-row.ts`), and where the run stands is in its log.
 * @module
 */

/** A drive under way: its controller (replaced when a cancel reply needs a live signal), its end, the reply landing. */
type Driving = {
  /** `preparing`: launched, the library not called yet; `calling`: in the library (a cancel aborts it). */
  readonly name: 'preparing' | 'calling';
  readonly controller: AbortController;
  /** Settles as the drive does. */
  readonly done: Promise<void>;
  /** A reply this drive carries, until its record has landed (or been refused). */
  readonly landing: Promise<unknown> | null;
};

/**
 * `idle`: nothing under way. `adopting`: an import is being written — the run id is taken though
 * the run row does not exist yet. `preparing` and `calling`: a drive (see {@link Driving}).
 */
export type Phase = { readonly name: 'idle' } | { readonly name: 'adopting' } | Driving;

const IDLE: Phase = { name: 'idle' };

/** The phase of one run object instance, and every change of it. */
export class RunPhase {
  #phase: Phase = IDLE;

  /** True while an import is being written. */
  get adopting(): boolean {
    return this.#phase.name === 'adopting';
  }

  /** The drive under way (settles as it does), or null. */
  get drive(): Promise<void> | null {
    return 'done' in this.#phase ? this.#phase.done : null;
  }

  /** What a reply waits for before it looks at the log again: the reply landing, else the drive; null when idle. */
  get busy(): Promise<unknown> | null {
    return 'done' in this.#phase ? (this.#phase.landing ?? this.#phase.done) : null;
  }

  /** An import starts: the id is taken until {@link adopted}. */
  adopt(): void {
    if (this.#phase.name === 'idle') this.#phase = { name: 'adopting' };
  }

  /** The import is over (written or refused); a drive launched meanwhile keeps its phase. */
  adopted(): void {
    if (this.#phase.name === 'adopting') this.#phase = IDLE;
  }

  /**
   * Launch `run` with a fresh controller, unless a drive is under way (then that one is returned).
   * `run` starts at once, in this turn; the phase is `idle` again when it settles.
   */
  launch(run: (controller: AbortController) => Promise<void>): Promise<void> {
    if ('done' in this.#phase) return this.#phase.done;
    const controller = new AbortController();
    let settle: { resolve: () => void; reject: (e: unknown) => void } | undefined;
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    this.#phase = { name: 'preparing', controller, done, landing: null };
    run(controller).then(
      () => this.#end(() => settle?.resolve()),
      (e: unknown) => this.#end(() => settle?.reject(e)),
    );
    return done;
  }

  #end(settle: () => void): void {
    this.#phase = IDLE;
    settle();
  }

  /** The drive calls the library now: from here a cancel aborts its controller. */
  calling(): void {
    if (this.#phase.name === 'preparing') this.#phase = { ...this.#phase, name: 'calling' };
  }

  /** A new controller for the drive (the previous one was aborted by the cancel it now carries out). */
  renew(): AbortController {
    const controller = new AbortController();
    if ('done' in this.#phase) this.#phase = { ...this.#phase, controller };
    return controller;
  }

  /** Abort the drive's library call with `reason`; a drive that has not called the library is left to its sink. */
  abort(reason: unknown): void {
    if (this.#phase.name === 'calling') this.#phase.controller.abort(reason);
  }

  /** The drive carries a reply until `landing` (which never rejects) settles. */
  land(landing: Promise<void>): void {
    if ('done' in this.#phase) this.#phase = { ...this.#phase, landing };
    void landing.then(() => {
      if ('done' in this.#phase && this.#phase.landing === landing) this.#phase = { ...this.#phase, landing: null };
    });
  }
}
