/**
 * The replies one viewer is carrying out, per run, so that its own replies to different requests
 * do not collide. A step with several calls waits for several replies; a person who answers two of
 * them quickly sends the second while the `resume` carrying the first holds the run's lock (it
 * writes its reply, then pauses again for the requests still open). The second waits for that
 * resume to settle instead of being refused as if another process drove the run. Two replies to
 * the same request still race: one lands, the other is refused.
 * @module
 */

/** One reply (or upgrade) being carried out: the request it answers (null: none), and its end. */
type Carrying = { readonly resultId: string | null; readonly done: Promise<void> };

/** Tells the viewer the resume a reply started: the reply is carried out until it settles. */
export type Track = (resuming: Promise<unknown>) => void;

/** The replies of one viewer being carried out, per run (see the module). */
export class ViewerDrives {
  readonly #carrying = new Map<string, Set<Carrying>>();

  /**
   * Carry out `work` (a reply to `resultId`, or an upgrade without one: null) for `runId`. While the
   * request is open (`isOpen`), it first waits for every reply of this viewer to another request of
   * the run that began before it: each ends once its resume settles, and a resume that wrote a
   * reply while another request of the step is open pauses at once (nothing of the step runs).
   */
  async carry<T>(
    runId: string,
    resultId: string | null,
    isOpen: () => Promise<boolean>,
    work: (track: Track) => Promise<T>,
  ): Promise<T> {
    const before = [...(this.#carrying.get(runId) ?? [])].filter((c) => c.resultId !== resultId);
    let end = (): void => undefined;
    const mine: Carrying = { resultId, done: new Promise<void>((ok) => (end = ok)) };
    const set = this.#carrying.get(runId) ?? new Set<Carrying>();
    this.#carrying.set(runId, set.add(mine));
    let resuming: Promise<unknown> | null = null;
    const finish = (): void => {
      set.delete(mine);
      if (set.size === 0 && this.#carrying.get(runId) === set) this.#carrying.delete(runId);
      end();
    };
    try {
      if (before.length > 0 && resultId !== null && (await isOpen())) await Promise.all(before.map((c) => c.done));
      return await work((r) => (resuming = r));
    } finally {
      const started = resuming as Promise<unknown> | null;
      if (started === null) finish();
      else void started.then(finish, finish);
    }
  }
}
