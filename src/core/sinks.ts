/**
 * Two ready event sinks: one that drops every event, one that prints a line per event.
 * @module
 */
import { checkOptionKeys } from './options.ts';
import type { OptionKeys } from './options.ts';
import type { EventSink } from './ports.ts';
import type { Action, RunEvent } from './types.ts';

/**
 * An {@link EventSink} that ignores every event (params `{ sink: 'silent' }`): the run's log
 * still holds everything that happened.
 *
 * @example
 * const agent = defineAgent({ model, interpreter, store, events: silentSink(), syntheticObservations });
 */
export function silentSink(): EventSink {
  return { params: Object.freeze({ sink: 'silent' }), deliver: () => undefined };
}

/** Options of {@link consoleSink}. Each is reported in the sink's params. */
export type ConsoleSinkOptions = {
  /** Where each line goes; `console.log` when absent. */
  readonly write?: (line: string) => void;
  /** Longest text (observation, answer, error) shown on a line before it is cut with `…`; 200 when absent. */
  readonly maxChars?: number;
  /**
   * Print `model_delta` events too, one line each (streaming models): `model: …` for text,
   * `model thinks: …` for reasoning; false when absent.
   */
  readonly deltas?: boolean;
};

const CONSOLE_SINK_OPTIONS: OptionKeys<ConsoleSinkOptions> = { write: true, maxChars: true, deltas: true };

/**
 * An {@link EventSink} that prints one human-readable line per event, prefixed by the run id and
 * the step number (`[sum-1] #0 action add({"a":2,"b":40})`); whitespace in texts is folded and
 * long texts are cut at `maxChars`. Params: `{ sink: 'console', maxChars, deltas }`.
 *
 * @example
 * const agent = defineAgent({ model, interpreter, store, events: consoleSink(), syntheticObservations });
 */
export function consoleSink(opts: ConsoleSinkOptions = {}): EventSink {
  checkOptionKeys(opts, CONSOLE_SINK_OPTIONS, 'consoleSink');
  const maxChars = opts.maxChars ?? 200;
  const deltas = opts.deltas ?? false;
  if (!Number.isSafeInteger(maxChars) || maxChars < 1)
    throw new RangeError(`consoleSink: maxChars must be a positive integer, got ${String(maxChars)}`);
  const write = opts.write ?? ((line: string): void => console.log(line));
  return {
    params: Object.freeze({ sink: 'console', maxChars, deltas }),
    deliver(event: RunEvent): void {
      if (event.type === 'model_delta' && !deltas) return;
      const step = 'stepIndex' in event && event.stepIndex !== undefined ? `#${event.stepIndex} ` : '';
      write(`[${event.runId}] ${step}${describe(event, (text) => clip(text, maxChars))}`);
    },
  };
}

function describe(e: RunEvent, clip: (text: string) => string): string {
  switch (e.type) {
    case 'run_started':
      return e.resumed ? `run resumed at step ${e.fromStep}` : 'run started';
    case 'step_started':
      return 'step started';
    case 'model_call_started':
      return e.replayed ? 'model call (again, after an interruption)' : 'model call';
    case 'model_delta':
      return `${e.kind === 'reasoning' ? 'model thinks' : 'model'}: ${clip(e.delta)}`;
    case 'model_call_finished':
      return e.error === null ? 'model replied' : `model call failed: ${clip(e.error)}`;
    case 'decision':
      return `${e.decision}: ${clip(e.summary)}`;
    case 'action_started':
      return `running ${clip(actionText(e.action))}${e.replayed ? ' (again, after an interruption)' : ''}`;
    case 'action_finished':
      return `${e.outcome.status}: ${clip(e.outcome.observation)}`;
    case 'step_finished':
      return `step finished (${e.step.decision}${e.step.actionStatus ? `, ${e.step.actionStatus}` : ''})`;
    case 'input_requested':
      return (
        `waiting for a person (${e.request.kind} of ` +
        (e.request.decision ? clip(actionText(e.request.decision.action)) : 'the model call') +
        `; reply to ${e.resultId})`
      );
    case 'input_received':
      return `reply ${e.kind} to ${e.resultId}`;
    case 'run_ended':
      return (
        `run ended: ${e.stopReason} after ${plural(e.steps, 'step')}, ${plural(e.validActions, 'valid action')}` +
        (e.finalAnswer === null ? '' : `; answer: ${clip(e.finalAnswer)}`)
      );
    case 'warning':
      return `warning ${e.code}: ${clip(e.message)}`;
  }
}

function actionText(action: Action): string {
  return action.kind === 'tool_call'
    ? `${action.name}(${JSON.stringify(action.arguments) ?? ''})`
    : `code: ${action.source}`;
}

function clip(text: string, max: number): string {
  const folded = String(text).replace(/\s+/g, ' ').trim();
  return folded.length <= max ? folded : `${folded.slice(0, max - 1)}…`;
}

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** The optional hooks of an {@link EventSink} besides `deliver`: what a sink that wraps another must pass on. */
export type SinkHooks = Pick<EventSink, 'traceparent' | 'withMessages' | 'settled'>;

/**
 * The optional hooks of `inner` (a tracing sink's `traceparent`, `withMessages` and `settled`), bound
 * to it, for a sink that wraps another and delivers each event on to it: without them a wrapped
 * OpenTelemetry sink would lose its trace across drivers and never end a paused run's span.
 */
export function sinkHooks(inner: EventSink | undefined): SinkHooks {
  if (inner === undefined) return {};
  const traceparent = readSinkHook(inner, 'traceparent');
  const settled = readSinkHook(inner, 'settled');
  return {
    ...(typeof traceparent === 'function' ? { traceparent: (runId: string) => traceparent.call(inner, runId) } : {}),
    ...(readSinkHook(inner, 'withMessages') === true ? { withMessages: true } : {}),
    ...(typeof settled === 'function' ? { settled: (runId, outcome) => settled.call(inner, runId, outcome) } : {}),
  } satisfies SinkHooks;
}

/** One of a sink's optional hooks as the run reads it: a getter that throws reads as no hook (the sink's affair). */
export function readSinkHook<K extends keyof SinkHooks>(sink: EventSink, key: K): EventSink[K] | undefined {
  try {
    return sink[key];
  } catch {
    return undefined;
  }
}
