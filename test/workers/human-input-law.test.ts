/**
 * The human-input law (docs/design/laws.md#human-input-across-crashes) over DurableObjectStore in
 * workerd: a run with an approval, a denial, an answer and a never action, crashed at every write
 * (a fresh Durable Object per case) and resumed with the same replies, ends as the uninterrupted
 * run; each never action runs exactly once when approved or settled, the denied one never.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { defineAgent, readRunLog, resume, run, ToolRegistry } from '../../src/core/index.ts';
import type { InputReply, RunRequest, RunStore, ToolSpec } from '../../src/core/index.ts';
import { DurableObjectStore } from '../../src/platform-workers/index.ts';
import { collectingSink, crashAtEveryWrite, jsonActionInterpreter, scriptedModel } from '../../src/testing/index.ts';
import { storeIn } from './store-in-object.ts';

/** send (never, needs approval) approved; ask (a person answers); send again, denied; charge (never, no approval); final. */
const SCRIPT = [
  '{"tool":"send","args":{"to":"ops"}}',
  '{"tool":"ask","args":{"q":"Which colour?"}}',
  '{"tool":"send","args":{"to":"everyone"}}',
  '{"tool":"charge","args":{"cents":500}}',
  '{"final":"done"}',
];

function tools(effects: () => string[]): ToolSpec[] {
  const obj = (props: Record<string, { type: string }>): ToolSpec['parameters'] => ({
    type: 'object',
    properties: props,
    required: Object.keys(props),
    additionalProperties: false,
  });
  return [
    {
      name: 'send',
      description: 'Send a message (must not repeat).',
      parameters: obj({ to: { type: 'string' } }),
      replayPolicy: 'never',
      needsApproval: true,
      handler: async (args) => {
        effects().push(`send:${String(args['to'])}`);
        return `sent to ${String(args['to'])}`;
      },
    },
    { name: 'ask', description: 'Ask the person.', parameters: obj({ q: { type: 'string' } }), answeredBy: 'human' },
    {
      name: 'charge',
      description: 'Charge a card (must not repeat).',
      parameters: obj({ cents: { type: 'integer' } }),
      replayPolicy: 'never',
      handler: async (args) => {
        effects().push(`charge:${String(args['cents'])}`);
        return `charged ${String(args['cents'])}`;
      },
    },
  ];
}

function setup(
  store: RunStore,
  effects: () => string[],
): { agent: ReturnType<typeof defineAgent>; request: RunRequest } {
  const registry = ToolRegistry.of(tools(effects));
  const agent = defineAgent({
    model: scriptedModel(SCRIPT),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'not executed', envError: 'environment failed' },
  });
  const request: RunRequest = {
    runId: 'law-1',
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
    executor: registry.executor(),
    tools: registry,
    context: {
      run: [{ role: 'system', content: [{ type: 'text', text: 'Do as told.' }] }],
      goal: [{ role: 'user', content: [{ type: 'text', text: 'Send, ask, send, charge.' }] }],
    },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation: {observation}',
    toolRenderStyle: 'json',
    cancelGraceMs: 1000,
  };
  return { agent, request };
}

describe('the human-input law over DurableObjectStore (workerd, a fresh object per case)', () => {
  it('an approval, an answer, a denial and a never action crashed at every write and answered alike end as the uninterrupted run; never actions exactly once, the denied one never', async () => {
    // One outside world per case: each case starts with a fresh store (and object).
    const worlds: string[][] = [];
    const world = (): string[] => worlds.at(-1) as string[];
    const replies: string[] = [];
    const report = await crashAtEveryWrite({
      store: () => (worlds.push([]), storeIn(env.RUNS.get(env.RUNS.newUniqueId()))),
      setup: (store) => setup(store, world),
      reply: (p): InputReply => {
        replies.push(p.kind);
        const action = p.decision?.action;
        const args = (action?.kind === 'tool_call' ? action.arguments : {}) as Record<string, unknown>;
        if (p.kind === 'answer') return { kind: 'answer', resultId: p.resultId, text: 'Blue.' };
        if (p.kind === 'settle') {
          // Settled from the outside world: did the side effect happen before the crash?
          const effect =
            action?.kind === 'tool_call' && action.name === 'charge'
              ? `charge:${String(args['cents'])}`
              : `send:${String(args['to'])}`;
          if (!world().includes(effect)) return { kind: 'retry', resultId: p.resultId };
          const observation = effect.startsWith('charge:')
            ? `charged ${String(args['cents'])}`
            : `sent to ${String(args['to'])}`;
          return { kind: 'executed', resultId: p.resultId, observation };
        }
        return args['to'] === 'everyone'
          ? { kind: 'deny', resultId: p.resultId, reason: 'Not to everyone.' }
          : { kind: 'approve', resultId: p.resultId };
      },
    });
    expect(report.failures).toEqual([]);
    expect(report.reference.stopReason).toBe('final_answer');
    expect(report.reference.trajectory.map((s) => s.actionStatus)).toEqual([
      'executed',
      'executed',
      'denied',
      'executed',
      null,
    ]);
    expect(report.cases).toHaveLength(report.writes * 2);
    expect(report.writes).toBeGreaterThan(20);
    // Some crashes left a never action in flight: they were settled, not ended in_flight_unknown.
    expect(replies).toContain('settle');
    expect(worlds).toHaveLength(report.cases.length + 1);
    for (const [i, effects] of worlds.entries()) {
      expect(
        effects.filter((e) => e === 'send:ops'),
        `world ${i}`,
      ).toHaveLength(1);
      expect(
        effects.filter((e) => e === 'charge:500'),
        `world ${i}`,
      ).toHaveLength(1);
      expect(
        effects.filter((e) => e === 'send:everyone'),
        `world ${i}`,
      ).toHaveLength(0);
    }
  }, 120_000);

  it('writes the input request and the reply as records a Durable Object reads back as awaiting, then as received', async () => {
    const effects: string[] = [];
    await runInDurableObject(env.RUNS.get(env.RUNS.newUniqueId()), async (_o, state) => {
      const store = new DurableObjectStore(state.storage);
      const s0 = setup(store, () => effects);
      const first = await run(s0.agent, s0.request);
      expect(first.pending).toMatchObject({ kind: 'approval', resultId: 's0.input' });
      expect(readRunLog(await store.readLog('law-1'))).toMatchObject({
        state: 'awaiting_input',
        pending: first.pending,
      });
      const s = setup(store, () => effects);
      const second = await resume(s.agent, s.request, { input: { kind: 'approve', resultId: 's0.input' } });
      expect(second.pending).toMatchObject({ kind: 'answer', resultId: 's1.input' });
      const kinds = (await store.readLog('law-1')).map((r) => r.kind);
      // The resume that carries the approval out marks where it took over, before the reply.
      expect(kinds.slice(0, 6)).toEqual(['run_started', 'intent', 'result', 'input_request', 'resumed', 'input']);
    });
    expect(effects).toEqual(['send:ops']);
  });
});
