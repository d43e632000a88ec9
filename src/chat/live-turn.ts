/**
 * One turn as its streams see it: the chunks of its log, then those of the driver this process
 * runs for it (if any), kept in a {@link Transcript} that every stream of the turn follows.
 * @module
 */
import { readRunLog } from '../core/index.ts';
import { sinkHooks } from '../core/internal-entry.ts';
import type {
  EventSink,
  InputReply,
  LogRecord,
  ModelCall,
  ModelCaller,
  ModelReply,
  RunEvent,
  RunResult,
} from '../core/index.ts';
import type { UIMessageChunk } from 'ai';
import { Transcript } from './transcript.ts';
import type { JoinAt } from './transcript.ts';
import { TurnChunks } from './turn-chunks.ts';
import { failureText } from './turn-ending.ts';
import type { TurnEnding } from './turn-ending.ts';

/** `"<ErrorName>: <message>"`, as the failure of a driver reaches the page. */
export function describeFailure(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return `Error: ${String(e)}`;
}

/** How a log that no driver carries on ends a stream: its end, or its pause for input. */
export function endingOfLog(records: readonly LogRecord[]): TurnEnding {
  const view = readRunLog(records);
  if (view.ended) {
    const { stopReason, stopRequest } = view.ended;
    const error = failureText(stopReason, view.trajectory);
    return { stopReason, usage: view.ended.usage ?? view.usage, error, stopRequest };
  }
  return { stopReason: 'awaiting_input', usage: view.usage, error: null };
}

/** Starts a driver, given the wrappers that feed the transcript: around the agent's model, and around its sink. */
type DriverStart = (
  model: (inner: ModelCaller) => ModelCaller,
  events: (inner: EventSink) => EventSink,
) => Promise<RunResult>;

/** One turn: its transcript, and the driver of this process when there is one. */
export class LiveTurn {
  readonly runId: string;
  readonly transcript = new Transcript();
  readonly chunks: TurnChunks;
  /** Settles when the log was read and the driver (if any) started; rejects when the turn cannot be opened. */
  ready: Promise<void> = Promise.resolve();
  /** The driver's run, settled when it ended or paused (never rejects); null when no driver runs. */
  driving: Promise<void> | null = null;
  /** Where this driver's chunks start in the transcript: after the log it found. */
  driverFrom = 0;
  /** The replies this driver carries out, in order: each `input_received` shows its reply whole (with a reason). */
  #given: readonly InputReply[] = [];
  /** The reasoning of replies whose text streamed in: shown when the call's result is announced. */
  readonly #reasoning = new Map<number, string>();

  constructor(runId: string) {
    this.runId = runId;
    this.chunks = new TurnChunks(
      runId,
      (c) => this.transcript.push(c),
      (id) => this.transcript.markReply(id),
    );
  }

  /** The replies this driver carries out: none without a driver. */
  get given(): readonly InputReply[] {
    return this.driving === null ? [] : this.#given;
  }

  /** The chunks of a log (what happened before this process looked). */
  replay(records: readonly LogRecord[]): void {
    for (const rec of records) this.chunks.record(rec);
  }

  /** A turn no driver carries on: its log's end, and no more chunks. */
  endFromLog(records: readonly LogRecord[]): void {
    // A stream that answers nothing new joins here: it gets only the end.
    this.driverFrom = this.transcript.length;
    this.chunks.end(endingOfLog(records));
    this.transcript.close();
  }

  /** A stream of the turn, opening with `start` under the turn's assistant message id. */
  follow(messageId: string, at: JoinAt, signal?: AbortSignal): ReadableStream<UIMessageChunk> {
    return this.transcript.follow([{ type: 'start', messageId }], at, signal);
  }

  /**
   * Run a driver for the turn: `start` is given the model and the event sink that feed this
   * transcript (the agent's own sink still gets every event). The transcript ends with the run.
   */
  drive(start: DriverStart, inputs: readonly InputReply[]): Promise<void> {
    this.#given = inputs;
    this.driverFrom = this.transcript.length;
    let run: Promise<RunResult>;
    try {
      run = start(
        (inner) => this.#model(inner),
        (inner) => this.#sink(inner),
      );
    } catch (e) {
      run = Promise.reject(e);
    }
    this.driving = run
      .then(
        (result) => {
          const { stopReason, usage, error, stopRequest } = result;
          this.chunks.end({ stopReason, usage, error, stopRequest });
        },
        (e: unknown) => this.transcript.push({ type: 'error', errorText: describeFailure(e) }),
      )
      .finally(() => this.transcript.close());
    return this.driving;
  }

  /** One event of the driver. */
  #event(e: RunEvent): void {
    const given = e.type === 'input_received' ? this.#given.find((r) => r.resultId === e.resultId) : undefined;
    if (e.type === 'input_received' && given) {
      this.chunks.received(e.stepIndex, e.resultId, given);
      return;
    }
    this.chunks.event(e);
    if (e.type === 'model_call_finished' && e.error === null) {
      this.chunks.reasoning(e.stepIndex, this.#reasoning.get(e.stepIndex) ?? null);
    }
  }

  /** The agent's sink, with this transcript beside it: it gets each event first and never fails. */
  #sink(inner: EventSink): EventSink {
    return {
      params: inner.params,
      // A tracing sink's hooks go through: a chat turn's runs stay one trace across requests.
      ...sinkHooks(inner),
      deliver: (e: RunEvent) => {
        try {
          this.#event(e);
        } catch {
          // A chunk that cannot be shown must not cost the run an event delivery to the agent's sink.
        }
        return inner.deliver(e);
      },
    };
  }

  /**
   * The agent's model, reporting its reply: a model that streamed its text gets its reasoning
   * (unless that streamed in too, before the text) shown when the call's result is announced;
   * one that did not stream its text gets its reasoning and text shown the moment it replies, so
   * they come before the step's tool part.
   */
  #model(inner: ModelCaller): ModelCaller {
    return {
      params: inner.params,
      call: async (call: ModelCall): Promise<ModelReply> => {
        let streamed = false;
        const onDelta = (delta: string, kind?: 'text' | 'reasoning'): void => {
          if (kind === undefined || kind === 'text') streamed = true;
          call.onDelta?.(delta, kind);
        };
        const reply = await inner.call({ ...call, onDelta });
        const text = typeof reply?.text === 'string' ? reply.text : '';
        const reasoning = typeof reply?.reasoning === 'string' ? reply.reasoning : null;
        if (streamed) {
          if (reasoning !== null) this.#reasoning.set(call.callSeq, reasoning);
        } else if (!call.signal.aborted) {
          this.chunks.reply(call.callSeq, { text, reasoning });
        }
        return reply;
      },
    };
  }
}
