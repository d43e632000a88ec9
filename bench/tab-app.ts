/**
 * The tab app whose bundle `bench/bundle.ts` measures as `tab`: what a browser page that runs an
 * agent with a zod tool on IndexedDB imports and calls, nothing more, so that tree-shaking keeps
 * what such an app keeps. Bundled only, never run.
 * @module
 */
import * as z from 'zod';
import { defineAgent, jsonActionInterpreter, resume, run, ToolRegistry } from '../src/core/index.ts';
import type { ModelCaller } from '../src/core/index.ts';
import { IndexedDBStore } from '../src/platform-web/index.ts';
import { defineTool } from '../src/zod/index.ts';

const add = defineTool({
  name: 'add',
  description: 'Add two integers.',
  replayPolicy: 'safe',
  schema: z.object({ a: z.number().int(), b: z.number().int() }),
  handler: async ({ a, b }) => String(a + b),
});
const tools = ToolRegistry.of([add]);

const model: ModelCaller = {
  params: { model: 'tab-app' },
  async call({ callSeq }) {
    const reply = callSeq === 0 ? { tool: 'add', args: { a: 2, b: 40 } } : { final: 'done' };
    return { callId: `tab-${callSeq}`, text: JSON.stringify(reply), reasoning: null };
  },
};

const agent = defineAgent({
  model,
  interpreter: jsonActionInterpreter(),
  store: new IndexedDBStore({ dbName: 'tab-app' }),
  events: { params: { sink: 'tab-app' }, deliver: () => {} },
  syntheticObservations: { notExecuted: '(not run)', envError: '(the tool failed)' },
  defaults: {
    tools,
    executor: tools.executor(),
    budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 2_000,
  },
});

/** Start a run, or carry on the one a reload interrupted. */
export async function start(runId: string, goal: string | null): Promise<string> {
  const result = goal === null ? await resume(agent, runId) : await run(agent, { runId, goal });
  return result.stopReason;
}
