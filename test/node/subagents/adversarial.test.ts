/**
 * The sub-agent core under attack: forged parent logs, a parent moved to another store without its
 * child, a sub-agent that delegates to itself, cancels, budgets and events at the edges.
 */
import { describe, expect, it } from 'vitest';
import {
  agentTool,
  CorruptLogError,
  defineAgent,
  exportRun,
  importRun,
  InMemoryStore,
  readRunLog,
  RECORD_VERSION,
  resume,
  run,
  StoreError,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type {
  AgentDefinition,
  InputRequestRecord,
  LogRecord,
  ModelReply,
  RunStore,
  ToolSpec,
} from '../../../src/core/index.ts';
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { family } from './family.ts';

const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;

function defaults(tools: ToolRegistry, extra: Record<string, unknown> = {}) {
  return {
    tools,
    executor: tools.executor(),
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe' as const,
    observationTemplate: '{observation}',
    toolRenderStyle: 'none' as const,
    cancelGraceMs: 2_000,
    ...extra,
  };
}

/** A store whose `op` fails once (the write never lands), then works. */
function failingOnce(inner: RunStore, op: string): RunStore {
  let failed = false;
  return new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      if (key !== op) return value.bind(target);
      return async (...args: unknown[]) => {
        if (!failed) {
          failed = true;
          throw new Error(`${op} lost`);
        }
        return value.apply(target, args);
      };
    },
  });
}

/** A child request record as a forger would append it to a parent's log. */
function childRequestRecord(parentRunId: string, intentDecision: unknown): InputRequestRecord {
  return {
    kind: 'input_request',
    v: RECORD_VERSION,
    stepIndex: 0,
    resultId: 's0.c0',
    request: {
      kind: 'child',
      target: 'action',
      decision: intentDecision,
      child: {
        runId: `${parentRunId}.s0.action`,
        request: { resultId: 's0.input', stepIndex: 0, kind: 'approval', target: 'action', decision: intentDecision },
      },
    },
    requestedAt: new Date().toISOString(),
  } as InputRequestRecord;
}

describe('a forged child request on an action that runs no sub-agent', () => {
  it('is refused before anything is written: a never tool in flight does not run again on an approval', async () => {
    const inner = new InMemoryStore();
    const sent: string[] = [];
    const send: ToolSpec = {
      name: 'send',
      description: 'Send a message (must not repeat).',
      parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
      replayPolicy: 'never',
      handler: async (args) => {
        sent.push(String(args['to']));
        return 'sent';
      },
    };
    const tools = ToolRegistry.of([send]);
    const agent = (store: RunStore): AgentDefinition =>
      defineAgent({
        model: scriptedModel(['{"tool":"send","args":{"to":"ana"}}', '{"final":"done"}']),
        interpreter: jsonActionInterpreter(),
        store,
        events: collectingSink(),
        syntheticObservations: SYNTHETIC,
        defaults: defaults(tools),
      });
    // The send runs, then its step is lost: the action is in flight, and `never`.
    await expect(run(agent(failingOnce(inner, 'step')), { runId: 'fg1', goal: 'send' })).rejects.toBeInstanceOf(
      StoreError,
    );
    expect(sent).toEqual(['ana']);
    const log = await inner.readLog('fg1');
    const intent = log.find((r) => r.kind === 'intent' && r.intent === 'action') as Extract<
      LogRecord,
      { kind: 'intent'; intent: 'action' }
    >;
    await inner.inputRequest('fg1', childRequestRecord('fg1', intent.decision));
    const before = (await inner.readLog('fg1')).length;
    await expect(resume(agent(inner), 'fg1', { input: { kind: 'approve', resultId: 's0.c0' } })).rejects.toBeInstanceOf(
      CorruptLogError,
    );
    expect(sent).toEqual(['ana']);
    expect((await inner.readLog('fg1')).length).toBe(before);
  });
});

describe('a parent moved to another store without its child', () => {
  it("is refused with a store error naming the child's missing log; the child is not started afresh", async () => {
    const f = family();
    const first = await run(f.parent, { runId: 'mv1', goal: 'find it' });
    expect(first.pending?.resultId).toBe('s0.c0');
    const elsewhere = new InMemoryStore();
    await importRun(elsewhere, 'mv1', await exportRun(f.store, 'mv1'));
    const g = family({ store: elsewhere, notes: f.notes });
    const approve = { input: { kind: 'approve' as const, resultId: 's0.c0' } };
    await expect(resume(g.parent, 'mv1', approve)).rejects.toThrow(/mv1\.s0\.action/);
    // The reply is in the parent's log: resuming again meets the same missing log.
    await expect(resume(g.parent, 'mv1')).rejects.toBeInstanceOf(StoreError);
    expect(readRunLog(await elsewhere.readLog('mv1')).inFlight?.input?.reply.kind).toBe('approve');
    // Nothing of the child was run or written again.
    expect(await elsewhere.readLog('mv1.s0.action')).toEqual([]);
    expect(f.notes).toEqual([]);
    // With the child's log brought over too, the parent finishes.
    await importRun(elsewhere, 'mv1.s0.action', await exportRun(f.store, 'mv1.s0.action'));
    const done = await resume(g.parent, 'mv1');
    expect(done.finalAnswer).toBe('parent done');
    expect(f.notes).toEqual(['found it']);
  });
});

describe('a sub-agent that delegates to itself', () => {
  it('stops nesting 64 levels deep: the call that would go deeper is an observation saying so', async () => {
    const store = new InMemoryStore();
    const depthOf = (runId: string): number => runId.split('.s0.action').length - 1;
    let deepest = 0;
    // A model that always delegates (it gives up only far below the limit, so the test cannot hang).
    const model = scriptedModel((call) => {
      const depth = depthOf(call.runId);
      deepest = Math.max(deepest, depth);
      const text =
        call.callSeq === 0 && depth < 100 ? '{"tool":"delegate","args":{"task":"again"}}' : '{"final":"bottom"}';
      return { callId: null, text, reasoning: null };
    });
    const holder: { tools: ToolRegistry | null } = { tools: null };
    const base = defineAgent({
      model,
      interpreter: jsonActionInterpreter(),
      store,
      events: collectingSink(),
      syntheticObservations: SYNTHETIC,
      defaults: defaults(ToolRegistry.of([])),
    });
    const tools = ToolRegistry.of([
      agentTool({
        name: 'delegate',
        description: 'Hand the task to a copy of yourself.',
        parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
        agent: base,
        request: (args) => {
          const own = holder.tools as ToolRegistry;
          return { goal: String(args['task']), tools: own, executor: own.executor() };
        },
      }),
    ]);
    holder.tools = tools;
    const r = await run(base, { runId: 'rec', goal: 'go', tools, executor: tools.executor() });
    expect(r.stopReason).toBe('final_answer');
    expect(deepest).toBe(64);
    const bottom = readRunLog(await store.readLog(`rec${'.s0.action'.repeat(64)}`));
    expect(bottom.trajectory[0]?.observation).toMatch(/sub-agents nest at most 64 levels deep/);
  });
});

describe("a failed read of the child's log after the child paused", () => {
  it("ends the parent's run as a store failure (not an observation), and a resume asks the child's question", async () => {
    const inner = new InMemoryStore();
    let reads = 0;
    const flaky: RunStore = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        if (key !== 'readLog') return value.bind(target);
        return async (runId: string, ...rest: unknown[]) => {
          // The child's own run reads its log first; the second read (its requests, once paused) fails.
          if (runId === 'rd1.s0.action' && ++reads === 2) throw new Error('disk unreadable');
          return value.apply(target, [runId, ...rest]);
        };
      },
    });
    const f = family({ store: flaky });
    await expect(run(f.parent, { runId: 'rd1', goal: 'find it' })).rejects.toBeInstanceOf(StoreError);
    expect(readRunLog(await inner.readLog('rd1')).trajectory).toEqual([]);
    const r = await resume(f.parent, 'rd1');
    expect(r.pending?.resultId).toBe('s0.c0');
    expect(r.pending?.child?.request.kind).toBe('approval');
  });
});

describe('a cancel through the parent when the child has moved on', () => {
  it("ends the child cancelled even though someone else answered the child's question in the meantime", async () => {
    const twice = ['{"tool":"note","args":{"text":"one"}}', '{"tool":"note","args":{"text":"two"}}', '{"final":"x"}'];
    const f = family({ childScript: twice });
    const first = await run(f.parent, { runId: 'mo1', goal: 'find it' });
    expect(first.pending?.child?.request.resultId).toBe('s0.input');
    // The child is driven directly: its first note is approved there, and it asks about the second.
    const moved = await resume(f.child, 'mo1.s0.action', { input: { kind: 'approve', resultId: 's0.input' } });
    expect(moved.pending?.resultId).toBe('s1.input');
    const r = await resume(f.parent, 'mo1', { input: { kind: 'cancel', resultId: 's0.c0' } });
    expect(r.stopReason).toBe('cancelled');
    expect(readRunLog(await f.store.readLog('mo1.s0.action')).ended?.stopReason).toBe('cancelled');
    expect(f.notes).toEqual(['one']);
  });
});

/**
 * A parent whose one step calls `research` (a sub-agent: the family's child, whose note needs
 * approval) and `send` (a plain tool, `never`, gated when `sendGated`) at once.
 */
function mixedParent(store: RunStore, opts: { readonly sendGated: boolean }) {
  const f = family({ store });
  const sent: string[] = [];
  const send: ToolSpec = {
    name: 'send',
    description: 'Send (must not repeat).',
    parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    replayPolicy: 'never',
    needsApproval: opts.sendGated,
    handler: async (args) => {
      sent.push(String(args['to']));
      return 'sent';
    },
  };
  const research = agentTool({
    name: 'research',
    description: 'Research with a sub-agent.',
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
    agent: f.child,
    request: (args) => ({ goal: String(args['question']) }),
  });
  const tools = ToolRegistry.of([research, send]);
  const both: ModelReply = {
    callId: null,
    text: '',
    reasoning: null,
    toolCalls: [
      { id: 'c0', name: 'research', arguments: { question: 'what?' } },
      { id: 'c1', name: 'send', arguments: { to: 'ana' } },
    ],
  };
  const parent = defineAgent({
    model: scriptedModel([both, { callId: null, text: 'done', reasoning: null }]),
    interpreter: nativeToolInterpreter('test'),
    store,
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
    defaults: defaults(tools, { parallelToolCalls: 2 }),
  });
  return { parent, sent, notes: f.notes };
}

describe('a cancel of a gate or a settlement in a step with several calls', () => {
  it('ends the run cancelled on resume after a crash before its end, running none of the calls', async () => {
    const inner = new InMemoryStore();
    const m = mixedParent(inner, { sendGated: true });
    const first = await run(m.parent, { runId: 'cx1', goal: 'go' });
    expect(first.pending?.resultId).toBe('s0.a1.input');
    const lossy = mixedParent(failingOnce(inner, 'runEnded'), { sendGated: true });
    await expect(
      resume(lossy.parent, 'cx1', { input: { kind: 'cancel', resultId: 's0.a1.input' } }),
    ).rejects.toBeInstanceOf(StoreError);
    const r = await resume(m.parent, 'cx1');
    expect(r.stopReason).toBe('cancelled');
    // The research call was not started after the person cancelled.
    expect(await inner.readLog('cx1.s0.a0')).toEqual([]);
    expect(m.sent).toEqual([]);
  });

  it("reaches the step's child that waits with an answered request: it ends cancelled too", async () => {
    const inner = new InMemoryStore();
    // The send runs, but its outcome is lost: on resume it is in flight and must be settled.
    let lose = true;
    const lossy: RunStore = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        if (key !== 'callResult') return value.bind(target);
        return async (runId: string, rec: { resultId: string }) => {
          if (lose && rec.resultId === 's0.a1') {
            lose = false;
            throw new Error('lost');
          }
          return value.apply(target, [runId, rec]);
        };
      },
    });
    const m = mixedParent(lossy, { sendGated: false });
    await expect(run(m.parent, { runId: 'cx2', goal: 'go' })).rejects.toBeInstanceOf(StoreError);
    expect(m.sent).toEqual(['ana']);
    const asked = await resume(m.parent, 'cx2');
    expect(asked.pending?.resultId).toBe('s0.a0.c0');
    const settle = await resume(m.parent, 'cx2', { input: { kind: 'approve', resultId: 's0.a0.c0' } });
    expect(settle.pending?.resultId).toBe('s0.a1.settle');
    const r = await resume(m.parent, 'cx2', { input: { kind: 'cancel', resultId: 's0.a1.settle' } });
    expect(r.stopReason).toBe('cancelled');
    expect(readRunLog(await inner.readLog('cx2.s0.a0')).ended?.stopReason).toBe('cancelled');
    expect(m.notes).toEqual([]);
    expect(m.sent).toEqual(['ana']);
  });
});
