/**
 * The store a chat turn's object gives the chat engine: its own turn's log, written and read in
 * the object's storage, and the chat's earlier turns, read (never written) through their own
 * objects — a turn's history is the log of the turn before it, which lives in another object.
 * @module
 */
import { CorruptLogError, decodeLog, RunLockedError, StoreError } from '../core/index.ts';
import { AppendLogStore } from '../core/internal-entry.ts';
import type { LogRecord, RunStore } from '../core/index.ts';
import type { LogAppend } from '../core/internal-entry.ts';
import type { DurableObjectStore } from './durable-object-store.ts';

/** A chat turn's run id, `chat:<chatId>:<turn>`, read back into its parts. */
export type TurnId = { readonly runId: string; readonly chatId: string; readonly turn: number };

const TURN_RUN_ID = /^chat:([A-Za-z0-9_-]{1,128}):([1-9][0-9]{0,14})$/;

/** The parts of a chat turn's run id, or null for any other string. */
export function turnIdOf(runId: string): TurnId | null {
  const m = TURN_RUN_ID.exec(runId);
  if (m === null) return null;
  return { runId, chatId: m[1] as string, turn: Number(m[2]) };
}

/**
 * A turn object's own turn, and its log store (with `create: false`, null when the object has no
 * log table: a read creates nothing).
 */
export type OwnTurn = TurnId & { readonly log: (create: boolean) => DurableObjectStore | null };

/** What a {@link TurnStore} is built from. */
export type TurnStoreOptions = {
  readonly chatId: string;
  /** The object's own turn; null for a reader of the whole chat (the Worker's `loadChat`), which writes nothing. */
  readonly own: OwnTurn | null;
  /** The lines of another turn's log, read through that turn's object (`[]` for a turn never written). */
  readonly earlier: (runId: string) => Promise<readonly string[]>;
};

/**
 * A {@link RunStore} over one chat turn's object. Writes go to the object's own turn only (the
 * object drives only its own run, so its alarm can resume it); a write to any other run is a
 * `RunLockedError`, and a store without an own turn (the Worker's reader of a chat) writes nothing.
 * `readLog` of an earlier turn of the same chat reads that turn's object (an
 * ended turn's log is kept, as it cannot change); of a later turn it is `[]`: a turn's object
 * sees its chat up to itself, since no later turn starts before this one has ended.
 */
export class TurnStore extends AppendLogStore implements RunStore {
  readonly #chatId: string;
  readonly #own: OwnTurn | null;
  readonly #earlier: TurnStoreOptions['earlier'];
  /** Logs of earlier turns that had ended when read. */
  readonly #ended = new Map<string, readonly LogRecord[]>();

  constructor(opts: TurnStoreOptions) {
    super();
    this.#chatId = opts.chatId;
    this.#own = opts.own;
    this.#earlier = opts.earlier;
  }

  /** The write the own turn's log store makes; a write to any other run throws `RunLockedError`. */
  protected append(write: LogAppend): Promise<void> {
    return AppendLogStore.appendTo(this.#writer(write.runId), write);
  }

  /**
   * Contract: as every store's; an earlier turn's object failing to answer rejects (the library
   * wraps it in `StoreError`).
   */
  async readLog(runId: string): Promise<readonly LogRecord[]> {
    const own = this.#own;
    if (runId === own?.runId) return own.log(false)?.readLog(runId) ?? [];
    const other = turnIdOf(runId);
    if (other === null || other.chatId !== this.#chatId) {
      throw new StoreError(runId, 'readLog', new Error(`this store reads only the turns of chat ${this.#chatId}`));
    }
    if (own !== null && other.turn > own.turn) return [];
    const kept = this.#ended.get(runId);
    if (kept !== undefined) return kept;
    const source = `chat-turn:${runId}`;
    const decoded = decodeLog(await this.#earlier(runId), { source });
    // Lines come from committed rows: a last one that is not whole JSON is corruption, not a torn write.
    if (decoded.tornLine !== null) {
      throw new CorruptLogError(decoded.tornLine, 'a committed record is not valid JSON', { source });
    }
    if (decoded.records.at(-1)?.kind === 'run_ended') this.#ended.set(runId, decoded.records);
    return decoded.records;
  }

  #writer(runId: string): DurableObjectStore {
    const own = this.#own;
    if (runId !== own?.runId) throw new RunLockedError(runId, 'only its own object writes its log');
    return own.log(true) as DurableObjectStore;
  }
}
