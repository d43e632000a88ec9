/**
 * What one drive of the run object tells the callers waiting on it: its event sink aborts a drive
 * a cancel was asked for before the library was called, tells the sender of a reply once the
 * reply is durable (and the asker of an upgrade once the run restarts), and passes every event on
 * to the user's own sink (and its tracing hooks, `traceparent` and `withMessages`); {@link tellFailure}
 * tells them why a drive failed.
 * @module
 */
import { isPolyLoopError } from '../core/index.ts';
import { sinkHooks } from '../core/internal-entry.ts';
import type { EventSink, InputReply, RunEvent } from '../core/index.ts';
import { upgradeHint } from './run-input.ts';
import type { InputOutcome, UpgradeOutcome } from './run-input.ts';

/** A reply a drive is to write, and how its sender hears whether it landed (resolve) or the drive failed (reject). */
export type Answer = {
  readonly reply: InputReply;
  readonly done: (outcome: InputOutcome) => void;
  readonly fail: (e: unknown) => void;
};

/** Why an upgrade was refused (nothing written). */
export type UpgradeRefusal = Extract<UpgradeOutcome, { readonly ok: false }>;

/** An upgrade a drive is to ask for, and how its asker hears it landed (null) or was refused, or the drive failed. */
export type Upgrade = {
  readonly reason: string;
  readonly done: (refused: UpgradeRefusal | null) => void;
  readonly fail: (e: unknown) => void;
};

/**
 * Tell the sender of `answer` and the asker of `upgrade` why the drive failed with `e`: a reply
 * that fits no open request or meets a changed agent, and a refused upgrade, are `conflict`s;
 * anything else rejects their call. True when `e` refused the reply or upgrade, writing nothing.
 */
export function tellFailure(e: unknown, runId: string, answer: Answer | null, upgrade: Upgrade | null): boolean {
  const code = isPolyLoopError(e) ? e.code : null;
  const message = e instanceof Error ? `${e.name}: ${e.message}${upgradeHint(e, runId)}` : String(e);
  // Edited arguments the tool refuses are a bad request; any other misfit, a reply the run moved past.
  const edit = code === 'invalid_input' && (e as { field?: unknown }).field === 'arguments';
  if (code === 'invalid_input')
    answer?.done({ ok: false, code: edit ? 'bad_request' : 'conflict', message: (e as Error).message });
  else if (code === 'run_identity_mismatch') answer?.done({ ok: false, code: 'conflict', message });
  else answer?.fail(e);
  if (code === 'upgrade_refused') upgrade?.done({ ok: false, code: 'conflict', message });
  else upgrade?.fail(e);
  return code === 'invalid_input' || code === 'upgrade_refused';
}

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
  /** Called when the run (re)starts: an upgrade this drive asked for is durable by then. */
  readonly started?: () => void;
};

/** The reason a cancelled drive is aborted with. */
export function cancelReason(): Error {
  return new DOMException('run cancelled by request', 'AbortError');
}

/** The sink of one drive (see the module). */
export function driveSink(opts: DriveSinkOptions): EventSink {
  const { extra, controller, answer, cancelling, cancelRequested, started } = opts;
  // A tracing sink's hooks go through too: its trace context lands in run_started, so every later
  // drive of the run joins the first drive's trace (docs/observability.md#one-trace-across-crashes).
  return {
    params: extra?.params ?? { sink: 'run-object' },
    ...sinkHooks(extra),
    deliver: async (event: RunEvent) => {
      if (event.type === 'run_started') started?.();
      if (event.type === 'run_started' && !cancelling && cancelRequested()) controller.abort(cancelReason());
      // Emitted once the input record is durable: the sender may be told.
      if (event.type === 'input_received' && answer !== null && event.resultId === answer.reply.resultId)
        answer.done({ ok: true, resultId: event.resultId });
      await extra?.deliver(event);
    },
  };
}
