/**
 * InMemoryStore: run logs in this process's memory. No recovery across processes — choosing it
 * is choosing that. It has an in-process `acquire`: two `run`/`resume` calls on one id in this
 * process are two drivers too, and without a lease both would write (two `run_started`, a
 * `never` action run twice). What comes back has made the same round trip through
 * the same encoding (a {@link LogCodec}'s) as with a durable store; records the loop sealed are
 * encoded when first read rather than at write (decision 0042).
 * @module
 */
import { AppendLogStore } from './append-log-store.ts';
import type { LogAppend } from './append-log-store.ts';
import { RunLockedError, StopRequestedError } from './errors.ts';
import type { ReleaseLease } from './ports.ts';
import { isSealed } from './sealed-records.ts';
import { decodeLog, LogCodec } from './serialization.ts';
import type {
  ActionIntentRecord,
  ActionsIntentRecord,
  IntentRecord,
  LogRecord,
  ResultRecord,
  StepWriteRecord,
  StopRequest,
} from './types.ts';

/** Whether `rec` is an object the loop sealed (anything else, a `null` say, is `append`'s to refuse). */
const isSealedRecord = (rec: unknown): boolean => typeof rec === 'object' && rec !== null && isSealed(rec);

/**
 * A {@link RunStore} in memory, for tests, demos and short-lived runs.
 *
 * @example
 * const agent = defineAgent({ model, interpreter, store: new InMemoryStore(), events, syntheticObservations });
 */
export class InMemoryStore extends AppendLogStore {
  /**
   * Each run's log: encoded lines, then records the loop sealed (frozen, checked; decision 0042),
   * kept as they are and encoded, in order, when the log is next read or a record that is not
   * sealed is written; and the codec that encodes them, which has seen every line before.
   */
  readonly #logs = new Map<string, { readonly lines: string[]; readonly held: LogRecord[]; codec: LogCodec }>();
  /** The lease each driven run is held by: its token, and the signal its holder watches. */
  readonly #leases = new Map<string, { readonly token: symbol; readonly lost: AbortController }>();
  /** Stop requests, kept until the run's next driver sees them (an ended run ignores them). */
  readonly #stops = new Map<string, StopRequest>();

  /**
   * The three writes of a step, a sealed record each (two for `resultAndIntent`), kept at once
   * where this class's own `append` would keep them: without the array and the write's description
   * `append` is handed (some 110 bytes a write). A subclass's `append` still sees every write.
   */
  override intent(runId: string, rec: IntentRecord): Promise<void> {
    return this.#keep(runId, rec, null) ?? super.intent(runId, rec);
  }

  override resultAndIntent(
    runId: string,
    result: ResultRecord,
    intent: ActionIntentRecord | ActionsIntentRecord,
  ): Promise<void> {
    return this.#keep(runId, result, intent) ?? super.resultAndIntent(runId, result, intent);
  }

  override step(runId: string, rec: StepWriteRecord): Promise<void> {
    return this.#keep(runId, rec, null) ?? super.step(runId, rec);
  }

  /** `rec` (and `next`) held as `append` holds sealed records, or null where `append` must decide. */
  #keep(runId: string, rec: LogRecord, next: LogRecord | null): Promise<void> | null {
    const log = this.#logs.get(runId);
    if (log === undefined || this.append !== InMemoryStore.prototype.append) return null;
    if (!isSealedRecord(rec) || (next !== null && !isSealedRecord(next))) return null;
    log.held.push(rec);
    if (next !== null) log.held.push(next);
    return Promise.resolve();
  }

  /** Contract: see {@link AppendLogStore.append}; every record encoded (or kept sealed) before any lands. */
  protected append({ runId, records }: LogAppend): Promise<void> {
    let log = this.#logs.get(runId);
    if (!log) this.#logs.set(runId, (log = { lines: [], held: [], codec: new LogCodec() }));
    if (records.every(isSealed)) {
      // One push a record, not a spread: a spread call allocates its arguments at every write.
      for (let i = 0; i < records.length; i++) log.held.push(records[i] as LogRecord);
      return Promise.resolve();
    }
    // A record the caller built may change after this call: encode it now, after what is held.
    let lines: string[];
    try {
      lines = [...log.held, ...records].map((rec) => (log as { codec: LogCodec }).codec.encode(rec));
    } catch (e) {
      // Nothing landed, but the codec followed part of it: a fresh one writes the step in flight in full.
      log.codec = new LogCodec();
      return Promise.reject(e);
    }
    log.held.length = 0;
    log.lines.push(...lines);
    return Promise.resolve();
  }

  async readLog(runId: string): Promise<readonly LogRecord[]> {
    const log = this.#logs.get(runId);
    if (!log) return [];
    // Encode what the loop sealed, once: every read then makes the round trip a durable store makes.
    for (const rec of log.held) log.lines.push(log.codec.encode(rec));
    log.held.length = 0;
    return decodeLog(log.lines).records;
  }

  /**
   * Contract: see {@link RunStore.acquire}. Refuses (never waits) with `RunLockedError` while
   * another driver in this process holds the run; rejects with `signal.reason` if already
   * aborted. Release is idempotent and frees only its own lease, never a later holder's.
   */
  acquire(runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<ReleaseLease> {
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    if (this.#leases.has(runId))
      return Promise.reject(new RunLockedError(runId, 'another driver in this process holds it'));
    const token = Symbol(runId);
    const lost = new AbortController();
    const stop = this.#stops.get(runId);
    if (stop) lost.abort(new StopRequestedError(runId, stop));
    this.#leases.set(runId, { token, lost });
    const release = (): Promise<void> => {
      if (this.#leases.get(runId)?.token === token) this.#leases.delete(runId);
      return Promise.resolve();
    };
    return Promise.resolve(Object.assign(release, { lost: lost.signal }));
  }

  /**
   * Contract: see {@link RunStore.requestStop}. Kept in this process's memory: the driver holding
   * the run's lease here sees it at once, the next one at its `acquire`.
   */
  requestStop(runId: string, stop: StopRequest): Promise<void> {
    const kept = stop.reason === undefined ? {} : { reason: stop.reason };
    this.#stops.set(runId, kept);
    this.#leases.get(runId)?.lost.abort(new StopRequestedError(runId, kept));
    return Promise.resolve();
  }

  /** Run ids with a log, in first-write order. */
  runIds(): readonly string[] {
    return [...this.#logs.keys()];
  }
}
