/**
 * The event sink of one drive of the run object: it aborts a drive a cancel was asked for
 * before the library was called, tells the sender of a reply once the reply is durable, and
 * passes every event on to the user's own sink.
 * @module
 */
import type { EventSink, InputReply, RunEvent } from '../core/index.ts';
import type { InputOutcome } from './run-input.ts';

/** A reply a drive is to write, and how its sender hears whether it landed (resolve) or the drive failed (reject). */
export type Answer = { readonly reply: InputReply; readonly done: (outcome: InputOutcome) => void; readonly fail: (e: unknown) => void };

/** What {@link driveSink} needs. */
export type DriveSinkOptions = {
  /** The user's sink, which receives every event too. */
  readonly extra: EventSink | undefined;
  readonly controller: AbortController;
  /** The reply this drive writes, if any. */
  readonly answer: Answer | null;
  /** This drive writes a cancel reply: it is the cancel, so it is not aborted for it. */
  readonly cancelling: boolean;
  /** Whether a cancel was asked for (read when the run starts). */
  readonly cancelRequested: () => boolean;
};

/** The reason a cancelled drive is aborted with. */
export function cancelReason(): Error {
  return new DOMException('run cancelled by request', 'AbortError');
}

/** The sink of one drive (see the module). */
export function driveSink(opts: DriveSinkOptions): EventSink {
  const { extra, controller, answer, cancelling, cancelRequested } = opts;
  return {
    params: extra?.params ?? { sink: 'run-object' },
    deliver: async (event: RunEvent) => {
      if (event.type === 'run_started' && !cancelling && cancelRequested()) controller.abort(cancelReason());
      // Emitted once the input record is durable: the sender may be told.
      if (event.type === 'input_received' && answer !== null && event.resultId === answer.reply.resultId) answer.done({ ok: true, resultId: event.resultId });
      await extra?.deliver(event);
    },
  };
}
