/**
 * What the otelSink tests share: a real tracer provider from the OpenTelemetry SDK whose spans land
 * in memory as each ends, an agent on a scripted model whose events go to a given sink, and ways to
 * read a span tree by names.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Context, ContextManager } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { defineAgent, InMemoryStore } from '../../../src/core/index.ts';
import type { AgentDefinition, EventSink, RunRequest, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { jsonActionInterpreter } from '../../../src/testing/index.ts';
import type { Script } from '../../../src/testing/index.ts';
import { harness, makeTools, SYNTHETIC } from '../core/fixtures.ts';

export type Tracing = {
  readonly tracer: ReturnType<BasicTracerProvider['getTracer']>;
  /** The spans that have ended, in the order they ended. */
  spans(): ReadableSpan[];
};

/** A tracer of the SDK whose spans are exported, synchronously, into memory as each ends. */
export function tracing(): Tracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('polyloop-test'), spans: () => exporter.getFinishedSpans() };
}

export type Traced = { readonly agent: AgentDefinition; readonly request: RunRequest; readonly store: RunStore };

/** An agent on `script` (the core tests' tools: add, note, submit) whose events go to `events`. */
export function tracedAgent(
  events: EventSink,
  opts: { script: Script; tools?: ToolSpec[]; store?: RunStore; runId?: string; request?: Partial<RunRequest> },
): Traced {
  const store = opts.store ?? new InMemoryStore();
  const h = harness({
    script: opts.script,
    store,
    tools: opts.tools ?? makeTools(),
    ...(opts.runId === undefined ? {} : { runId: opts.runId }),
    ...(opts.request === undefined ? {} : { request: opts.request }),
  });
  const agent = defineAgent({
    model: h.model,
    interpreter: jsonActionInterpreter(),
    store,
    events,
    syntheticObservations: SYNTHETIC,
  });
  return { agent, request: h.request, store };
}

/** The one span named `name` (fails when there are none or several). */
export function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  if (found.length !== 1) throw new Error(`expected one span ${name}, found ${found.length}`);
  return found[0] as ReadableSpan;
}

/** The span `span`'s parent among `spans`, or null (a root, or a parent not among them). */
export function parentOf(spans: readonly ReadableSpan[], span: ReadableSpan): ReadableSpan | null {
  const id = span.parentSpanContext?.spanId;
  return spans.find((s) => s.spanContext().spanId === id) ?? null;
}

/**
 * The tree as lines, `name` indented under its parent's, children in start order: what a trace
 * viewer draws. A span whose parent is not among `spans` is a root.
 */
export function treeOf(spans: readonly ReadableSpan[]): string[] {
  const lines: string[] = [];
  const byStart = [...spans].sort((a, b) => compareTime(a.startTime, b.startTime));
  const walk = (parent: ReadableSpan | null, depth: number): void => {
    for (const s of byStart)
      if (parentOf(spans, s) === parent) {
        lines.push(`${'  '.repeat(depth)}${s.name}`);
        walk(s, depth + 1);
      }
  };
  walk(null, 0);
  return lines;
}

function compareTime(a: readonly [number, number], b: readonly [number, number]): number {
  return a[0] - b[0] || a[1] - b[1];
}

/**
 * A context manager on AsyncLocalStorage, as an application in Node installs one (the SDK's own,
 * @opentelemetry/context-async-hooks, is not a dependency here): lets a test give the run a caller's
 * active span. The sink itself needs none.
 */
export function installContextManager(): () => void {
  const storage = new AsyncLocalStorage<Context>();
  const manager: ContextManager = {
    active: () => storage.getStore() ?? ROOT_CONTEXT,
    with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.call(thisArg, ...args)),
    bind: (_ctx, target) => target,
    enable() {
      return this;
    },
    disable() {
      storage.disable();
      return this;
    },
  };
  context.setGlobalContextManager(manager);
  return () => context.disable();
}
