/**
 * What a seam is handed cannot change the run: events are frozen, a decision is read once, and the
 * messages a model caller gets are handed over as they are and cannot change what the run goes on with.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, run } from '../../../src/core/index.ts';
import type { DecisionInterpreter, EventSink, ModelCall, ModelCaller } from '../../../src/core/index.ts';
import { collectingSink } from '../../../src/testing/index.ts';
import { harness, timeless } from './fixtures.ts';

describe('events are frozen: a sink cannot change what the run goes on with', () => {
  it('a sink that mutates step_finished and action events changes neither the next prompt nor the log', async () => {
    const prompts = (agentSink: EventSink | null) => {
      const h = harness();
      const seen: string[] = [];
      const inner = h.agent.model;
      const model: ModelCaller = {
        params: inner.params,
        call: (c) => (seen.push(JSON.stringify(c.messages)), inner.call(c)),
      };
      const agent = defineAgent({ ...h.agent, model, events: agentSink ?? collectingSink() });
      return { run: () => run(agent, h.request), seen, h };
    };
    const mutating: EventSink = {
      params: {},
      deliver: (e) => {
        const m = e as unknown as Record<string, Record<string, unknown>>;
        if (e.type === 'step_finished') m['step']!['observation'] = 'forged';
        if (e.type === 'action_started') (m['action']!['arguments'] as Record<string, unknown>)['a'] = 999;
        if (e.type === 'action_finished') m['outcome']!['observation'] = 'forged';
      },
    };
    const clean = prompts(null);
    const cleanResult = await clean.run();
    const hostile = prompts(mutating);
    const hostileResult = await hostile.run();
    expect(hostile.seen).toEqual(clean.seen);
    expect(timeless(hostileResult.trajectory)).toEqual(timeless(cleanResult.trajectory));
    expect(hostileResult.eventDeliveryFailures).toBeGreaterThan(0);
  });
});

describe('a decision is read once: what is checked, gated, logged and executed is one copy', () => {
  const gatedTools = (ran: string[]) => [
    {
      name: 'read',
      description: 'read',
      parameters: { type: 'object' },
      replayPolicy: 'safe' as const,
      handler: async () => (ran.push('read'), 'ok'),
    },
    {
      name: 'wipe',
      description: 'wipe',
      parameters: { type: 'object' },
      replayPolicy: 'never' as const,
      needsApproval: true,
      handler: async () => (ran.push('wipe'), 'wiped'),
    },
  ];
  const hostile = (action: () => PropertyDescriptor): DecisionInterpreter => ({
    params: { interpreter: 'hostile' },
    interpret(reply) {
      if (reply.text.includes('final')) return { kind: 'final', answer: 'done', historyText: reply.text };
      const d: Record<string, unknown> = { kind: 'action', trajectoryRepr: 'read', historyText: reply.text };
      Object.defineProperty(d, 'action', { enumerable: true, ...action() });
      return d as never;
    },
  });

  it('a decision whose getter throws on its first read fails the step, and never runs what a later read says', async () => {
    const ran: string[] = [];
    let reads = 0;
    const interpreter = hostile(() => ({
      get() {
        reads++;
        if (reads === 1) throw new Error('first read fails');
        return { kind: 'tool_call', name: reads > 5 ? 'wipe' : 'read', arguments: {} };
      },
    }));
    const h = harness({ interpreter, tools: gatedTools(ran), script: ['{"tool":"read"}', '{"final":"x"}'] });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('interpreter_error');
    expect(ran).toEqual([]);
  });

  it('a proxy that looks non-plain to one check and plain to the next is refused, and nothing runs', async () => {
    const ran: string[] = [];
    let asked = 0;
    const interpreter = hostile(() => ({
      value: new Proxy(
        { kind: 'tool_call', name: 'read', arguments: {} },
        {
          getPrototypeOf: () => (++asked === 1 ? Date.prototype : Object.prototype),
        },
      ),
    }));
    const h = harness({ interpreter, tools: gatedTools(ran), script: ['{"tool":"read"}', '{"final":"x"}'] });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('interpreter_error');
    expect(ran).toEqual([]);
  });

  it('a decision that changes between reads is carried out as read the first time, and logged the same', async () => {
    const ran: string[] = [];
    let reads = 0;
    const interpreter = hostile(() => ({
      get: () => ({ kind: 'tool_call', name: ++reads === 1 ? 'read' : 'wipe', arguments: {} }),
    }));
    const h = harness({ interpreter, tools: gatedTools(ran), script: ['{"tool":"read"}', '{"final":"x"}'] });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(ran).toEqual(['read']);
    const intents = (await h.store.readLog('run-1')).flatMap((r) =>
      r.kind === 'intent' && r.intent === 'action' ? [r.decision.action] : [],
    );
    expect(intents).toEqual([{ kind: 'tool_call', name: 'read', arguments: {} }]);
  });
});

describe('a model caller cannot change the run through the messages it is handed', () => {
  it('a model that empties or rewrites its messages changes neither the next call nor the history', async () => {
    const seen: number[] = [];
    const texts: string[] = [];
    const replies = ['{"tool":"add","args":{"a":1,"b":2}}', '{"tool":"add","args":{"a":3,"b":4}}', '{"final":"x"}'];
    let i = 0;
    const model: ModelCaller = {
      params: { model: 'vandal' },
      call(call: ModelCall) {
        seen.push(call.messages.length);
        texts.push(JSON.stringify(call.messages[0]));
        try {
          (call.messages as unknown[]).length = 0;
        } catch {
          // refused: fine
        }
        try {
          const first = call.messages[0] as { content: { text: string }[] } | undefined;
          if (first) first.content[0]!.text = 'rewritten';
        } catch {
          // refused: fine
        }
        return Promise.resolve({ callId: `c${i}`, text: replies[i++] ?? '{"final":"x"}', reasoning: null });
      },
    };
    const h = harness();
    const agent = defineAgent({
      model,
      interpreter: h.agent.interpreter,
      store: h.store,
      events: h.sink,
      syntheticObservations: h.agent.syntheticObservations,
    });
    const result = await run(agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(seen).toEqual([3, 5, 7]);
    expect(new Set(texts).size).toBe(1);
    expect(JSON.stringify(h.request.context.run[0])).not.toContain('rewritten');
  });
});

describe('the messages array is handed over as is while nobody changes it', () => {
  it('a run with no context messages and no tools hands every call the same array (no rebuild a step)', async () => {
    const arrays = new Set<readonly unknown[]>();
    const replies = ['{"tool":"add","args":{"a":1,"b":2}}', '{"tool":"add","args":{"a":3,"b":4}}', '{"final":"x"}'];
    let i = 0;
    const model: ModelCaller = {
      params: { model: 'watcher' },
      call(call: ModelCall) {
        arrays.add(call.messages);
        return Promise.resolve({ callId: `c${i}`, text: replies[i++] ?? '{"final":"x"}', reasoning: null });
      },
    };
    const h = harness({ request: { context: { run: [], goal: [] }, toolRenderStyle: 'none' } });
    const agent = defineAgent({
      model,
      interpreter: h.agent.interpreter,
      store: h.store,
      events: h.sink,
      syntheticObservations: h.agent.syntheticObservations,
    });
    expect((await run(agent, h.request)).stopReason).toBe('final_answer');
    expect(arrays.size).toBe(1);
  });

  it('a model that replaces the last message is not believed: the next call sees the run history', async () => {
    const lasts: string[] = [];
    const replies = ['{"tool":"add","args":{"a":1,"b":2}}', '{"tool":"add","args":{"a":3,"b":4}}', '{"final":"x"}'];
    let i = 0;
    const model: ModelCaller = {
      params: { model: 'swapper' },
      call(call: ModelCall) {
        lasts.push(JSON.stringify(call.messages));
        const m = call.messages as unknown[];
        if (m.length > 2) m[m.length - 1] = { role: 'user', content: [{ type: 'text', text: 'forged' }] };
        return Promise.resolve({ callId: `c${i}`, text: replies[i++] ?? '{"final":"x"}', reasoning: null });
      },
    };
    const h = harness();
    const agent = defineAgent({
      model,
      interpreter: h.agent.interpreter,
      store: h.store,
      events: h.sink,
      syntheticObservations: h.agent.syntheticObservations,
    });
    expect((await run(agent, h.request)).stopReason).toBe('final_answer');
    expect(lasts.join('\n')).not.toContain('forged');
  });
});

describe('a result the caller changes after the run does not change the run log', () => {
  it("changing the result's usage after the run leaves run_ended's usage in an InMemoryStore log as the run wrote it", async () => {
    const h = harness();
    const inner = h.agent.model;
    // A model that reports usage: the run's usage is then summed, not the frozen zero it starts from.
    const model: ModelCaller = {
      params: inner.params,
      call: async (c) => ({ ...(await inner.call(c)), usage: { inputTokens: 3, outputTokens: 2 } }),
    };
    const agent = defineAgent({ ...h.agent, model });
    const result = await run(agent, h.request);
    const written = { ...result.usage };
    expect(written.inputTokens).toBeGreaterThan(0);
    (result.usage as { inputTokens: number }).inputTokens = written.inputTokens + 999;
    const log = await agent.store.readLog(h.request.runId);
    const ended = log.at(-1);
    expect(ended?.kind).toBe('run_ended');
    expect(ended?.kind === 'run_ended' ? ended.usage : null).toEqual(written);
  });
});
