/**
 * A Worker whose runs are traced by `otelSink` from workerd (docs/observability.md#cloudflare-workers):
 * one Durable Object per run, its SQLite storage the run's store, every span sent to an
 * OpenTelemetry collector over OTLP/HTTP by `@opentelemetry/exporter-trace-otlp-http` (bundled for
 * the browser, it posts with `fetch`).
 *
 *   POST /runs/:id               body: the goal      → the run starts, and pauses for an approval
 *   POST /runs/:id/approve       body: the resultId  → a second driver carries the approval out
 *
 * Each request is a driver with its own provider, as a fresh isolate has: the second driver's
 * `invoke_agent` span joins the first's trace and links to it, because the run's log keeps the
 * first span's context. Vars: `OTLP_TRACES_URL` (the collector's `/v1/traces` URL).
 */
import { DurableObject } from 'cloudflare:workers';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '@opentelemetry/api';
import {
  defineAgent,
  jsonActionInterpreter,
  resume,
  run,
  STANDARD_SYNTHETIC_OBSERVATIONS,
  ToolRegistry,
} from '../../src/core/index.ts';
import type { ModelCaller, RunResult, RunStore } from '../../src/core/index.ts';
import { otelSink } from '../../src/otel/index.ts';
import { DurableObjectStore } from '../../src/platform-workers/index.ts';

type Env = { readonly RUNS: DurableObjectNamespace<TracedRun>; readonly OTLP_TRACES_URL: string };

const city = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const;
const tools = ToolRegistry.of([
  {
    name: 'weather',
    description: "A city's weather.",
    parameters: city,
    replayPolicy: 'safe',
    handler: async (a) => `rain in ${String(a['city'])}`,
  },
  {
    name: 'note',
    description: 'Write a note for the team (must not repeat).',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    replayPolicy: 'never',
    needsApproval: true,
    handler: async (a) => `noted: ${String(a['text'])}`,
  },
]);

// A stand-in for a model, so this runs offline (an OpenAI or Anthropic caller in practice).
const REPLIES = [
  { tool: 'weather', args: { city: 'Oslo' } },
  { tool: 'note', args: { text: 'Umbrellas for the Oslo trip.' } },
  { final: 'It rains in Oslo; the team has a note.' },
];
const model: ModelCaller = {
  params: { model: 'stand-in-1' },
  async call({ callSeq }) {
    const text = JSON.stringify(REPLIES[callSeq]);
    return { callId: `local-${callSeq}`, text, reasoning: null, usage: { inputTokens: 120, outputTokens: 20 } };
  },
};

function agentOf(store: RunStore, tracer: Tracer) {
  return defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store,
    events: otelSink({ tracer }),
    syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
    defaults: {
      tools,
      executor: tools.executor(),
      context: { run: [] },
      budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: 'safe',
      observationTemplate: '{observation}',
      toolRenderStyle: 'none',
      cancelGraceMs: 2_000,
    },
  });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const m = /^\/runs\/([\w-]+)(?:\/approve)?$/.exec(new URL(request.url).pathname);
    if (request.method !== 'POST' || m === null) return new Response('not found', { status: 404 });
    return env.RUNS.get(env.RUNS.idFromName(m[1] as string)).fetch(request);
  },
};

/** One run: its log in this object's storage. */
export class TracedRun extends DurableObject<Env> {
  readonly #store = new DurableObjectStore(this.ctx.storage);

  override async fetch(request: Request): Promise<Response> {
    const [, , runId = '', approve] = new URL(request.url).pathname.split('/');
    const body = await request.text();
    // This driver's provider: a SimpleSpanProcessor sends each span as it ends.
    const exporter = new OTLPTraceExporter({ url: this.env.OTLP_TRACES_URL });
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const agent = agentOf(this.#store, provider.getTracer('polyloop-worker'));
    let result: RunResult;
    try {
      result =
        approve === 'approve'
          ? await resume(agent, runId, { input: { kind: 'approve', resultId: body } })
          : await run(agent, { runId, goal: body });
    } finally {
      // The spans leave before the response does: nothing of this driver is lost when the object sleeps.
      await provider.forceFlush();
    }
    const { stopReason, finalAnswer, pending } = result;
    return Response.json({ stopReason, finalAnswer, pending: pending?.resultId ?? null });
  }
}
