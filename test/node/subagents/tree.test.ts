/**
 * Sub-agents beyond one level and one call: a child with its own child (depth 3), ten children in
 * one step, cancel reaching all of them, and what a child that fails or is forged does to its parent.
 */
import { describe, expect, it } from 'vitest';
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import {
  agentTool,
  CorruptLogError,
  defineAgent,
  InMemoryStore,
  InvalidRequestError,
  readRunLog,
  resume,
  run,
  StoreError,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type { AgentDefinition, ModelReply, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { defaultsFor, family, researchCalls, SYNTHETIC } from './family.ts';

const BUDGET = { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 };

/** An agent on a JSON script whose only tool is `tool`. */
function scripted(store: RunStore, script: readonly string[], tools: ToolSpec[], delayMs = 0): AgentDefinition {
  const registry = ToolRegistry.of(tools);
  return defineAgent({
    model: scriptedModel(script, delayMs ? { delayMs } : {}),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
    defaults: defaultsFor(registry, { cancelGraceMs: 5_000, budget: BUDGET }),
  });
}

const delegate = (name: string, agent: AgentDefinition): ToolSpec =>
  agentTool({
    name,
    description: `Delegates to the ${name} agent.`,
    parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
    agent,
    request: (args) => ({ goal: String(args['task']) }),
  });

describe('a child with its own child (depth 3)', () => {
  it('the grandchild approval reaches the person through both levels, and every level ends with its answer', async () => {
    const store = new InMemoryStore();
    const written: string[] = [];
    const write: ToolSpec = {
      name: 'write',
      description: 'Writes (never twice).',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      replayPolicy: 'never',
      needsApproval: true,
      handler: async (args) => {
        written.push(String(args['text']));
        return 'written';
      },
    };
    const grandchild = scripted(
      store,
      ['{"tool":"write","args":{"text":"deep"}}', '{"final":"grandchild done"}'],
      [write],
    );
    const child = scripted(
      store,
      ['{"tool":"deeper","args":{"task":"go deeper"}}', '{"final":"child done"}'],
      [delegate('deeper', grandchild)],
    );
    const top = scripted(
      store,
      ['{"tool":"delegate","args":{"task":"do it"}}', '{"final":"top done"}'],
      [delegate('delegate', child)],
    );
    const first = await run(top, { runId: 'd3', goal: 'start' });
    expect(first.pending?.resultId).toBe('s0.c0');
    expect(first.pending?.child?.runId).toBe('d3.s0.action');
    expect(first.pending?.child?.request.kind).toBe('child');
    expect(first.pending?.child?.request.child?.runId).toBe('d3.s0.action.s0.action');
    expect(first.pending?.child?.request.child?.request.kind).toBe('approval');
    // The same pending after a resume without input: nothing written, nothing run.
    const again = await resume(top, 'd3');
    expect(again.pending).toEqual(first.pending);
    const done = await resume(top, 'd3', { input: { kind: 'approve', resultId: 's0.c0' } });
    expect(done.finalAnswer).toBe('top done');
    expect(done.trajectory[0]?.observation).toBe('child done');
    expect(written).toEqual(['deep']);
    const middle = readRunLog(await store.readLog('d3.s0.action'));
    expect(middle.trajectory[0]?.observation).toBe('grandchild done');
    expect(middle.trajectory[0]?.childRunId).toBe('d3.s0.action.s0.action');
  });
});

describe('sub-agents nested past the limit', () => {
  it('a request 33 levels deep is not written: the call that would carry it gets an observation saying so', async () => {
    const store = new InMemoryStore();
    const ask: ToolSpec = {
      name: 'ask',
      description: 'Asks a person.',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      answeredBy: 'human',
    };
    let agent = scripted(store, ['{"tool":"ask","args":{"q":"?"}}', '{"final":"leaf"}'], [ask]);
    for (let level = 0; level < 33; level++)
      agent = scripted(store, ['{"tool":"down","args":{"task":"t"}}', '{"final":"up"}'], [delegate('down', agent)]);
    const r = await run(agent, { runId: 'deep', goal: 'go' });
    expect(r.stopReason).toBe('final_answer');
    expect(r.trajectory[0]?.observation).toMatch(/sub-agents nest deeper than 32 levels/);
  });
});

describe('ten children in one step', () => {
  const final = (text: string): ModelReply => ({ callId: null, text, reasoning: null });
  const questions = Array.from({ length: 10 }, (_, i) => `q${i}?`);

  it('run at once, each its own run with its own log, and the step lists every child', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    const f = family({
      noteNeedsApproval: false,
      native: { replies: [researchCalls(...questions), final('all ten')], parallelToolCalls: 10 },
    });
    const r = await run(f.parent, { runId: 'ten', goal: 'ask ten' });
    expect(r.finalAnswer).toBe('all ten');
    expect(f.notes).toHaveLength(10);
    const ids = r.trajectory[0]?.calls?.map((c) => c.childRunId);
    expect(ids).toEqual(questions.map((_, j) => `ten.s0.a${j}`));
    for (const id of ids ?? [])
      expect(readRunLog(await f.store.readLog(id ?? '')).ended?.stopReason).toBe('final_answer');
    // Each child listens to a signal of its own: ten children add no listener to the parent's.
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('cancelling the parent ends all ten children cancelled before the parent settles', async () => {
    const store = new InMemoryStore();
    let started = 0;
    let allStarted: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    const childModel = scriptedModel(async (call) => {
      if (++started === 10) allStarted();
      // A model that never answers unless aborted.
      await new Promise((_, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason)));
      return final('never');
    });
    // A child's end takes a while to land: the parent must wait for it, not just for its abort.
    const slowEnd: RunStore = new Proxy(store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        if (key !== 'runEnded') return value.bind(target);
        return async (...args: unknown[]) => {
          await new Promise((resolve) => setTimeout(resolve, 30));
          return value.apply(target, args);
        };
      },
    });
    const child = defineAgent({
      model: childModel,
      interpreter: jsonActionInterpreter(),
      store: slowEnd,
      events: collectingSink(),
      syntheticObservations: SYNTHETIC,
      defaults: defaultsFor(ToolRegistry.of([]), { cancelGraceMs: 5_000, budget: BUDGET }),
    });
    const tools = ToolRegistry.of([delegate('research', child)]);
    const parent = defineAgent({
      model: scriptedModel([
        {
          callId: null,
          text: '',
          reasoning: null,
          toolCalls: questions.map((q, i) => ({ id: `c${i}`, name: 'research', arguments: { task: q } })),
        },
      ]),
      interpreter: nativeToolInterpreter('test'),
      store,
      events: collectingSink(),
      syntheticObservations: SYNTHETIC,
      defaults: defaultsFor(tools, { cancelGraceMs: 5_000, budget: BUDGET, parallelToolCalls: 10 }),
    });
    const controller = new AbortController();
    const running = run(parent, { runId: 'stop10', goal: 'ask ten' }, { signal: controller.signal });
    await ready;
    controller.abort(new Error('stop'));
    await expect(running).rejects.toThrow('stop');
    for (let j = 0; j < 10; j++) {
      const view = readRunLog(await store.readLog(`stop10.s0.a${j}`));
      expect(view.ended?.stopReason, `child ${j}`).toBe('cancelled');
    }
    expect(readRunLog(await store.readLog('stop10')).ended?.stopReason).toBe('cancelled');
  });
});

describe('a child that fails', () => {
  it('a child that ends without a final answer is an observation saying how it ended', async () => {
    const f = family({ noteNeedsApproval: false, childScript: ['not json', 'still not json', 'nope'] });
    const child = f.child;
    const tools = ToolRegistry.of([
      agentTool({
        name: 'research',
        description: 'Research.',
        parameters: { type: 'object' },
        agent: child,
        request: () => ({ goal: 'try', budget: { maxSteps: 2, maxValidActions: 2, maxContextChars: 100_000 } }),
      }),
    ]);
    const parent = scripted(f.store, ['{"tool":"research","args":{}}', '{"final":"gave up"}'], []);
    const withTools = { runId: 'fail1', goal: 'x', tools, executor: tools.executor() };
    const r = await run(parent, withTools);
    expect(r.trajectory[0]?.observation).toBe(
      'The sub-agent run "fail1.s0.action" ended without a final answer (max_steps) after 2 steps.',
    );
    expect(r.trajectory[0]?.actionStatus).toBe('executed');
  });

  it('a request function that throws is the observation, and no child run is started', async () => {
    const f = family();
    const tools = ToolRegistry.of([
      agentTool({
        name: 'research',
        description: 'Research.',
        parameters: { type: 'object' },
        agent: f.child,
        request: () => {
          throw new RangeError('no goal for that');
        },
      }),
    ]);
    const parent = scripted(f.store, ['{"tool":"research","args":{}}', '{"final":"ok"}'], []);
    const r = await run(parent, { runId: 'fail2', goal: 'x', tools, executor: tools.executor() });
    expect(r.trajectory[0]?.observation).toBe('RangeError: no goal for that');
    expect(await f.store.readLog('fail2.s0.action')).toEqual([]);
  });

  it("a failure of the child's store ends the parent's run as its own would, and a resume finishes both", async () => {
    const inner = new InMemoryStore();
    let failNext = true;
    const flaky: RunStore = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== 'runStarted' || typeof value !== 'function')
          return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          if (failNext) {
            failNext = false;
            throw new Error('disk full');
          }
          return value.apply(target, args);
        };
      },
    });
    const f = family({ noteNeedsApproval: false });
    const child = defineAgent({ ...f.child, store: flaky });
    const tools = ToolRegistry.of([delegate('research', child)]);
    const parent = scripted(inner, ['{"tool":"research","args":{"task":"t"}}', '{"final":"ok"}'], []);
    const req = { runId: 'fail3', goal: 'x', tools, executor: tools.executor() };
    // The parent's own run_started goes to `inner`; the child's first write fails.
    await expect(run(parent, req)).rejects.toBeInstanceOf(StoreError);
    expect(readRunLog(await inner.readLog('fail3')).state).toBe('in_flight');
    const r = await resume(parent, req);
    expect(r.finalAnswer).toBe('ok');
    expect(f.notes).toEqual(['found it']);
  });
});

describe('what agentTool and the log checker refuse', () => {
  it('refuses an option it does not know', () => {
    const f = family();
    expect(() =>
      agentTool({
        name: 'x',
        description: 'x',
        parameters: { type: 'object' },
        agent: f.child,
        request: () => ({}),
        needsAproval: true,
      } as never),
    ).toThrow(InvalidRequestError);
  });

  it('a log whose child request points at another run is corrupt', async () => {
    const f = family();
    await run(f.parent, { runId: 'forge', goal: 'x' });
    const log = await f.store.readLog('forge');
    const forged = log.map((rec) =>
      rec.kind === 'input_request'
        ? { ...rec, request: { ...rec.request, child: { runId: 'victim', request: rec.request.child?.request } } }
        : rec,
    );
    expect(() => readRunLog(forged as never)).toThrow(CorruptLogError);
  });
});
