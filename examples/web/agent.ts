/**
 * The demo agent of the web example: a deterministic local policy (no network, no API key) that
 * looks up the weather of five cities with a tool that takes visible time, then answers which is
 * warmest. Its replies are a pure function of the messages it is shown, so a resumed run that
 * rebuilds the same history gets the same replies.
 */
import { defineAgent, ToolRegistry } from '../../src/core/index.ts';
import type { AgentDefinition, EventSink, ModelCall, RunRequest, RunStore } from '../../src/core/index.ts';
import { jsonActionInterpreter, scriptedModel, sleep } from '../../src/testing/index.ts';

/** The cities the agent visits, in order. */
export const CITIES = ['Oslo', 'Lisbon', 'Cairo', 'Reykjavik', 'Singapore'] as const;

const TEMPERATURES: Readonly<Record<string, number>> = { Oslo: 4, Lisbon: 19, Cairo: 31, Reykjavik: 2, Singapore: 29 };

/** A made-up but stable temperature per city (no network). */
export function temperatureOf(city: string): number {
  return TEMPERATURES[city] ?? 15;
}

const OBSERVATION = /^Observation:\n(.+): (-?\d+)°C$/;

function observations(call: ModelCall): { city: string; temp: number }[] {
  const seen: { city: string; temp: number }[] = [];
  for (const m of call.messages) {
    if (m.role !== 'user') continue;
    for (const block of m.content) {
      const hit = block.type === 'text' ? OBSERVATION.exec(block.text) : null;
      if (hit) seen.push({ city: hit[1] as string, temp: Number(hit[2]) });
    }
  }
  return seen;
}

/** The policy: the next unvisited city, or the final answer once all are known. */
export function policy(call: ModelCall): string {
  const seen = observations(call);
  const next = CITIES[seen.length];
  if (next !== undefined) return JSON.stringify({ tool: 'weather', args: { city: next } });
  const best = seen.reduce((a, b) => (b.temp > a.temp ? b : a));
  return JSON.stringify({ final: `${best.city} is the warmest at ${best.temp}°C` });
}

/** How long things take, in milliseconds (visible in the page; 0 for quick runs). */
export type Pace = { readonly thinkMs: number; readonly toolMs: number };

/** The demo agent over a store and an event sink. */
export function demoAgent(store: RunStore, events: EventSink, pace: Pace): AgentDefinition {
  return defineAgent({
    model: scriptedModel(policy, { model: 'local-weather-policy', delayMs: pace.thinkMs }),
    interpreter: jsonActionInterpreter(),
    store,
    events,
    syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The weather service failed.' },
  });
}

/** The demo request; `onExecute` is told each time the tool really runs (to show who drives). */
export function demoRequest(runId: string, pace: Pace, onExecute: (city: string) => void): RunRequest {
  const tools = ToolRegistry.of([
    {
      name: 'weather',
      description: 'Current temperature of a city, in °C.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      replayPolicy: 'safe', // a lookup: running it again after a reload is harmless
      handler: async (args, { signal }) => {
        const city = String((args as { city?: unknown }).city);
        onExecute(city);
        await sleep(pace.toolMs, signal);
        return `${city}: ${temperatureOf(city)}°C`;
      },
    },
  ]);
  return {
    runId,
    budget: { maxSteps: 10, maxValidActions: 8, maxContextChars: 20_000 },
    executor: tools.executor(),
    tools,
    context: {
      run: [{ role: 'system', content: [{ type: 'text', text: 'You are a careful weather agent. Reply with JSON actions.' }] }],
      goal: [{ role: 'user', content: [{ type: 'text', text: `Which of ${CITIES.join(', ')} is warmest right now?` }] }],
    },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'markdown',
    cancelGraceMs: 1000,
  };
}
