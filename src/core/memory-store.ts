/**
 * InMemoryStore: run logs in this process's memory. No recovery across processes — choosing it
 * is choosing that. It has no `acquire`: one process has no second driver to exclude. Records are kept encoded, so what comes back has made the same round trip
 * through `encodeRecord`/`decodeRecord` as with a durable store.
 * @module
 */
import type { RunStore } from './ports.ts';
import { decodeLog, encodeRecord } from './serialization.ts';
import type { IntentRecord, LogRecord, ResultRecord, RunEndedRecord, RunStartedRecord, StepWriteRecord } from './types.ts';

/**
 * A {@link RunStore} in memory, for tests, demos and short-lived runs.
 *
 * @example
 * const agent = defineAgent({ model, interpreter, store: new InMemoryStore(), events, syntheticObservations });
 */
export class InMemoryStore implements RunStore {
  readonly #logs = new Map<string, string[]>();

  #append(runId: string, rec: LogRecord): Promise<void> {
    const line = encodeRecord(rec);
    let log = this.#logs.get(runId);
    if (!log) this.#logs.set(runId, (log = []));
    log.push(line);
    return Promise.resolve();
  }

  runStarted(runId: string, rec: RunStartedRecord): Promise<void> {
    return this.#append(runId, rec);
  }

  intent(runId: string, rec: IntentRecord): Promise<void> {
    return this.#append(runId, rec);
  }

  result(runId: string, _resultId: string, rec: ResultRecord): Promise<void> {
    return this.#append(runId, rec);
  }

  step(runId: string, rec: StepWriteRecord): Promise<void> {
    return this.#append(runId, rec);
  }

  runEnded(runId: string, rec: RunEndedRecord): Promise<void> {
    return this.#append(runId, rec);
  }

  async readLog(runId: string): Promise<readonly LogRecord[]> {
    return decodeLog(this.#logs.get(runId) ?? []).records;
  }

  /** Run ids with a log, in first-write order. */
  runIds(): readonly string[] {
    return [...this.#logs.keys()];
  }
}
