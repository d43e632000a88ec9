/**
 * A turn's chunks so far, kept so a stream that joins late gets the turn from its start (or
 * from a reply) and then follows it, with nothing twice. Text and reasoning that streamed in
 * delta by delta are kept as one growing part: a late stream gets each finished model call as
 * one `*-start`/`*-delta`/`*-end` triple, and the open one as far as it got, then its next deltas.
 * @module
 */
import type { UIMessageChunk } from 'ai';

/** A streamed part, kept whole. */
type PartEntry = { readonly part: 'text' | 'reasoning'; readonly id: string; text: string; ended: boolean };
type Entry = PartEntry | { readonly chunk: UIMessageChunk };

/** Where a stream joins the transcript: from the start, after a reply, or from now on. */
export type JoinAt =
  | { readonly from: 'start' }
  | { readonly from: 'index'; readonly index: number }
  | { readonly from: 'now' };

/** One turn's chunks and the streams that follow them. */
export class Transcript {
  readonly #entries: Entry[] = [];
  readonly #open = new Map<string, PartEntry>();
  /** Where each reply's chunks end: a stream that answers it starts there. */
  readonly #replies = new Map<string, number>();
  readonly #followers = new Set<ReadableStreamDefaultController<UIMessageChunk>>();
  #closed = false;

  /** Whether no chunk will be added any more. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Entries so far: a position to join at later. */
  get length(): number {
    return this.#entries.length;
  }

  /** Whether a reply to `resultId` is in the transcript. */
  hasReply(resultId: string): boolean {
    return this.#replies.has(resultId);
  }

  /** Where the chunks of the latest of these replies end, or null when none of them is in the transcript. */
  afterReplies(resultIds: readonly string[]): number | null {
    let at: number | null = null;
    for (const id of resultIds) {
      const i = this.#replies.get(id);
      if (i !== undefined && (at === null || i > at)) at = i;
    }
    return at;
  }

  /** Add a chunk and send it to every follower. */
  push(chunk: UIMessageChunk): void {
    this.#keep(chunk);
    for (const c of this.#followers) c.enqueue(chunk);
  }

  /** Mark the end of a reply's chunks. */
  markReply(resultId: string): void {
    this.#replies.set(resultId, this.#entries.length);
  }

  /** No more chunks: every follower's stream ends. */
  close(): void {
    this.#closed = true;
    for (const c of this.#followers) c.close();
    this.#followers.clear();
  }

  /**
   * A stream of the turn: `head` (its `start`), the chunks from `at` on, then every later chunk
   * until {@link close}. Joining and the replay happen in one synchronous step, so no chunk is
   * missed or sent twice.
   */
  follow(head: readonly UIMessageChunk[], at: JoinAt, signal?: AbortSignal): ReadableStream<UIMessageChunk> {
    let controller: ReadableStreamDefaultController<UIMessageChunk> | null = null;
    const stop = (): void => {
      if (controller === null || !this.#followers.delete(controller)) return;
      try {
        controller.close();
      } catch {
        // the reader cancelled it already
      }
    };
    return new ReadableStream<UIMessageChunk>({
      start: (c) => {
        controller = c;
        for (const chunk of head) c.enqueue(chunk);
        for (const chunk of this.#replay(this.#startOf(at))) c.enqueue(chunk);
        if (this.#closed || signal?.aborted) return c.close();
        this.#followers.add(c);
        signal?.addEventListener('abort', stop, { once: true });
      },
      cancel: () => {
        if (controller !== null) this.#followers.delete(controller);
        signal?.removeEventListener('abort', stop);
      },
    });
  }

  /** All chunks from the start, compacted as a late stream gets them. */
  chunks(): UIMessageChunk[] {
    return [...this.#replay(0)];
  }

  #startOf(at: JoinAt): number {
    if (at.from === 'start') return 0;
    if (at.from === 'now') return this.#entries.length;
    return Math.min(at.index, this.#entries.length);
  }

  *#replay(from: number): Iterable<UIMessageChunk> {
    for (let i = from; i < this.#entries.length; i++) {
      const e = this.#entries[i] as Entry;
      if ('chunk' in e) {
        yield e.chunk;
        continue;
      }
      const { id, text } = e;
      const isText = e.part === 'text';
      yield isText ? { type: 'text-start', id } : { type: 'reasoning-start', id };
      if (text !== '') yield { type: isText ? 'text-delta' : 'reasoning-delta', id, delta: text };
      if (e.ended) yield isText ? { type: 'text-end', id } : { type: 'reasoning-end', id };
    }
  }

  #keep(chunk: UIMessageChunk): void {
    switch (chunk.type) {
      case 'text-start':
      case 'reasoning-start': {
        const part = chunk.type === 'text-start' ? 'text' : 'reasoning';
        const entry: PartEntry = { part, id: chunk.id, text: '', ended: false };
        this.#open.set(`${entry.part}:${chunk.id}`, entry);
        this.#entries.push(entry);
        return;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const entry = this.#open.get(`${chunk.type === 'text-delta' ? 'text' : 'reasoning'}:${chunk.id}`);
        if (entry) entry.text += chunk.delta;
        return;
      }
      case 'text-end':
      case 'reasoning-end': {
        const key = `${chunk.type === 'text-end' ? 'text' : 'reasoning'}:${chunk.id}`;
        const entry = this.#open.get(key);
        if (entry) entry.ended = true;
        this.#open.delete(key);
        return;
      }
      default:
        this.#entries.push({ chunk });
    }
  }
}
