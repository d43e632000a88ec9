/**
 * The span tree `polyloop/otel` makes, the same in every runtime (docs/observability.md), in Web
 * APIs only so Node, workerd and Chromium run it: a three-step run (a scripted model reporting
 * usage and finish reasons, a lookup, a deploy that fails with `env_error`, the answer) traced by
 * `otelSink` into the real OpenTelemetry SDK (`BasicTracerProvider`, `SimpleSpanProcessor`,
 * `InMemorySpanExporter`), normalised to what does not depend on the runtime or the clock (names,
 * kinds, nesting, attributes, statuses, links) and compared with one tree written out below; then
 * the same run crashed on its store after the deploy ran and resumed by the same sink: one trace,
 * the second driver's `invoke_agent` under the first and linked to it.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { AttributeValue, Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
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

const RUN_ID = 'otel-tree-1';
const MODEL = 'weather-model';

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

/** The agent on `store` with `events`, and its request; tool executions go to `effects`. */
function weatherAgent(store: RunStore, events: EventSink, effects: string[]) {
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
export function inMemoryTracing(exporter = new InMemorySpanExporter()): {
  tracer: Tracer;
  exporter: InMemorySpanExporter;
} {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('polyloop-otel-tree'), exporter };
}

/** What the law traces with: `otelSink`, or (to show the law can fail) a stand-in. */
export type MakeSink = (tracer: Tracer) => EventSink;

/** What {@link otelTrees} runs over. */
export type OtelTreeOptions = {
  /** A fresh store of the runtime's kind. */
  readonly make: MakeStore;
  /** Default `otelSink({ tracer })`. */
  readonly sink?: MakeSink;
};

/**
 * The trees of the three runs (uninterrupted; crashed and carried on by the same sink; crashed and
 * resumed by a new process), and every problem found beside them (empty when the law holds).
 */
export type OtelTrees = {
  readonly plain: readonly SpanShape[];
  readonly crashed: readonly SpanShape[];
  readonly killed: readonly SpanShape[];
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
const NOT_EXPORTED: SpanShape = { name: '', kind: '', status: { code: '' }, attributes: {}, links: [], children: [] };

const messageOf = (s: ReadableSpan): { message?: string } =>
  s.status.message === undefined || s.status.message === '' ? {} : { message: s.status.message };

/** The span's attributes, keys in order (so a tree prints the same whatever order they were set in). */
const sortedAttributes = (s: ReadableSpan): Record<string, AttributeValue | undefined> =>
  Object.fromEntries(Object.entries(s.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

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

/** The run traced from start to end on a fresh store: its tree, its result, the store methods it wrote with. */
async function plainRun(
  opts: OtelTreeOptions,
  problems: string[],
): Promise<{ tree: SpanShape[]; result: RunResult; writes: readonly string[] }> {
  const { tracer, exporter } = inMemoryTracing();
  const sink = (opts.sink ?? ((t) => otelSink({ tracer: t })))(tracer);
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
  const makeSink = opts.sink ?? ((t) => otelSink({ tracer: t }));
  const { tracer, exporter } = inMemoryTracing();
  const sink = makeSink(tracer);
  const store = await opts.make();
  const effects: string[] = [];
  const faulty = faultyStore(store, { crashAfterWrites: want.writes.lastIndexOf('step') });
  const first = weatherAgent(faulty, sink, effects);
  const crashed = await run(first.agent, first.request).then(
    () => false,
    () => true,
  );
  if (!crashed || effects.join() !== 'lookup:Paris,deploy:forecast')
    problems.push(`the run did not crash after the deploy ran: it ran ${JSON.stringify(effects)}`);
  const second = weatherAgent(store, same ? sink : makeSink(inMemoryTracing(exporter).tracer), effects);
  const result = await resume(second.agent, second.request);
  if (JSON.stringify(timeless(result.trajectory)) !== JSON.stringify(timeless(want.result.trajectory)))
    problems.push('the resumed run ended with another trajectory than the uninterrupted one');
  if (result.eventDeliveryFailures !== 0) problems.push(`${result.eventDeliveryFailures} events failed to deliver`);
  return spanTree(exporter.getFinishedSpans(), problems);
}

/** The three runs on fresh stores of one kind: their trees, to compare with {@link EXPECTED}. */
export async function otelTrees(opts: OtelTreeOptions): Promise<OtelTrees> {
  const problems: string[] = [];
  const plain = await plainRun(opts, problems);
  const crashed = await crashedRun(opts, plain, true, problems);
  const killed = await crashedRun(opts, plain, false, problems);
  return { plain: plain.tree, crashed, killed, problems };
}

// The expected trees, written out: what the sink must make of these runs in every runtime.

const RUN = { 'gen_ai.conversation.id': RUN_ID } as const;
const UNSET = { code: 'UNSET' } as const;
const ERROR = { code: 'ERROR' } as const;

/** A model call's span: step, tokens in and out, why the model stopped, its response id. */
function chat(step: number, tokens: readonly [number, number], finish: string): SpanShape {
  const attributes = {
    ...RUN,
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': MODEL,
    'gen_ai.response.finish_reasons': [finish],
    'gen_ai.response.id': `resp-${step}`,
    'gen_ai.usage.input_tokens': tokens[0],
    'gen_ai.usage.output_tokens': tokens[1],
    'polyloop.replay_policy': 'safe',
    'polyloop.replayed': false,
    'polyloop.step.index': step,
  };
  return { name: `chat ${MODEL}`, kind: 'CLIENT', status: UNSET, attributes, links: [], children: [] };
}

/** A tool's span: the lookup that worked, or the deploy that failed (`env_error`), run again when `replayed`. */
function tool(name: 'lookup' | 'deploy', step: number, replayed = false): SpanShape {
  const failed = name === 'deploy';
  const attributes = {
    ...(failed ? { 'error.type': 'env_error' } : {}),
    ...RUN,
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.call.id': `call-${name}`,
    'gen_ai.tool.name': name,
    'polyloop.action.status': failed ? 'env_error' : 'executed',
    'polyloop.replay_policy': 'safe',
    'polyloop.replayed': replayed,
    'polyloop.step.index': step,
  };
  const status = failed ? ERROR : UNSET;
  return { name: `execute_tool ${name}`, kind: 'INTERNAL', status, attributes, links: [], children: [] };
}

/** What the first driver did before the crash, and the uninterrupted run alike: three steps, one span each call. */
const FIRST_DRIVER: readonly SpanShape[] = [
  chat(0, [120, 12], 'tool_calls'),
  tool('lookup', 0),
  chat(1, [150, 8], 'length'),
  chat(2, [210, 15], 'tool_calls'),
  tool('deploy', 2),
];

const AGENT = { ...RUN, 'gen_ai.operation.name': 'invoke_agent' } as const;

/** The run that ended under the driver that resumed it: from step 2, the deploy replayed and failed again. */
const resumedAgent = (link: string): SpanShape => ({
  name: 'invoke_agent',
  kind: 'INTERNAL',
  status: ERROR,
  attributes: {
    'error.type': 'env_error',
    ...AGENT,
    'polyloop.run.from_step': 2,
    'polyloop.run.resolution': 'replay_action',
    'polyloop.run.resumed': true,
    'polyloop.run.steps': 3,
    'polyloop.run.stop_reason': 'env_error',
  },
  links: [link],
  children: [tool('deploy', 2, true)],
});

/** The three trees every runtime must make (see {@link otelTrees}). */
export const EXPECTED: Omit<OtelTrees, 'problems'> = {
  plain: [
    {
      name: 'invoke_agent',
      kind: 'INTERNAL',
      status: ERROR,
      attributes: {
        'error.type': 'env_error',
        ...AGENT,
        'gen_ai.usage.input_tokens': 480,
        'gen_ai.usage.output_tokens': 35,
        'polyloop.run.from_step': 0,
        'polyloop.run.resumed': false,
        'polyloop.run.steps': 3,
        'polyloop.run.stop_reason': 'env_error',
      },
      links: [],
      children: FIRST_DRIVER,
    },
  ],
  // The first driver's span, left open by the crash, is ended by the sink when the run is taken over.
  crashed: [
    {
      name: 'invoke_agent',
      kind: 'INTERNAL',
      status: UNSET,
      attributes: {
        ...AGENT,
        'gen_ai.usage.input_tokens': 480,
        'gen_ai.usage.output_tokens': 35,
        'polyloop.interrupted': true,
        'polyloop.run.from_step': 0,
        'polyloop.run.resumed': false,
      },
      links: [],
      children: [...FIRST_DRIVER, resumedAgent('invoke_agent #1')],
    },
  ],
  // The dead process never ended its invoke_agent: its calls and the new driver's span hang under it all the same.
  killed: [{ ...NOT_EXPORTED, name: 'not exported #1', children: [...FIRST_DRIVER, resumedAgent('not exported #1')] }],
};
