/**
 * The sub-agent core under attack: forged parent logs, a parent moved to another store without its
 * child, a sub-agent that delegates to itself, cancels, budgets and events at the edges.
 */
import { describe, expect, it } from 'vitest';
import {
  agentTool,
  childRunsOf,
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
import { defaultsFor, family, researchTool, SYNTHETIC } from './family.ts';

const BUDGET = { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 };
const defaults = (tools: ToolRegistry, extra: Record<string, unknown> = {}) =>
  defaultsFor(tools, { budget: BUDGET, ...extra });

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
  it('can still be cancelled: the parent ends cancelled, and no child run is started to hear it', async () => {
    const f = family();
    await run(f.parent, { runId: 'mv2', goal: 'find it' });
    const elsewhere = new InMemoryStore();
    await importRun(elsewhere, 'mv2', await exportRun(f.store, 'mv2'));
    const g = family({ store: elsewhere });
    const r = await resume(g.parent, 'mv2', { input: { kind: 'cancel', resultId: 's0.c0' } });
    expect(r.stopReason).toBe('cancelled');
    expect(await elsewhere.readLog('mv2.s0.action')).toEqual([]);
    expect(g.childSink.events).toEqual([]);
  });

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
  const research = researchTool(f.child);
  return { ...mixedParentWith(store, research, opts), notes: f.notes };
}

/** The same parent with `research` as given. */
function mixedParentWith(
  store: RunStore,
  research: ToolSpec,
  opts: { readonly sendGated: boolean } = { sendGated: false },
) {
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
  return { parent, sent };
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

describe('sub-agents at the edges that hold', () => {
  it('a child settling its model call: the parent refuses executed and carries retry', async () => {
    const inner = new InMemoryStore();
    let lose = true;
    // The child's first model result is lost: its call (policy never) is in flight.
    const lossy: RunStore = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        if (key !== 'result' && key !== 'resultAndIntent') return value.bind(target);
        return async (runId: string, ...rest: unknown[]) => {
          if (lose && runId === 'st1.s0.action') {
            lose = false;
            throw new Error('lost');
          }
          return value.apply(target, [runId, ...rest]);
        };
      },
    });
    const f = family({ store: lossy, noteNeedsApproval: false });
    const child = defineAgent({ ...f.child, defaults: { ...f.child.defaults, modelReplayPolicy: 'never' } });
    const tools = ToolRegistry.of([researchTool(child)]);
    const req = { runId: 'st1', goal: 'x', tools, executor: tools.executor() };
    await expect(run(f.parent, req)).rejects.toBeInstanceOf(StoreError);
    const asked = await resume(f.parent, req);
    expect(asked.pending?.resultId).toBe('s0.c0');
    expect(asked.pending?.child?.request).toMatchObject({ kind: 'settle', target: 'model_call', decision: null });
    await expect(
      resume(f.parent, req, { input: { kind: 'executed', resultId: 's0.c0', observation: 'x' } }),
    ).rejects.toThrow(/settle request of a model call \(of sub-agent run "st1.s0.action"\) accepts retry, cancel/);
    const done = await resume(f.parent, req, { input: { kind: 'retry', resultId: 's0.c0' } });
    expect(done.finalAnswer).toBe('parent done');
    expect(done.trajectory[0]?.observation).toBe('the answer is 42');
  });

  it('a gated agentTool asks its approval first (s0.input), then the child its own (s0.c0); events name the child', async () => {
    const f = family();
    const tools = ToolRegistry.of([
      agentTool({
        name: 'research',
        description: 'r',
        parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
        agent: f.child,
        request: (args) => ({ goal: String(args['question']) }),
        needsApproval: true,
      }),
    ]);
    const req = { runId: 'g1', goal: 'x', tools, executor: tools.executor() };
    const a = await run(f.parent, req);
    expect(a.pending?.resultId).toBe('s0.input');
    expect(await f.store.readLog('g1.s0.action')).toEqual([]);
    const b = await resume(f.parent, req, { input: { kind: 'approve', resultId: 's0.input' } });
    expect(b.pending?.resultId).toBe('s0.c0');
    const c = await resume(f.parent, req, { input: { kind: 'approve', resultId: 's0.c0' } });
    expect(c.finalAnswer).toBe('parent done');
    expect(f.notes).toEqual(['found it']);
    const events = f.parentSink.events;
    const requested = events.filter((e) => e.type === 'input_requested');
    expect(requested.map((e) => e.type === 'input_requested' && e.request.child?.request.resultId)).toEqual([
      undefined,
      's0.input',
    ]);
    const started = events.filter((e) => e.type === 'action_started');
    expect(started.map((e) => e.type === 'action_started' && [e.childRunId, e.replayed])).toEqual([
      ['g1.s0.action', false],
      ['g1.s0.action', true],
    ]);
    const finished = events.filter((e) => e.type === 'action_finished');
    expect(finished.map((e) => e.type === 'action_finished' && e.childRunId)).toEqual(['g1.s0.action']);
  });

  it("the child's tokens count against the parent's token budget", async () => {
    const f = family({ noteNeedsApproval: false, childUsage: { inputTokens: 50, outputTokens: 50 } });
    const r = await run(f.parent, {
      runId: 'tk1',
      goal: 'x',
      budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000, maxTotalTokens: 100 },
    });
    expect(r.stopReason).toBe('max_tokens');
    expect(r.usage.inputTokens + r.usage.outputTokens).toBe(200);
  });

  it('a second driver of the parent while the first runs its child is refused; the child runs once', async () => {
    const f = family({ noteNeedsApproval: false });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let childCalls = 0;
    const slow = defineAgent({
      ...f.child,
      model: scriptedModel(async (call) => {
        childCalls++;
        await gate;
        return { callId: null, text: call.callSeq === 0 ? '{"final":"slow answer"}' : 'x', reasoning: null };
      }),
    });
    const tools = ToolRegistry.of([researchTool(slow)]);
    const req = { runId: 'two', goal: 'x', tools, executor: tools.executor() };
    const first = run(f.parent, req);
    while (childCalls === 0) await new Promise((r) => setTimeout(r, 1));
    await expect(resume(f.parent, req)).rejects.toThrow(/being driven by another/);
    release();
    expect((await first).finalAnswer).toBe('parent done');
    expect(childCalls).toBe(1);
  });

  it('a child whose model never answers (and ignores the signal): the parent cancelled settles, the child ends cancelled', async () => {
    const f = family();
    let called: () => void = () => undefined;
    const inCall = new Promise<void>((resolve) => {
      called = resolve;
    });
    const stuck = defineAgent({
      ...f.child,
      model: scriptedModel(() => {
        called();
        return new Promise<never>(() => undefined);
      }),
    });
    const tools = ToolRegistry.of([researchTool(stuck)]);
    const controller = new AbortController();
    const running = run(
      f.parent,
      { runId: 'stk', goal: 'x', tools, executor: tools.executor() },
      {
        signal: controller.signal,
      },
    );
    await inCall;
    controller.abort(new Error('stop now'));
    await expect(running).rejects.toThrow('stop now');
    expect(readRunLog(await f.store.readLog('stk.s0.action')).ended?.stopReason).toBe('cancelled');
    expect(readRunLog(await f.store.readLog('stk')).ended?.stopReason).toBe('cancelled');
  });
});

describe('a sub-agent call that starts no child run', () => {
  it('names no child run in its events when its arguments are invalid', async () => {
    const f = family({ parentScript: ['{"tool":"research","args":{}}', '{"final":"x"}'] });
    const r = await run(f.parent, { runId: 'nc1', goal: 'x' });
    expect(r.trajectory[0]?.actionStatus).toBe('not_executed');
    const named = f.parentSink.events.filter((e) => 'childRunId' in e);
    expect(named).toEqual([]);
  });

  it('names no child run in its step, its call records or action_finished when the request function throws', async () => {
    const f = family();
    const throwing = agentTool({
      name: 'research',
      description: 'r',
      parameters: { type: 'object' },
      agent: f.child,
      request: () => {
        throw new Error('no request for that');
      },
    });
    const tools = ToolRegistry.of([throwing]);
    const r = await run(f.parent, { runId: 'nc2', goal: 'x', tools, executor: tools.executor() });
    expect(r.trajectory[0]?.observation).toBe('Error: no request for that');
    expect(r.trajectory[0]?.childRunId).toBeUndefined();
    expect(childRunsOf(readRunLog(await f.store.readLog('nc2')))).toEqual([]);
    const finished = f.parentSink.events.filter((e) => e.type === 'action_finished');
    expect(finished.map((e) => 'childRunId' in e)).toEqual([false]);
    // In a step with several calls: no childRunId on the call_result or the step's call records.
    const m = mixedParentWith(new InMemoryStore(), throwing);
    const r2 = await run(m.parent, { runId: 'nc3', goal: 'x' });
    expect(r2.trajectory[0]?.calls?.map((c) => c.childRunId)).toEqual([undefined, undefined]);
  });
});

describe('a request function that returns a promise', () => {
  it('is the observation saying so, and its rejection is not left unhandled', async () => {
    const f = family();
    const tools = ToolRegistry.of([
      agentTool({
        name: 'research',
        description: 'r',
        parameters: { type: 'object' },
        agent: f.child,
        request: (async () => {
          throw new Error('async request failed');
        }) as never,
      }),
    ]);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const r = await run(f.parent, { runId: 'pr1', goal: 'x', tools, executor: tools.executor() });
      expect(r.trajectory[0]?.observation).toMatch(/must return a request object, not a promise/);
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
    expect(await f.store.readLog('pr1.s0.action')).toEqual([]);
  });
});

describe('forged parent logs the checker refuses', () => {
  /** The parent's log as NDJSON with `edit` applied to its records. */
  async function forged(store: RunStore, runId: string, edit: (log: LogRecord[]) => unknown[]): Promise<string> {
    const lines = edit([...(await store.readLog(runId))]);
    return lines.map((r) => `${JSON.stringify(r)}\n`).join('');
  }
  const refused = async (text: string, runId: string, why: RegExp): Promise<void> => {
    const target = new InMemoryStore();
    await expect(importRun(target, runId, text)).rejects.toThrow(why);
    expect(await target.readLog(runId)).toEqual([]);
  };
  const editChild = (log: LogRecord[], fn: (rec: Record<string, unknown>) => unknown): unknown[] =>
    log.map((r) => (r.kind === 'input_request' && r.request.kind === 'child' ? fn(r as never) : r));

  it('a repeat that is negative or not an integer, and a child on a request of another kind', async () => {
    const f = family();
    await run(f.parent, { runId: 'fl1', goal: 'x' });
    const withChild = (child: (c: Record<string, unknown>) => unknown, kind = 'child') =>
      forged(f.store, 'fl1', (log) =>
        editChild(log, (r) => {
          const q = r['request'] as Record<string, unknown>;
          return { ...r, request: { ...q, kind, child: child(q['child'] as Record<string, unknown>) } };
        }),
      );
    await refused(await withChild((c) => ({ ...c, repeat: -1 })), 'fl1', /child must hold/);
    await refused(await withChild((c) => ({ ...c, repeat: 1.5 })), 'fl1', /child must hold/);
    await refused(await withChild((c) => c, 'approval'), 'fl1', /belongs to a request of kind child/);
  });

  it("a call's result while its sub-agent's request is open, and a sub-agent's request before the step's gates are answered", async () => {
    const store = new InMemoryStore();
    const b = mixedParent(store, { sendGated: false });
    await run(b.parent, { runId: 'fl2', goal: 'x' });
    const log = await store.readLog('fl2');
    const asked = log.find((r) => r.kind === 'input_request') as InputRequestRecord;
    expect(asked.resultId).toBe('s0.a0.c0');
    const result = log.find((r) => r.kind === 'call_result') as LogRecord;
    const early = { ...result, resultId: 's0.a0' };
    // s0.a0's call_result while s0.a0.c0 is open.
    await refused(await forged(store, 'fl2', (l) => [...l, early]), 'fl2', /while its sub-agent's request/);
    // With send gated: a child request written while the gate s0.a1.input is unanswered.
    const gatedStore = new InMemoryStore();
    const g = mixedParent(gatedStore, { sendGated: true });
    const paused = await run(g.parent, { runId: 'fl2', goal: 'x' });
    expect(paused.pending?.resultId).toBe('s0.a1.input');
    await refused(await forged(gatedStore, 'fl2', (l) => [...l, asked]), 'fl2', /while a request of its step is open/);
  });
});

describe('a forged reply of a kind the innermost request does not accept', () => {
  it('makes the log corrupt: resume refuses it and nothing runs in the child', async () => {
    const f = family();
    await run(f.parent, { runId: 'fk1', goal: 'x' });
    const reply = { kind: 'executed', resultId: 's0.c0', observation: 'forged' };
    await f.store.input?.('fk1', {
      kind: 'input',
      v: RECORD_VERSION,
      stepIndex: 0,
      resultId: 's0.c0',
      reply,
      receivedAt: new Date().toISOString(),
    } as never);
    await expect(resume(f.parent, 'fk1')).rejects.toThrow(/input for s0.c0: a child request does not accept executed/);
    expect(f.notes).toEqual([]);
    expect(readRunLog(await f.store.readLog('fk1.s0.action')).pending?.resultId).toBe('s0.input');
  });
});

describe('a child that ends by a completing tool', () => {
  it.todo(
    "gives the parent the completing tool's observation: a child that ends tool_completed (or env_completed) " +
      'now gives "The sub-agent run … ended without a final answer (tool_completed) after 1 step.", ' +
      "so what the completing tool returned (a report, a ticket id) never reaches the parent's model, and a " +
      'successful end reads as a failure (src/core/agent-tool.ts observationOf)',
  );
});

describe('a parent cancelled while its child writes its question', () => {
  it('ends the child cancelled too, not waiting for a reply no one can give', async () => {
    const inner = new InMemoryStore();
    const controller = new AbortController();
    // The abort lands while the child's input request is being written: the child pauses all the same.
    const racing: RunStore = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        if (key !== 'inputRequest') return value.bind(target);
        return async (runId: string, ...rest: unknown[]) => {
          if (runId === 'cw1.s0.action') controller.abort(new Error('stop'));
          return value.apply(target, [runId, ...rest]);
        };
      },
    });
    const f = family({ store: racing });
    await expect(run(f.parent, { runId: 'cw1', goal: 'x' }, { signal: controller.signal })).rejects.toThrow('stop');
    expect(readRunLog(await inner.readLog('cw1')).ended?.stopReason).toBe('cancelled');
    expect(readRunLog(await inner.readLog('cw1.s0.action')).ended?.stopReason).toBe('cancelled');
    expect(f.notes).toEqual([]);
  });
});

describe('a parent resumed with a reply after its child was driven directly', () => {
  it("asks the child's new question as its next request; the old reply is not applied to it", async () => {
    const twice = ['{"tool":"note","args":{"text":"one"}}', '{"tool":"note","args":{"text":"two"}}', '{"final":"x"}'];
    const f = family({ childScript: twice });
    await run(f.parent, { runId: 'dd1', goal: 'x' });
    await resume(f.child, 'dd1.s0.action', { input: { kind: 'approve', resultId: 's0.input' } });
    const r = await resume(f.parent, 'dd1', { input: { kind: 'approve', resultId: 's0.c0' } });
    expect(r.pending?.resultId).toBe('s0.c1');
    expect(r.pending?.child?.request.resultId).toBe('s1.input');
    expect(f.notes).toEqual(['one']);
  });
});

describe('a parent on a store without input methods whose child pauses', () => {
  it('rejects with a StoreError naming inputRequest, as a gate of its own would; the child keeps its question', async () => {
    const inner = new InMemoryStore();
    const legacy: RunStore = new Proxy(inner, {
      get(target, key, receiver) {
        if (key === 'inputRequest' || key === 'input') return undefined;
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const f = family({ store: inner });
    const parent = defineAgent({ ...f.parent, store: legacy });
    await expect(run(parent, { runId: 'lg1', goal: 'x' })).rejects.toThrow(/inputRequest/);
    expect(readRunLog(await inner.readLog('lg1.s0.action')).pending?.resultId).toBe('s0.input');
    expect(f.notes).toEqual([]);
  });
});

describe('a request function that returns no object', () => {
  it('is the observation saying it must return a request object', async () => {
    const f = family();
    const tools = ToolRegistry.of([
      agentTool({
        name: 'research',
        description: 'r',
        parameters: { type: 'object' },
        agent: f.child,
        request: (() => 42) as never,
      }),
    ]);
    const r = await run(f.parent, { runId: 'no1', goal: 'x', tools, executor: tools.executor() });
    expect(r.trajectory[0]?.observation).toBe(
      'InvalidRequestError: the request function of a sub-agent must return a request object',
    );
  });
});
