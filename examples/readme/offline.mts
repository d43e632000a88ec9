import { consoleSink, defineAgent, InMemoryStore, jsonActionInterpreter, run, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from 'polyloop';
import type { ModelCaller } from 'polyloop';

const tools = ToolRegistry.of([{
  name: 'add', description: 'Add two integers.', replayPolicy: 'safe',
  parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
  handler: async ({ a, b }) => String(Number(a) + Number(b)),
}]);

// A stand-in for a model, so this runs offline: it asks for the tool, then answers with what it saw.
const model: ModelCaller = {
  params: { model: 'add-then-answer' },
  async call({ messages, callSeq }) {
    const last = messages.at(-1)?.content.at(-1);
    const seen = last?.type === 'text' ? last.text : '';
    const reply = callSeq === 0 ? { tool: 'add', args: { a: 2, b: 40 } } : { final: `2 + 40 = ${seen}` };
    return { callId: `local-${callSeq}`, text: JSON.stringify(reply), reasoning: null };
  },
};

const agent = defineAgent({
  model,
  interpreter: jsonActionInterpreter(), // reads {"tool": name, "args": {…}} or {"final": answer}
  store: new InMemoryStore(),           // or new FileStore({ dir: './runs' }) from 'polyloop/node'
  events: consoleSink(),                // one line per event; silentSink() prints nothing
  syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
  defaults: {                           // what every run of this agent shares; a run's request may give its own
    tools, executor: tools.executor(),
    context: { run: [{ role: 'system', content: [{ type: 'text', text: 'Reply with JSON: {"tool": name, "args": {...}} or {"final": answer}.' }] }] },
    budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
    injections: {}, modelBinding: {}, modelReplayPolicy: 'safe', observationTemplate: '{observation}',
    toolRenderStyle: 'none', cancelGraceMs: 2_000,
  },
});
const result = await run(agent, { runId: 'sum-1', goal: 'What is 2 + 40?' });
console.log(result.stopReason, result.finalAnswer, result.error); // final_answer 2 + 40 = 42 null
