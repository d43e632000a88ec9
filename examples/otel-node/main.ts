/**
 * An agent traced with OpenTelemetry, its spans sent to a collector (docs/observability.md):
 *
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 npx tsx examples/otel-node/main.ts
 *
 * The run looks up the weather, asks a person before it writes a note (a `never` tool), and
 * answers. It pauses for the approval; a second driver — here in the same process, in practice
 * whichever process gets the reply, after any number of crashes — carries it on with the reply.
 * Each driver is its own `invoke_agent` span; the second is in the first's trace and links to it,
 * because the run's log keeps the first span's context (`run_started.traceparent`).
 */
import {
  defineAgent,
  InMemoryStore,
  jsonActionInterpreter,
  readRunLog,
  resume,
  run,
  STANDARD_SYNTHETIC_OBSERVATIONS,
  ToolRegistry,
} from '../../src/core/index.ts';
import type { ModelCaller, RunStore } from '../../src/core/index.ts';
import { otelSink } from '../../src/otel/index.ts';
import { startTracing } from './tracing.ts';

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

// A stand-in for a model, so this runs offline; it reports usage as a provider would.
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

/** The agent as each process builds it: the sink is what traces it. */
function agentOf(store: RunStore, tracer: ReturnType<typeof startTracing>['tracer']) {
  return defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store, // a FileStore, a Durable Object's or Postgres's in practice: what a crash leaves behind
    events: otelSink({ tracer }), // captureContent: true would add prompts, replies and tool arguments
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

const tracing = startTracing();
const store = new InMemoryStore();
const runId = 'weather-1';

const paused = await run(agentOf(store, tracing.tracer), { runId, goal: 'Weather in Oslo? Note it for the team.' });
console.log('paused for', paused.pending?.kind, paused.pending?.resultId);

// Later, anywhere: a fresh agent (and sink) carries the run on with the person's reply.
const reply = { kind: 'approve', resultId: paused.pending?.resultId ?? '' } as const;
const done = await resume(agentOf(store, tracing.tracer), runId, { input: reply });
console.log(done.stopReason, done.finalAnswer);

const traceparent = readRunLog(await store.readLog(runId)).started?.traceparent;
console.log('trace', traceparent?.split('-')[1]);
await tracing.shutdown();
