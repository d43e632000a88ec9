/**
 * `polyloop/otel` — OpenTelemetry spans for runs, following the GenAI semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/): an event sink that turns a run's events
 * into an `invoke_agent` span per driver session, a `chat {model}` span per model call and an
 * `execute_tool {name}` span per action. Built on `@opentelemetry/api` alone (an optional peer):
 * bring your own SDK and exporter. Runs in a tab, a Worker and Node; it needs no context manager.
 * Design: docs/decisions/0079-otel-sink.md.
 * @module
 */
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Context, SpanContext, Tracer } from '@opentelemetry/api';
import { InvalidRequestError } from '../core/index.ts';
import type { EventSink, RunEvent, SettledRun } from '../core/index.ts';
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import { RUN_FROM_STEP, RUN_RESUMED } from './attributes.ts';
import { DriverSpans } from './driver-spans.ts';
import { formatTraceparent, parseTraceparent } from './traceparent.ts';

/** Options of {@link otelSink}. */
export type OtelSinkOptions = {
  /** Where the spans go: an `@opentelemetry/api` tracer (`trace.getTracer('my-app')`). */
  readonly tracer: Tracer;
  /**
   * Record content on the spans: the messages each model call is given and its reply, each tool
   * call's arguments and result (`gen_ai.input.messages`, `gen_ai.output.messages`,
   * `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, as JSON strings). False when absent:
   * prompts and tool data often hold what must not leave the application.
   */
  readonly captureContent?: boolean;
};

const KNOWN: OptionKeys<OtelSinkOptions> = { tracer: true, captureContent: true };

/**
 * An {@link EventSink} that records each run as OpenTelemetry spans (params
 * `{ sink: 'otel', captureContent }`). One sink serves any number of runs at once, sub-agents
 * included: a sub-agent whose agent has the same sink nests under the `execute_tool` span of the
 * action that ran it. The first driver's `invoke_agent` span is a child of the caller's active
 * span, if any; its trace context is kept in the run's log, and every later driver's span (a resume
 * after a pause or a crash, in any process) joins that trace and links to it.
 *
 * @example
 * const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
 * const agent = defineAgent({ model, interpreter, store, syntheticObservations,
 *   events: otelSink({ tracer: provider.getTracer('my-app') }) });
 */
export function otelSink(opts: OtelSinkOptions): EventSink {
  checkOptionKeys(opts, KNOWN, 'otelSink');
  const { tracer } = opts;
  if (typeof (tracer as Partial<Tracer> | null | undefined)?.startSpan !== 'function')
    throw new InvalidRequestError(
      [{ path: 'tracer', message: "must be an @opentelemetry/api Tracer (trace.getTracer('my-app'))" }],
      { source: 'otelSink' },
    );
  const captureContent = opts.captureContent ?? false;
  if (typeof captureContent !== 'boolean')
    throw new InvalidRequestError([{ path: 'captureContent', message: 'must be true or false' }], {
      source: 'otelSink',
    });
  const sessions = new Map<string, DriverSpans>();
  const children = new Map<string, Context>();

  /** Open a driver session's `invoke_agent` span; a session of the run still open was left by a driver that died. */
  function open(runId: string, first: SpanContext | null): DriverSpans {
    const parent =
      children.get(runId) ?? (first === null ? context.active() : trace.setSpanContext(ROOT_CONTEXT, first));
    const session = new DriverSpans({ tracer, captureContent, runId, parent, first, children });
    forget(runId);
    sessions.set(runId, session);
    return session;
  }

  function forget(runId: string): void {
    sessions.get(runId)?.interrupt();
    sessions.delete(runId);
  }

  return {
    params: Object.freeze({ sink: 'otel', captureContent }),
    withMessages: captureContent,
    traceparent(runId: string): string | undefined {
      // Asked for fresh runs only, before run_started is written: a write that fails there still
      // leaves a span that says which driver it was.
      const { agent } = open(runId, null);
      agent.setAttributes({ [RUN_RESUMED]: false, [RUN_FROM_STEP]: 0 });
      return formatTraceparent(agent.spanContext());
    },
    deliver(event: RunEvent): void {
      if (event.type === 'run_started') {
        const opened = sessions.get(event.runId);
        const session =
          opened && !opened.started && !event.resumed ? opened : open(event.runId, parseTraceparent(event.traceparent));
        session.onStarted(event);
        return;
      }
      const session = sessions.get(event.runId);
      if (!session) return;
      deliverTo(session, event);
      if (session.ended) sessions.delete(event.runId);
    },
    settled(runId: string, outcome: SettledRun): void {
      try {
        sessions.get(runId)?.onSettled(outcome);
      } finally {
        // Whatever failed while closing, the sink keeps nothing of a driver that settled.
        sessions.delete(runId);
      }
    },
  };
}

function deliverTo(session: DriverSpans, event: RunEvent): void {
  switch (event.type) {
    case 'model_call_started':
      return session.onModelStarted(event);
    case 'model_call_finished':
      return session.onModelFinished(event);
    case 'action_started':
      return session.onActionStarted(event);
    case 'action_finished':
      return session.onActionFinished(event);
    case 'step_finished':
      return session.onStepFinished(event);
    case 'input_requested':
      return session.onInputRequested(event);
    case 'run_ended':
      return session.onEnded(event);
    default:
      return;
  }
}
