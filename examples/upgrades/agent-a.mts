// Version A of the refund agent: one tool, and the request fields every run shares as defaults.
import { defineAgent, jsonActionInterpreter, silentSink, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from 'polyloop';
import { FileStore } from 'polyloop/node';
import { model, refund } from './shared.mts';

const tools = ToolRegistry.of([refund]);
export const agent = defineAgent({
  model, interpreter: jsonActionInterpreter(), store: new FileStore({ dir: '.polyloop-upgrades' }),
  events: silentSink(), syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
  defaults: {
    tools, executor: tools.executor(),
    context: { run: [{ role: 'system', content: [{ type: 'text', text: 'You issue refunds. Reply with JSON: {"tool": name, "args": {...}} or {"final": answer}.' }] }] },
    budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
    injections: {}, modelBinding: {}, modelReplayPolicy: 'safe', observationTemplate: '{observation}',
    toolRenderStyle: 'none', cancelGraceMs: 2_000,
  },
});
