import { consoleSink, defineAgent, run, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from 'polyloop';
import type { RunRequest } from 'polyloop';
import { FileStore } from 'polyloop/node';
import { openAIModel, openAIToolInterpreter } from 'polyloop/adapters/openai';

const tools = ToolRegistry.of([{
  name: 'add', description: 'Add two integers.', replayPolicy: 'safe',
  parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
  handler: async ({ a, b }) => String(Number(a) + Number(b)),
}]);
const agent = defineAgent({
  model: openAIModel({ model: 'gpt-4.1-mini', apiKey: process.env.OPENAI_API_KEY }), // no key: refused here, at once
  interpreter: openAIToolInterpreter(),    // native tool calls
  store: new FileStore({ dir: './runs' }), // survives a crash of this process: resume carries on
  events: consoleSink(),
  syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
});
const request: RunRequest = {
  runId: 'sum-1', tools, executor: tools.executor(), toolRenderStyle: 'none', cancelGraceMs: 2_000,
  budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
  context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'What is 2 + 40?' }] }] },
  injections: {}, modelBinding: {}, modelReplayPolicy: 'safe', observationTemplate: '{observation}',
};
const result = await run(agent, request); // after a crash: await resume(agent, request)
console.log(result.stopReason, result.finalAnswer, result.error); // e.g. model_error null ModelCallError: openai: … (status 401, …)
