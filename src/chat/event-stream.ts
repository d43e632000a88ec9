/**
 * `toUIMessageStream`: run events as UI message chunks, for a host that drives runs itself.
 * @module
 */
import type { RunEvent, StepRecord, StopReason } from '../core/index.ts';
import type { UIMessageChunk } from 'ai';
import { describeFailure } from './live-turn.ts';
import { TurnChunks } from './turn-chunks.ts';
import { failureText } from './turn-ending.ts';
import type { TurnEnding } from './turn-ending.ts';

type Controller = ReadableStreamDefaultController<UIMessageChunk>;

/** Options of {@link toUIMessageStream}. */
export type ToUIMessageStreamOptions = {
  /** The assistant message's id, sent in the `start` chunk. */
  readonly messageId?: string;
};

/**
 * Map one run's events to UI message chunks (the table in docs/chat.md): `start`, then per
 * step `start-step`, reasoning then text as they stream (`model_delta`; a model that does not
 * stream shows them when the step finishes), tool input when decided, tool output when it lands, approvals
 * and denials, `finish-step`; `finish` (after `error` for a run that failed) at `run_ended`, or
 * when the events end after a request for input. Usage counts the steps the events showed.
 *
 * @example
 * const events = new TransformStream<RunEvent, RunEvent>();
 * const writer = events.writable.getWriter();
 * const agent = defineAgent({ ...config, events: { params: {}, deliver: (e) => writer.write(e) } });
 * const chunks = toUIMessageStream(events.readable, { messageId: 'm1' });
 * void run(agent, request).finally(() => writer.close());
 */
export function toUIMessageStream(
  events: AsyncIterable<RunEvent> | ReadableStream<RunEvent>,
  options: ToUIMessageStreamOptions = {},
): ReadableStream<UIMessageChunk> {
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      const { messageId } = options;
      controller.enqueue({ type: 'start', ...(messageId !== undefined ? { messageId } : {}) });
      void pump(iterate(events), controller);
    },
  });
}

async function pump(events: AsyncIterable<RunEvent>, controller: Controller): Promise<void> {
  let chunks: TurnChunks | null = null;
  const steps: StepRecord[] = [];
  let paused = false;
  let ended = false;
  try {
    for await (const e of events) {
      chunks ??= new TurnChunks(e.runId, (c) => controller.enqueue(c));
      if (e.type === 'step_finished') steps.push(e.step);
      if (e.type === 'input_requested') paused = true;
      if (e.type === 'step_started') paused = false;
      if (e.type === 'run_ended') {
        chunks.end({ ...ending(e.stopReason, steps), stopRequest: e.stopRequest });
        ended = true;
        continue;
      }
      chunks.event(e);
    }
    if (!ended && paused && chunks) chunks.end(ending('awaiting_input', steps));
  } catch (e) {
    controller.enqueue({ type: 'error', errorText: describeFailure(e) });
  }
  controller.close();
}

function ending(stopReason: StopReason, steps: readonly StepRecord[]): TurnEnding {
  const usage = { inputTokens: 0, outputTokens: 0 };
  for (const s of steps) {
    usage.inputTokens += s.usage?.inputTokens ?? 0;
    usage.outputTokens += s.usage?.outputTokens ?? 0;
  }
  return { stopReason, usage, error: stopReason === 'awaiting_input' ? null : failureText(stopReason, steps) };
}

async function* iterate(events: AsyncIterable<RunEvent> | ReadableStream<RunEvent>): AsyncIterable<RunEvent> {
  if (!(events instanceof ReadableStream)) return yield* events;
  const reader = events.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}
