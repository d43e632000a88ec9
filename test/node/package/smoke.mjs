// A first agent in a project that installed polyloop from its tarball: every subpath imports
// (polyloop/workers needs workerd's `cloudflare:workers`, polyloop/mcp its optional peer
// @modelcontextprotocol/client and polyloop/otel its optional peer @opentelemetry/api, not installed
// here, so those three are only resolved), then one run.

const out = {};
for (const s of [
  '',
  '/internal',
  '/node',
  '/web',
  '/postgres',
  '/adapters/openai',
  '/adapters/anthropic',
  '/adapters/ai-sdk',
  '/zod',
  '/testing',
  '/chat',
]) {
  out[`polyloop${s}`] = Object.keys(await import(`polyloop${s}`)).length;
}
out['polyloop/workers'] = import.meta.resolve('polyloop/workers').endsWith('/dist/platform-workers/index.js')
  ? 'resolved'
  : 'wrong';
out['polyloop/mcp'] = import.meta.resolve('polyloop/mcp').endsWith('/dist/mcp/index.js') ? 'resolved' : 'wrong';
out['polyloop/otel'] = import.meta.resolve('polyloop/otel').endsWith('/dist/otel/index.js') ? 'resolved' : 'wrong';

const { defineAgent, InMemoryStore, run, ToolRegistry } = await import('polyloop');
const { jsonActionInterpreter, scriptedModel } = await import('polyloop/testing');
const tools = ToolRegistry.of([
  {
    name: 'add',
    description: 'Add two integers.',
    replayPolicy: 'safe',
    parameters: {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      required: ['a', 'b'],
    },
    handler: async ({ a, b }) => String(Number(a) + Number(b)),
  },
]);
const agent = defineAgent({
  model: scriptedModel(['{"tool":"add","args":{"a":2,"b":40}}', '{"final":"42"}']),
  interpreter: jsonActionInterpreter(),
  store: new InMemoryStore(),
  events: { params: {}, deliver: () => {} },
  syntheticObservations: { notExecuted: 'That action was not executed.', envError: 'The environment failed.' },
});
const result = await run(agent, {
  runId: 'smoke-1',
  tools,
  executor: tools.executor(),
  toolRenderStyle: 'none',
  cancelGraceMs: 2_000,
  budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
  context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'What is 2 + 40?' }] }] },
  injections: {},
  modelBinding: {},
  modelReplayPolicy: 'safe',
  observationTemplate: '{observation}',
});
console.log(JSON.stringify({ imports: out, stopReason: result.stopReason, finalAnswer: result.finalAnswer }));
