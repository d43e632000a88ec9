/**
 * The record writes every PolyLoop store shares: a run log is an append-only sequence of records,
 * so each write method of the {@link RunStore} port is one append of its record (the joint
 * `resultAndIntent`, of both), made a barrier or not by `isBarrier`. A store implements that one
 * append; how it makes a barrier durable is its own (its `append` and its class say how).
 * @module
 */
import type { ReadLogOptions, RunStore } from './ports.ts';
import { LogCodec } from './serialization.ts';
import { isBarrier } from './store-write.ts';
import type {
  ActionIntentRecord,
  ActionsIntentRecord,
  CallResultRecord,
  InputRecord,
  InputRequestRecord,
  IntentRecord,
  LogRecord,
  ResultRecord,
  RunEndedRecord,
  RunStartedRecord,
  StepWriteRecord,
  UpgradeRecord,
  ResumedRecord,
} from './types.ts';

/** How many runs' codecs a store keeps (a few bytes each): enough for every run a process drives at once. */
const MAX_CODECS = 4096;

/** The {@link RunStore} method a write came through: the operation a store's errors name. */
export type StoreWriteMethod =
  | 'runStarted'
  | 'intent'
  | 'result'
  | 'resultAndIntent'
  | 'step'
  | 'runEnded'
  | 'inputRequest'
  | 'input'
  | 'upgrade'
  | 'callResult'
  | 'resumed';

/** One write of a {@link RunStore} method, as {@link AppendLogStore.append} is given it. */
export type LogAppend = {
  readonly runId: string;
  /** The records, in order (two for `resultAndIntent`), to append as one write: all land or none. */
  readonly records: readonly LogRecord[];
  /**
   * The write is a barrier (`isBarrier` of one of its records): durable when the promise resolves.
   * Otherwise the store may make it durable later, never out of order.
   */
  readonly barrier: boolean;
  /** The store method the write came through, for errors. */
  readonly method: StoreWriteMethod;
};

/**
 * A {@link RunStore} whose every write method — the optional `resultAndIntent`, `inputRequest`,
 * `input` and `upgrade` included — is one call of {@link AppendLogStore.append}. A subclass
 * implements `append` and `readLog` (and `acquire`, if it has a lease).
 */
export abstract class AppendLogStore implements RunStore {
  /**
   * The codec of each run this store writes, following its log since the store's last read of it
   * (docs/design/run-log.md#the-lean-form). At most {@link MAX_CODECS}: a run whose codec was
   * dropped writes its step in flight in full, which is only longer.
   */
  readonly #codecs = new Map<string, LogCodec>();

  /**
   * The lines (no newline) `write.records` are appended as: the lean form, as the run's codec
   * writes them. Call it once per write, in the order the writes land.
   */
  protected encodeWrite(write: LogAppend): string[] {
    const { runId } = write;
    let codec = this.#codecs.get(runId);
    if (!codec) {
      if (this.#codecs.size >= MAX_CODECS) this.#codecs.delete(this.#codecs.keys().next().value as string);
      this.#codecs.set(runId, (codec = new LogCodec()));
    }
    const lines = write.records.map((rec) => (codec as LogCodec).encode(rec));
    if (write.records.at(-1)?.kind === 'run_ended') this.#codecs.delete(runId);
    return lines;
  }

  /**
   * Forget what the run's codec followed: when the store reads the log (another driver may have
   * written since), and when a write fails (it may not have landed). Its next lines are written in
   * full until its next step record.
   */
  protected forgetWrites(runId: string): void {
    this.#codecs.delete(runId);
  }

  /** Append `write.records` to the run's log as one write (see {@link LogAppend}). */
  protected abstract append(write: LogAppend): Promise<void>;

  abstract readLog(runId: string, opts?: ReadLogOptions): Promise<readonly LogRecord[]>;

  /**
   * `store.append(write)`, for a store that hands each write on to the store that holds the run's
   * log (a chat turn's store, to its own turn's): the write that store would have made itself.
   */
  protected static appendTo(store: AppendLogStore, write: LogAppend): Promise<void> {
    return store.append(write);
  }

  /** Contract: see {@link RunStore.runStarted}; not a barrier. */
  runStarted(runId: string, rec: RunStartedRecord): Promise<void> {
    return this.#write(runId, [rec], 'runStarted');
  }

  /** Contract: see {@link RunStore.intent}; a barrier, but a safe model-call intent (`isBarrier`). */
  intent(runId: string, rec: IntentRecord): Promise<void> {
    return this.#write(runId, [rec], 'intent');
  }

  /** Contract: see {@link RunStore.resultAndIntent}; both records in one append, a barrier. */
  resultAndIntent(
    runId: string,
    result: ResultRecord,
    intent: ActionIntentRecord | ActionsIntentRecord,
  ): Promise<void> {
    return this.#write(runId, [result, intent], 'resultAndIntent');
  }

  /** Contract: see {@link RunStore.result}; not a barrier. */
  result(runId: string, _resultId: string, rec: ResultRecord): Promise<void> {
    return this.#write(runId, [rec], 'result');
  }

  /** Contract: see {@link RunStore.step}; the action result and the step in one record, a barrier. */
  step(runId: string, rec: StepWriteRecord): Promise<void> {
    return this.#write(runId, [rec], 'step');
  }

  /** Contract: see {@link RunStore.runEnded}; a barrier. */
  runEnded(runId: string, rec: RunEndedRecord): Promise<void> {
    return this.#write(runId, [rec], 'runEnded');
  }

  /** Contract: see {@link RunStore.inputRequest}; a barrier. */
  inputRequest(runId: string, rec: InputRequestRecord): Promise<void> {
    return this.#write(runId, [rec], 'inputRequest');
  }

  /** Contract: see {@link RunStore.input}; a barrier, durable before the reply is carried out. */
  input(runId: string, rec: InputRecord): Promise<void> {
    return this.#write(runId, [rec], 'input');
  }

  /** Contract: see {@link RunStore.upgrade}; a barrier, durable before any step runs under the new identity. */
  upgrade(runId: string, rec: UpgradeRecord): Promise<void> {
    return this.#write(runId, [rec], 'upgrade');
  }

  /** Contract: see {@link RunStore.callResult}; not a barrier. */
  callResult(runId: string, rec: CallResultRecord): Promise<void> {
    return this.#write(runId, [rec], 'callResult');
  }

  /** Contract: see {@link RunStore.resumed}; not a barrier. */
  resumed(runId: string, rec: ResumedRecord): Promise<void> {
    return this.#write(runId, [rec], 'resumed');
  }

  #write(runId: string, records: readonly LogRecord[], method: StoreWriteMethod): Promise<void> {
    let barrier: boolean;
    try {
      barrier = records.some(isBarrier);
    } catch (e) {
      // Not a record at all (`null`): refused before the store writes anything, and never thrown.
      return Promise.reject(e);
    }
    return this.append({ runId, records, barrier, method });
  }
}
