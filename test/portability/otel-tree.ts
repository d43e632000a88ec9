/**
 * The span tree `polyloop/otel` makes, the same in every runtime (docs/observability.md), in Web
 * APIs only so Node, workerd and Chromium run it: a three-step run (a scripted model reporting
 * usage and finish reasons, a lookup, a reply cut off at the token limit, a deploy that fails with
 * `env_error`) traced by `otelSink` into the real OpenTelemetry SDK (`BasicTracerProvider`,
 * `SimpleSpanProcessor`, `InMemorySpanExporter`), normalised to what does not depend on the runtime
 * or the clock (names, kinds, nesting, attributes, statuses, links), without and with content;
 * then the same run crashed on its store after the deploy ran and carried on by the same sink (one
 * trace, the second driver's `invoke_agent` under the first and linked to it), and resumed by a new
 * process; and the run paused for an approval of the deploy and approved by a second driver. The
 * trees every runtime must make are written out in otel-tree-expected.ts.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { AttributeValue, Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { nativeToolInterpreter } from '../../src/adapters/tool-interpreter.ts';
import { defineAgent, resume, run, ToolEnvironmentError, ToolRegistry } from '../../src/core/index.ts';
import type { EventSink, ModelReply, RunRequest, RunResult, RunStore } from '../../src/core/index.ts';
import { faultyStore, scriptedModel } from '../../src/testing/index.ts';
import { otelSink } from '../../src/otel/index.ts';
import { timeless } from './reference.ts';

/** A fresh, empty store of one kind (a Durable Object's may take a moment). */
export type MakeStore = () => RunStore | Promise<RunStore>;

/** One span as the tree shows it: what every runtime must agree on. */
export type SpanShape = {
  readonly name: string;
  readonly kind: string;
  readonly status: { readonly code: string; readonly message?: string };
  readonly attributes: Readonly<Record<string, AttributeValue | undefined>>;
  /** The spans this one links to, by label: `invoke_agent #1`, or `not exported #1` for a span never exported. */
  readonly links: readonly string[];
  readonly children: readonly SpanShape[];
};

/** The run's id, and the model's (its chat spans are named after it). */
export const RUN_ID = 'otel-tree-1';
export const MODEL = 'weather-model';

/**
 * Three steps: a lookup; a reply cut off at the token limit (an invalid step: no action); a deploy
 * that fails with `env_error`, which ends the run. Each reply with usage and a finish reason.
 */
const SCRIPT: ModelReply[] = [
  {
    callId: 'resp-0',
    text: '',
    reasoning: null,
    toolCalls: [{ id: 'call-lookup', name: 'lookup', arguments: { city: 'Paris' } }],
    finishReason: 'tool_calls',
    usage: { inputTokens: 120, outputTokens: 12 },
  },
  {
    callId: 'resp-1',
    text: 'Paris is sunny, so the forecast',
    reasoning: null,
    finishReason: 'length',
    usage: { inputTokens: 150, outputTokens: 8 },
  },
  {
    callId: 'resp-2',
    text: '',
    reasoning: null,
    toolCalls: [{ id: 'call-deploy', name: 'deploy', arguments: { service: 'forecast' } }],
    finishReason: 'tool_calls',
    usage: { inputTokens: 210, outputTokens: 15 },
  },
];

/** The deploy's failure, as its observation and its span's status message say. */
const DEPLOY_DOWN = 'the deploy service is down';

/** The agent on `store` with `events`, and its request; tool executions go to `effects`; `approval`: the deploy waits for a person. */
function weatherAgent(store: RunStore, events: EventSink, effects: string[], approval = false) {
  const registry = ToolRegistry.of([
    {
      name: 'lookup',
      description: 'Look up the weather of a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      replayPolicy: 'safe',
      handler: async (args) => {
        effects.push(`lookup:${String(args['city'])}`);
        return 'sunny';
      },
    },
    {
      name: 'deploy',
      description: 'Deploy a service.',
      parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
      replayPolicy: 'safe',
      ...(approval ? { needsApproval: true } : {}),
      handler: async (args) => {
        effects.push(`deploy:${String(args['service'])}`);
        throw new ToolEnvironmentError(DEPLOY_DOWN);
      },
    },
  ]);
  const agent = defineAgent({
    model: scriptedModel(SCRIPT, { model: MODEL }),
    interpreter: nativeToolInterpreter('otel-tree'),
    store,
    events,
    syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
  });
  const request: RunRequest = {
    runId: RUN_ID,
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
    executor: registry.executor(),
    tools: registry,
    context: {
      run: [{ role: 'system', content: [{ type: 'text', text: 'You report the weather and deploy.' }] }],
      goal: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris, then deploy the forecast.' }] }],
    },
    injections: {},
    modelBinding: { user: 'otel-tree' },
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'markdown',
    cancelGraceMs: 1000,
  };
  return { agent, request };
}

/** The real SDK, exporting every ended span to memory at once. */
export function inMemoryTracing(): { tracer: Tracer; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  return { tracer: tracerTo(exporter), exporter };
}

const tracerTo = (exporter: SpanExporter): Tracer =>
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('polyloop-otel-tree');

/** What reaches `exporter` from a process until `dead()`: a killed process exports nothing more. */
const untilDead = (exporter: SpanExporter, dead: () => boolean): SpanExporter => ({
  export: (spans, done) => (dead() ? done({ code: 0 }) : exporter.export(spans, done)),
  shutdown: () => exporter.shutdown(),
});

/** What the law traces with: `otelSink`, or (to show the law can fail) a stand-in. */
export type MakeSink = (tracer: Tracer, captureContent: boolean) => EventSink;

const realSink: MakeSink = (tracer, captureContent) => otelSink({ tracer, captureContent });

/** What {@link otelTrees} runs over. */
export type OtelTreeOptions = {
  /** A fresh store of the runtime's kind. */
  readonly make: MakeStore;
  /** Default `otelSink({ tracer, captureContent })`. */
  readonly sink?: MakeSink;
};

/**
 * The trees of the runs (uninterrupted, without and with content; crashed and carried on by the
 * same sink; crashed and resumed by a new process; paused for an approval and carried on), and
 * every problem found beside them (empty when the law holds).
 */
export type OtelTrees = {
  readonly plain: readonly SpanShape[];
  readonly content: readonly SpanShape[];
  readonly crashed: readonly SpanShape[];
  readonly killed: readonly SpanShape[];
  readonly paused: readonly SpanShape[];
  readonly problems: string[];
};

const KIND: Record<number, string> = {
  [SpanKind.INTERNAL]: 'INTERNAL',
  [SpanKind.SERVER]: 'SERVER',
  [SpanKind.CLIENT]: 'CLIENT',
  [SpanKind.PRODUCER]: 'PRODUCER',
  [SpanKind.CONSUMER]: 'CONSUMER',
};
const STATUS: Record<number, string> = {
  [SpanStatusCode.UNSET]: 'UNSET',
  [SpanStatusCode.OK]: 'OK',
  [SpanStatusCode.ERROR]: 'ERROR',
};

/** Nanoseconds since the epoch, as a bigint (an `HrTime` pair compared exactly). */
const nanos = ([s, ns]: readonly [number, number]): bigint => BigInt(s) * 1_000_000_000n + BigInt(ns);

/**
 * The spans as trees, children in the order they ended (the order the sink ends them, which no
 * clock decides). Spans are labelled `name #n` in that order; a span whose parent was not exported
 * hangs under a node named `not exported #n`, which links to the same span name too.
 */
export function spanTree(spans: readonly ReadableSpan[], problems: string[]): SpanShape[] {
  const ids = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const labels = new Map<string, string>();
  const count = (name: string): string => {
    const n = [...labels.values()].filter((l) => l.startsWith(`${name} #`)).length + 1;
    return `${name} #${n}`;
  };
  for (const s of spans) labels.set(s.spanContext().spanId, count(s.name));
  // Spans named but not exported (a parent or a link target), numbered in the order they are met.
  const named = spans.flatMap((s) => [s.parentSpanContext?.spanId, ...s.links.map((l) => l.context.spanId)]);
  for (const id of named) if (id !== undefined && !labels.has(id)) labels.set(id, count('not exported'));
  const traces = new Set(spans.map((s) => s.spanContext().traceId));
  if (traces.size > 1) problems.push(`the spans are in ${traces.size} traces, not one`);
  const childrenOf = (parentId: string | undefined): SpanShape[] =>
    spans.filter((s) => s.parentSpanContext?.spanId === parentId).map(shape);
  const shape = (s: ReadableSpan): SpanShape => {
    timeProblem(s, ids, problems);
    return {
      name: s.name,
      kind: KIND[s.kind] ?? String(s.kind),
      status: { code: STATUS[s.status.code] ?? String(s.status.code), ...messageOf(s) },
      attributes: sortedAttributes(s),
      links: s.links.map((l) => labels.get(l.context.spanId) as string),
      children: childrenOf(s.spanContext().spanId),
    };
  };
  const missing = [...labels].filter(([id]) => !ids.has(id));
  const placeholders = missing.map(([id, label]) => ({ ...NOT_EXPORTED, name: label, children: childrenOf(id) }));
  return [...childrenOf(undefined), ...placeholders.filter((p) => p.children.length > 0)];
}

/** Where a span whose parent was never exported hangs (its `name` says which). */
export const NOT_EXPORTED: SpanShape = {
  name: '',
  kind: '',
  status: { code: '' },
  attributes: {},
  links: [],
  children: [],
};

const messageOf = (s: ReadableSpan): { message?: string } =>
  s.status.message === undefined || s.status.message === '' ? {} : { message: s.status.message };

/**
 * The span's attributes, keys in order (so a tree prints the same whatever order they were set in);
 * `gen_ai.input.messages` as one line per message, its role and its parts (the whole prompt,
 * tool descriptions included, is core's to render, not the sink's).
 */
function sortedAttributes(s: ReadableSpan): Record<string, AttributeValue | undefined> {
  const entries = Object.entries(s.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, k === 'gen_ai.input.messages' ? messageLines(v) : v]));
}

type InputMessage = { role: string; parts: { type: string; id?: string; content?: string }[] };

/** `user: text "Weather in Paris."`, `system: text (371 chars)`, `assistant: tool_call call-lookup`. */
function messageLines(value: AttributeValue | undefined): string[] {
  const messages = JSON.parse(String(value)) as InputMessage[];
  const text = (t: string): string => (t.length > 60 ? `(${t.length} chars)` : JSON.stringify(t));
  const part = (p: InputMessage['parts'][number]): string =>
    p.id !== undefined ? `${p.type} ${p.id}` : `${p.type} ${text(p.content ?? '')}`;
  return messages.map((m) => `${m.role}: ${m.parts.map(part).join(', ')}`);
}

/**
 * The clock's part, which the tree leaves out: each span ended, not before it started, and a span
 * its driver opened under its `invoke_agent` lies within it (an `invoke_agent` under an earlier
 * driver's may begin after that one ended: the earlier driver stopped first).
 */
function timeProblem(s: ReadableSpan, ids: ReadonlyMap<string, ReadableSpan>, problems: string[]): void {
  const [start, end] = [nanos(s.startTime), nanos(s.endTime)];
  if (!s.ended || end < start) problems.push(`${s.name} ends before it starts, or never`);
  const parent = s.parentSpanContext === undefined ? undefined : ids.get(s.parentSpanContext.spanId);
  if (parent === undefined || s.name === 'invoke_agent') return;
  if (start < nanos(parent.startTime) || end > nanos(parent.endTime))
    problems.push(`${s.name} (step ${String(s.attributes['polyloop.step.index'])}) is not within its invoke_agent`);
}

/**
 * The run traced from start to end on a fresh store, content captured or not: its tree, its
 * result, the store methods it wrote with.
 */
async function plainRun(
  opts: OtelTreeOptions,
  captureContent: boolean,
  problems: string[],
): Promise<{ tree: SpanShape[]; result: RunResult; writes: readonly string[] }> {
  const { tracer, exporter } = inMemoryTracing();
  const sink = (opts.sink ?? realSink)(tracer, captureContent);
  const counting = faultyStore(await opts.make(), { crashAfterWrites: Number.POSITIVE_INFINITY });
  const { agent, request } = weatherAgent(counting, sink, []);
  const result = await run(agent, request);
  if (result.stopReason !== 'env_error' || result.trajectory.length !== 3)
    problems.push(`the run ended ${result.stopReason} after ${result.trajectory.length} steps`);
  if (result.eventDeliveryFailures !== 0) problems.push(`${result.eventDeliveryFailures} events failed to deliver`);
  const writes = counting.writes.map((w) => w.method);
  return { tree: spanTree(exporter.getFinishedSpans(), problems), result, writes };
}

/**
 * The run crashed on its store after the deploy ran (its step record never written), then resumed
 * on the same store: the deploy (safe to replay) runs again, the run ends as the uninterrupted one.
 * `same`: by the same sink, as a process whose store failed for a moment and that carries the run
 * on; otherwise by a new process (a new SDK and sink exporting to the same collector): what the
 * dead one had not ended is never exported.
 */
async function crashedRun(
  opts: OtelTreeOptions,
  want: { readonly result: RunResult; readonly writes: readonly string[] },
  same: boolean,
  problems: string[],
): Promise<SpanShape[]> {
  const makeSink = opts.sink ?? realSink;
  const store = await opts.make();
  const effects: string[] = [];
  const faulty = faultyStore(store, { crashAfterWrites: want.writes.lastIndexOf('step') });
  const exporter = new InMemorySpanExporter();
  // A killed process's spans stop at the failed write: whatever its sink does after it never leaves it.
  const sink = makeSink(tracerTo(same ? exporter : untilDead(exporter, () => faulty.crashed)), false);
  const first = weatherAgent(faulty, sink, effects);
  const crashed = await run(first.agent, first.request).then(
    () => false,
    () => true,
  );
  if (!crashed || effects.join() !== 'lookup:Paris,deploy:forecast')
    problems.push(`the run did not crash after the deploy ran: it ran ${JSON.stringify(effects)}`);
  const second = weatherAgent(store, same ? sink : makeSink(tracerTo(exporter), false), effects);
  const result = await resume(second.agent, second.request);
  if (JSON.stringify(timeless(result.trajectory)) !== JSON.stringify(timeless(want.result.trajectory)))
    problems.push('the resumed run ended with another trajectory than the uninterrupted one');
  if (result.eventDeliveryFailures !== 0) problems.push(`${result.eventDeliveryFailures} events failed to deliver`);
  return spanTree(exporter.getFinishedSpans(), problems);
}

/**
 * The run paused for a person's approval of the deploy (its first driver's span ends there, naming
 * what the run waits for), then approved by a second driver: the deploy runs and fails.
 */
async function pausedRun(opts: OtelTreeOptions, problems: string[]): Promise<SpanShape[]> {
  const { tracer, exporter } = inMemoryTracing();
  const sink = (opts.sink ?? realSink)(tracer, false);
  const store = await opts.make();
  const first = weatherAgent(store, sink, [], true);
  const paused = await run(first.agent, first.request);
  if (paused.pending?.kind !== 'approval') {
    problems.push(`the run ended ${paused.stopReason}, awaiting no approval`);
    return spanTree(exporter.getFinishedSpans(), problems);
  }
  const second = weatherAgent(store, sink, [], true);
  const input = { kind: 'approve', resultId: paused.pending.resultId } as const;
  const result = await resume(second.agent, second.request, { input });
  if (result.stopReason !== 'env_error') problems.push(`the approved run ended ${result.stopReason}`);
  return spanTree(exporter.getFinishedSpans(), problems);
}

/** The runs on fresh stores of one kind: their trees, to compare with `EXPECTED` (otel-tree-expected.ts). */
export async function otelTrees(opts: OtelTreeOptions): Promise<OtelTrees> {
  const problems: string[] = [];
  const plain = await plainRun(opts, false, problems);
  const content = await plainRun(opts, true, problems);
  const crashed = await crashedRun(opts, plain, true, problems);
  const killed = await crashedRun(opts, plain, false, problems);
  const paused = await pausedRun(opts, problems);
  return { plain: plain.tree, content: content.tree, crashed, killed, paused, problems };
}
