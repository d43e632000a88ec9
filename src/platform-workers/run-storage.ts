/**
 * What a run object keeps in its storage: the run's tables (its row and its log), the log store,
 * and the listeners following the log live. Every reading of the log goes through
 * {@link RunStorage.readNow}, the one reading (`readRunLog`).
 * @module
 */
import { isPolyLoopError } from '../core/index.ts';
import { readRunLogLines } from '../core/internal-entry.ts';
import type { RunLogState, RunLogView } from '../core/index.ts';
import { DurableObjectStore } from './durable-object-store.ts';
import type { StoredLine } from './durable-object-store.ts';
import { createRunTables, hasRunTables, readRunRow } from './run-row.ts';
import type { RunRow } from './run-row.ts';
import type { LogFeed } from './sse.ts';

/** One reading of the run's log (`readRunLog`), or why it cannot be read: the error's name and message. */
export type Reading = { readonly view: RunLogView } | { readonly unreadable: string };

/** A run object's storage (see the module). No table is created until {@link createTables}. */
export class RunStorage {
  readonly #storage: DurableObjectStorage;
  /** The log store, there once the tables are known to exist. */
  #store: DurableObjectStore | null = null;
  readonly #listeners = new Set<(entry: StoredLine) => void>();

  constructor(storage: DurableObjectStorage) {
    // An object asked about an unknown run must not be left with storage: nothing is created here.
    this.#storage = storage;
  }

  get sql(): SqlStorage {
    return this.#storage.sql;
  }

  /** True once this object holds a run's tables (created by {@link createTables}); then they are ready to use. */
  hasTables(): boolean {
    if (this.#store !== null) return true;
    const found = hasRunTables(this.#storage.sql);
    if (found) this.createTables();
    return found;
  }

  createTables(): void {
    createRunTables(this.#storage.sql);
    const onAppend = (_runId: string, entry: StoredLine): void => {
      for (const listener of this.#listeners) listener(entry);
    };
    this.#store ??= new DurableObjectStore(this.#storage, { onAppend });
  }

  /** The run's log store; only called once the run's tables exist. */
  get store(): DurableObjectStore {
    if (this.#store === null) this.createTables();
    return this.#store as DurableObjectStore;
  }

  /** The run row, or null when this object holds no run. */
  meta(): RunRow | null {
    if (!this.hasTables()) return null;
    return readRunRow(this.#storage.sql);
  }

  /**
   * The log read through `readRunLog` in this turn, or why it is refused. Store failures still throw.
   * Read from its lines, building no record but each step's: a status read of a long run fits in the
   * object's memory as its resume does (docs/design/run-log.md#reading-a-log-fast).
   */
  readNow(runId: string): Reading {
    try {
      const { lines, source } = this.store.readLogLinesSync(runId);
      return { view: readRunLogLines(lines, source).view };
    } catch (e) {
      if (!isPolyLoopError(e) || (e.code !== 'corrupt_log' && e.code !== 'schema_version')) throw e;
      return { unreadable: `${e.name}: ${e.message}` };
    }
  }

  /** The one reading of the log, or null when it cannot be read or the store fails (see {@link stateOf}). */
  view(runId: string): RunLogView | null {
    try {
      const reading = this.readNow(runId);
      return 'view' in reading ? reading.view : null;
    } catch {
      return null;
    }
  }

  /**
   * The state the one reading of the log says, or null when the log cannot be read (or the store
   * fails): not ended, not awaiting — the next resume meets the same fault and halts or retries the run.
   */
  stateOf(runId: string): RunLogState | null {
    return this.view(runId)?.state ?? null;
  }

  /** True when a cancel or a stop was asked of the run: a waiting run is then driven to its end. */
  asked(meta: RunRow): boolean {
    return meta.cancelRequested || this.store.stopOf(meta.runId) !== null;
  }

  ended(runId: string): boolean {
    return this.stateOf(runId) === 'ended';
  }

  /** The log's committed lines and its appends as they land, for the event stream. */
  feed(runId: string): LogFeed {
    return {
      readLines: (after: number) => this.store.readRecordLines(runId, after),
      subscribe: (listener: (entry: StoredLine) => void) => {
        this.#listeners.add(listener);
        return () => void this.#listeners.delete(listener);
      },
    };
  }
}
