/**
 * `toUIMessageStream`: run events as UI message chunks, for a host that drives runs itself.
 * @module
 */
import type { RunEvent } from '../core/index.ts';
import type { UIMessageChunk } from 'ai';

/** Options of {@link toUIMessageStream}. */
export type ToUIMessageStreamOptions = {
  /** The assistant message's id, sent in the `start` chunk. */
  readonly messageId?: string;
};

/**
 * Map one run's events to UI message chunks (the table in docs/chat.md): `start`, then per
 * step `start-step`, text as it streams (`model_delta`), tool input when decided, tool output
 * when it lands, approvals and denials, `finish-step`; `finish` (after `error` for a run that
 * failed) at `run_ended`, or at a pause for input.
 *
 * @example
 * const events = new TransformStream<RunEvent, RunEvent>();
 * const writer = events.writable.getWriter();
 * const sink = { params: {}, deliver: (e: RunEvent) => writer.write(e) };
 * const chunks = toUIMessageStream(events.readable, { messageId: 'm1' });
 */
export function toUIMessageStream(events: AsyncIterable<RunEvent> | ReadableStream<RunEvent>, options: ToUIMessageStreamOptions = {}): ReadableStream<UIMessageChunk> {
  void events;
  void options;
  throw new Error('toUIMessageStream: not implemented yet');
}
