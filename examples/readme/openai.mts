import { consoleSink, defineAgent, run, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from 'polyloop';
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
  defaults: {
    tools, executor: tools.executor(), budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
    injections: {}, modelBinding: {}, modelReplayPolicy: 'safe', observationTemplate: '{observation}',
    toolRenderStyle: 'none', cancelGraceMs: 2_000,
  },
});
const result = await run(agent, { runId: 'sum-1', goal: 'What is 2 + 40?' }); // after a crash: await resume(agent, 'sum-1')
console.log(result.stopReason, result.finalAnswer, result.error); // e.g. model_error null ModelCallError: openai: … (status 401, …)
