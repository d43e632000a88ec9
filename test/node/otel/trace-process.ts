/**
 * A process of the trace-across-a-SIGKILL test (trace-kill.test.ts runs it bundled by esbuild): an
 * agent on a FileStore under `<dir>`, traced by `otelSink` through its own tracer provider, whose
 * spans are appended to `<spans file>` as they start and end (synchronously: a line written
 * before the kill is on disk after it).
 *
 *   node trace-process.mjs <dir> <spans file> start <runId>
 *     `run(agent, { runId })`: looks up a city, then runs `forecast`, which prints `IN_FORECAST`
 *     and waits until the process is killed.
 *   node trace-process.mjs <dir> <spans file> resume <runId>
 *     `resume(agent, runId)`: `forecast` answers at once; prints `RESULT <json>` and exits.
 */
import { writeSync } from 'node:fs';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { defineAgent, jsonActionInterpreter, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { ModelReply } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { scriptedModel } from '../../../src/testing/index.ts';
import { LineProcessor } from './span-lines.ts';

const [dir, spansFile, command, runId] = process.argv.slice(2);
if (!dir || !spansFile || !runId || (command !== 'start' && command !== 'resume'))
  throw new Error('usage: trace-process.ts <dir> <spans file> start|resume <runId>');

const reply = (text: string, n: number): ModelReply => ({
  callId: `resp-${n}`,
  text,
  reasoning: null,
  finishReason: 'stop',
  usage: { inputTokens: 100 + n, outputTokens: 10 + n },
});
const SCRIPT = [
  reply('{"tool":"lookup","args":{"city":"Oslo"}}', 0),
  reply('{"tool":"forecast","args":{"city":"Oslo"}}', 1),
  reply('{"final":"rain tomorrow"}', 2),
];

const city = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const;
const tools = ToolRegistry.of([
  {
    name: 'lookup',
    description: "Today's weather.",
    parameters: city,
    replayPolicy: 'safe',
    handler: async (a) => `rain in ${String(a['city'])}`,
  },
  {
    name: 'forecast',
    description: "Tomorrow's weather (slow).",
    parameters: city,
    replayPolicy: 'safe',
    handler: async () => {
      if (command === 'resume') return 'rain tomorrow';
      writeSync(1, 'IN_FORECAST\n');
      // The slow tool: it never returns in the first process, which is killed here.
      return new Promise<string>(() => setInterval(() => undefined, 60_000));
    },
  },
]);

const provider = new BasicTracerProvider({ spanProcessors: [new LineProcessor(spansFile)] });
const agent = defineAgent({
  model: scriptedModel(SCRIPT, { model: 'weather-1' }),
  interpreter: jsonActionInterpreter(),
  store: new FileStore({ dir }),
  events: otelSink({ tracer: provider.getTracer('trace-process') }),
  syntheticObservations: { notExecuted: 'Not executed.', envError: 'The environment failed.' },
  defaults: {
    tools,
    executor: tools.executor(),
    context: { run: [] },
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 50_000 },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1_000,
  },
});

const result = command === 'start' ? await run(agent, { runId, goal: 'Weather in Oslo?' }) : await resume(agent, runId);
await provider.shutdown();
writeSync(1, `RESULT ${JSON.stringify({ stopReason: result.stopReason, finalAnswer: result.finalAnswer })}\n`);
