// Two upgrades to think about before a deploy, each on a run that waits for approval of a refund
// after two look-ups: a budget lowered below what the run has used, and the refund's schema changed.
import { defineAgent, InMemoryStore, jsonActionInterpreter, resume, run, silentSink, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from 'polyloop';
import type { ModelCaller, ToolSpec } from 'polyloop';
import { refund } from './shared.mts';

const lookupOrder: ToolSpec = {
  name: 'lookup_order', description: 'What an order cost.', replayPolicy: 'safe',
  parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  handler: async ({ order }) => `order ${String(order)}: 30.00 EUR`,
};
// A stand-in for a model: two look-ups, the refund, then an answer.
const model: ModelCaller = {
  params: { model: 'stand-in' },
  async call({ callSeq }) {
    const script = [{ tool: 'lookup_order', args: { order: 'A-7' } }, { tool: 'lookup_order', args: { order: 'A-7' } }, { tool: 'refund', args: { order: 'A-7' } }];
    return { callId: `c${callSeq}`, text: JSON.stringify(script[callSeq] ?? { final: 'done' }), reasoning: null };
  },
};
const store = new InMemoryStore();
function version(tools: readonly ToolSpec[], maxSteps: number) {
  const registry = ToolRegistry.of(tools);
  return defineAgent({
    model, interpreter: jsonActionInterpreter(), store, events: silentSink(), syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
    defaults: {
      tools: registry, executor: registry.executor(), budget: { maxSteps, maxValidActions: 10, maxContextChars: 50_000 },
      injections: {}, modelBinding: {}, modelReplayPolicy: 'safe', observationTemplate: '{observation}', toolRenderStyle: 'none', cancelGraceMs: 2_000,
    },
  });
}
const before = version([refund, lookupOrder], 10);

// 1. maxSteps lowered from 10 to 2, below the 2 steps taken plus the one waiting.
const lowered = version([refund, lookupOrder], 2);
const waiting = await run(before, { runId: 'budget', goal: 'Refund order A-7.' });
const approve = { kind: 'approve', resultId: waiting.pending!.resultId } as const;
const ended = await resume(lowered, 'budget', { upgrade: { reason: 'cheaper runs' }, input: approve });
console.log(`budget: ${ended.stopReason} after ${ended.steps} steps; step 2 ${ended.trajectory[2]?.actionStatus}: ${ended.trajectory[2]?.observation}`);

// 2. refund now also requires an amount: the approved call, recorded without one, no longer validates.
const amount = { ...refund, parameters: { type: 'object', properties: { order: { type: 'string' }, amount: { type: 'number' } }, required: ['order', 'amount'] } };
const stricter = version([amount, lookupOrder], 10);
const waiting2 = await run(before, { runId: 'schema', goal: 'Refund order A-7.' });
const done = await resume(stricter, 'schema', { upgrade: { reason: 'refunds name their amount' }, input: { kind: 'approve', resultId: waiting2.pending!.resultId } });
console.log(`schema: ${done.stopReason}; step 2 ${done.trajectory[2]?.actionStatus}: ${done.trajectory[2]?.observation}`);
