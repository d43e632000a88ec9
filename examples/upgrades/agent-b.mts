// Version B of the refund agent: one tool more (lookup_order) and a new system prompt.
import { defineAgent, jsonActionInterpreter, silentSink, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from 'polyloop';
import type { ToolSpec } from 'polyloop';
import { FileStore } from 'polyloop/node';
import { model, refund } from './shared.mts';

const lookupOrder: ToolSpec = {
  name: 'lookup_order', description: 'What an order cost and when it was paid.', replayPolicy: 'safe',
  parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  handler: async ({ order }) => `order ${String(order)}: 30.00 EUR, paid 2025-03-02`,
};

const tools = ToolRegistry.of([refund, lookupOrder]);
export const agent = defineAgent({
  model, interpreter: jsonActionInterpreter(), store: new FileStore({ dir: '.polyloop-upgrades' }),
  events: silentSink(), syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
  defaults: {
    tools, executor: tools.executor(),
    context: { run: [{ role: 'system', content: [{ type: 'text', text: 'You issue refunds. Look the order up first. Reply with JSON: {"tool": name, "args": {...}} or {"final": answer}.' }] }] },
    budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
    injections: {}, modelBinding: {}, modelReplayPolicy: 'safe', observationTemplate: '{observation}',
    toolRenderStyle: 'none', cancelGraceMs: 2_000,
  },
});
