/**
 * Several tool calls in one step (docs/design/step.md#several-calls-a-step): every call of a reply
 * runs in one step, at most `parallelToolCalls` at once, each with its own outcome, approval and
 * settlement, and the next model call answers every call in the provider's order.
 */
import { describe, expect, it } from 'vitest';
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import {
  defineAgent,
  InMemoryStore,
  CorruptLogError,
  InvalidInputError,
  readRunLog,
  resume,
  run,
  ToolRegistry,
  UpgradeRefusedError,
} from '../../../src/core/index.ts';
import type {
  InputReply,
  LogRecord,
  Message,
  ModelReply,
  RunRequest,
  RunStore,
  ToolCallRequest,
  ToolSpec,
} from '../../../src/core/index.ts';
import { collectingSink, scriptedModel } from '../../../src/testing/index.ts';
import { severalCallsLaw, severalCallsLawProblems } from '../../contract/several-calls-law.ts';

const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' };

type Call = ToolCallRequest;
const calls = (...c: Call[]): ModelReply => ({ text: '', reasoning: null, callId: null, toolCalls: c });
const final = (text: string): ModelReply => ({ text, reasoning: null, callId: null });

/** Tools whose handlers log what ran: `read` is safe, `send` never repeats, `pay` needs approval. */
function tools(ran: string[], overrides: Partial<Record<string, Partial<ToolSpec>>> = {}): ToolSpec[] {
  const spec = (name: string, replayPolicy: 'safe' | 'never'): ToolSpec => ({
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] },
    replayPolicy,
    handler: async (args) => {
      ran.push(`${name}:${String(args['x'])}`);
      return `${name} did ${String(args['x'])}`;
    },
    ...overrides[name],
  });
  return [spec('read', 'safe'), spec('send', 'never'), { ...spec('pay', 'never'), needsApproval: true }];
}

function setup(opts: {
  readonly script: readonly ModelReply[];
  readonly ran?: string[];
  readonly store?: RunStore;
  readonly parallel?: number;
  readonly tools?: ToolSpec[];
  readonly budget?: Partial<RunRequest['budget']>;
}) {
  const ran = opts.ran ?? [];
  const model = scriptedModel(opts.script);
  const sink = collectingSink();
  const store = opts.store ?? new InMemoryStore();
  const registry = ToolRegistry.of(opts.tools ?? tools(ran));
  const agent = defineAgent({
    model,
    interpreter: nativeToolInterpreter('test'),
    store,
    events: sink,
    syntheticObservations: SYNTHETIC,
  });
  const request: RunRequest = {
    runId: 'several',
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000, ...opts.budget },
    executor: registry.executor(),
    tools: registry,
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Do three things.' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation: {observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1_000,
    ...(opts.parallel === undefined ? {} : { parallelToolCalls: opts.parallel }),
  };
  return { agent, request, model, sink, store, ran };
}

const THREE = calls(
  { id: 'c1', name: 'read', arguments: { x: 'a' } },
  { id: 'c2', name: 'send', arguments: { x: 'b' } },
  { id: 'c3', name: 'read', arguments: { x: 'c' } },
);

const kinds = (log: readonly LogRecord[]): string[] =>
  log.map((r) => (r.kind === 'intent' ? `intent:${r.intent}` : r.kind));

const lastUser = (messages: readonly Message[]): Message => messages.at(-1) as Message;

describe('a step with several calls', () => {
  it('runs every call of the reply in one step and answers each, in order, in the next model call', async () => {
    const s = setup({ script: [THREE, final('done')], parallel: 3 });
    const result = await run(s.agent, s.request);
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'done', steps: 2, validActions: 3 });
    expect([...s.ran].sort()).toEqual(['read:a', 'read:c', 'send:b']);
    const [first] = result.trajectory;
    expect(first?.calls?.map((c) => [c.resultId, c.toolCallId, c.status, c.observation])).toEqual([
      ['s0.a0', 'c1', 'executed', 'read did a'],
      ['s0.a1', 'c2', 'executed', 'send did b'],
      ['s0.a2', 'c3', 'executed', 'read did c'],
    ]);
    expect(first).toMatchObject({ decision: 'action', actionStatus: 'executed', toolCallId: null });
    expect(lastUser(s.model.calls[1]?.messages ?? [])).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', toolCallId: 'c1', text: 'Observation: read did a' },
        { type: 'tool_result', toolCallId: 'c2', text: 'Observation: send did b' },
        { type: 'tool_result', toolCallId: 'c3', text: 'Observation: read did c' },
      ],
    });
    const log = await s.store.readLog('several');
    expect(kinds(log)).toEqual([
      'run_started',
      'intent:model_call',
      'result',
      'intent:actions',
      'call_result',
      'call_result',
      'call_result',
      'step',
      'intent:model_call',
      'result',
      'step',
      'run_ended',
    ]);
    expect(readRunLog(log).validActions).toBe(3);
    expect(s.model.calls[0]?.parallelToolCalls).toBe(3);
  });

  it('takes a reply with several calls as invalid at parallelToolCalls 1 (the default), as before, and runs none', async () => {
    const s = setup({ script: [THREE, final('done')] });
    const result = await run(s.agent, s.request);
    expect(s.ran).toEqual([]);
    expect(result.trajectory[0]).toMatchObject({ decision: 'invalid' });
    expect(result.trajectory[0]).not.toHaveProperty('calls');
    expect(result.trajectory[0]?.explanation).toMatch(/^You called 3 tools at once \("read", "send", "read"\)/);
    expect(s.model.calls[0]).not.toHaveProperty('parallelToolCalls');
  });

  it('runs the calls concurrently, never more than parallelToolCalls at once', async () => {
    for (const width of [2, 3]) {
      let running = 0;
      let most = 0;
      const waiting: (() => void)[] = [];
      let started = 0;
      const slow: Partial<ToolSpec> = {
        handler: async () => {
          running++;
          most = Math.max(most, running);
          // Each call finishes only once `width` calls have started: one at a time would never end.
          await new Promise<void>((resolve) => {
            waiting.push(resolve);
            started++;
            if (started % width === 0 || started === 3) for (const r of waiting.splice(0)) r();
          });
          running--;
          return 'ok';
        },
      };
      const s = setup({
        script: [THREE, final('done')],
        parallel: width,
        tools: tools([], { read: slow, send: slow }),
      });
      const result = await run(s.agent, s.request);
      expect(result.stopReason).toBe('final_answer');
      expect(most).toBe(width);
    }
  });

  it('runs a call that breaks its schema as not_executed and the step’s other calls as usual', async () => {
    const bad = calls(
      { id: 'c1', name: 'read', arguments: { x: 'a' } },
      { id: 'c2', name: 'read', arguments: { y: 1 } },
      { id: 'c3', name: 'nope', arguments: { x: 'c' } },
    );
    const s = setup({ script: [bad, final('done')], parallel: 3 });
    const result = await run(s.agent, s.request);
    expect(s.ran).toEqual(['read:a']);
    expect(result.trajectory[0]?.calls?.map((c) => c.status)).toEqual(['executed', 'not_executed', 'not_executed']);
    expect(result.validActions).toBe(1);
    const answers = lastUser(s.model.calls[1]?.messages ?? []).content.map((b) => ('text' in b ? b.text : ''));
    expect(answers).toEqual(['Observation: read did a', ...Array(2).fill('Observation: The action was not executed.')]);
  });

  it('runs only the first calls the valid-action budget allows, in order; the rest are not_executed, and the run stops', async () => {
    const s = setup({ script: [THREE, final('done')], parallel: 3, budget: { maxValidActions: 2 } });
    const result = await run(s.agent, s.request);
    expect(s.ran.sort()).toEqual(['read:a', 'send:b']);
    expect(result).toMatchObject({ stopReason: 'max_valid_actions', validActions: 2, steps: 1 });
    const third = result.trajectory[0]?.calls?.[2];
    expect(third).toMatchObject({ status: 'not_executed', observationIsSynthetic: true });
    expect(third?.observation).toMatch(/maxValidActions/);
  });

  it('treats one call as a one-call step: no per-call field, the action resultId as before', async () => {
    const one = calls({ id: 'c1', name: 'read', arguments: { x: 'a' } });
    const s = setup({ script: [one, final('done')], parallel: 3 });
    const result = await run(s.agent, s.request);
    expect(result.trajectory[0]).toMatchObject({ decision: 'action', toolCallId: 'c1', actionStatus: 'executed' });
    expect(result.trajectory[0]).not.toHaveProperty('calls');
    const log = await s.store.readLog('several');
    expect(kinds(log)).toContain('intent:action');
    expect(kinds(log)).not.toContain('call_result');
  });
});

describe('approvals in a step with several calls', () => {
  const PAYS = calls(
    { id: 'c1', name: 'pay', arguments: { x: 'a' } },
    { id: 'c2', name: 'read', arguments: { x: 'b' } },
    { id: 'c3', name: 'pay', arguments: { x: 'c' } },
  );

  it('asks one approval per call that needs one, runs nothing until all are answered, in any order', async () => {
    const s = setup({ script: [PAYS, final('done')], parallel: 3 });
    const first = await run(s.agent, s.request);
    expect(first.stopReason).toBe('awaiting_input');
    expect(first.pending).toMatchObject({ resultId: 's0.a0.input', kind: 'approval' });
    expect(first.pending?.decision?.action).toMatchObject({ name: 'pay', arguments: { x: 'a' } });
    const view = readRunLog(await s.store.readLog('several'));
    expect(view.openRequests.map((r) => r.resultId)).toEqual(['s0.a0.input', 's0.a2.input']);
    const asked = s.sink.events.filter((e) => e.type === 'input_requested');
    expect(asked).toHaveLength(2);
    expect(s.ran).toEqual([]);
    // The second request first: a deny. Still waiting on the first; nothing ran.
    const deny: InputReply = { kind: 'deny', resultId: 's0.a2.input', reason: 'not this one' };
    const second = await resume(s.agent, s.request, { input: deny });
    expect(second.pending?.resultId).toBe('s0.a0.input');
    expect(s.ran).toEqual([]);
    // A reply to a request already answered, or to none, is refused with the open ones named.
    await expect(resume(s.agent, s.request, { input: deny })).rejects.toThrow(InvalidInputError);
    const done = await resume(s.agent, s.request, { input: { kind: 'approve', resultId: 's0.a0.input' } });
    expect(done).toMatchObject({ stopReason: 'final_answer', validActions: 2 });
    expect(s.ran.sort()).toEqual(['pay:a', 'read:b']);
    expect(done.trajectory[0]?.calls?.map((c) => [c.status, c.observation])).toEqual([
      ['executed', 'pay did a'],
      ['executed', 'read did b'],
      ['denied', 'not this one'],
    ]);
  });

  it('keeps the crash law: crashed at every write and resumed, the same end, every never call exactly once', async () => {
    const result = await severalCallsLaw({ newStore: () => new InMemoryStore() });
    expect(severalCallsLawProblems(result)).toEqual([]);
    expect(result.report.reference).toMatchObject({ stopReason: 'final_answer', validActions: 6 });
  });
});

describe('a step with several calls under attack', () => {
  it('ends cancelled when aborted mid-step, with a call that ignores the abort abandoned and the finished call kept', async () => {
    const hang: Partial<ToolSpec> = { handler: () => new Promise<string>(() => undefined) };
    const store = new InMemoryStore();
    const s = setup({ script: [THREE, final('done')], parallel: 3, store, tools: tools([], { send: hang }) });
    const controller = new AbortController();
    s.sink.events.length = 0;
    const ran = run(s.agent, { ...s.request, cancelGraceMs: 50 }, { signal: controller.signal });
    // Abort once both reads have landed: the never call is still hanging, ignoring its signal.
    for (let i = 0; i < 200; i++) {
      const log = await store.readLog('several');
      if (log.filter((r) => r.kind === 'call_result').length === 2) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    controller.abort(new Error('stop'));
    await expect(ran).rejects.toThrow('stop');
    const view = readRunLog(await store.readLog('several'));
    expect(view.ended?.stopReason).toBe('cancelled');
    const log = await store.readLog('several');
    expect(log.filter((r) => r.kind === 'call_result').map((r) => r.resultId)).toEqual(['s0.a0', 's0.a2']);
  });

  it('ends cancelled on a cancel reply to any of several open requests', async () => {
    const PAYS = calls(
      { id: 'c1', name: 'pay', arguments: { x: 'a' } },
      { id: 'c2', name: 'pay', arguments: { x: 'b' } },
    );
    const s = setup({ script: [PAYS, final('done')], parallel: 2 });
    await run(s.agent, s.request);
    const end = await resume(s.agent, s.request, { input: { kind: 'cancel', resultId: 's0.a1.input' } });
    expect(end.stopReason).toBe('cancelled');
    expect(s.ran).toEqual([]);
    expect(readRunLog(await s.store.readLog('several')).state).toBe('ended');
  });

  it('refuses an upgrade that removes a tool an open call request names, writing nothing', async () => {
    const PAYS = calls(
      { id: 'c1', name: 'read', arguments: { x: 'a' } },
      { id: 'c2', name: 'pay', arguments: { x: 'b' } },
    );
    const s = setup({ script: [PAYS, final('done')], parallel: 2 });
    await run(s.agent, s.request);
    const before = await s.store.readLog('several');
    const registry = ToolRegistry.of(tools([]).filter((t) => t.name !== 'pay'));
    const upgraded = { ...s.request, tools: registry, executor: registry.executor() };
    await expect(resume(s.agent, upgraded, { upgrade: { reason: 'no more paying' } })).rejects.toThrow(
      UpgradeRefusedError,
    );
    expect(await s.store.readLog('several')).toEqual(before);
  });

  it('refuses a log that holds the outcome of a call a person denied: whoever wrote it ran what was refused', async () => {
    const PAYS = calls(
      { id: 'c1', name: 'pay', arguments: { x: 'a' } },
      { id: 'c2', name: 'read', arguments: { x: 'b' } },
    );
    const s = setup({ script: [PAYS, final('done')], parallel: 2 });
    await run(s.agent, s.request);
    await resume(s.agent, s.request, { input: { kind: 'deny', resultId: 's0.a0.input', reason: 'no' } });
    const log = await s.store.readLog('several');
    const at = log.findIndex((r) => r.kind === 'call_result');
    const forged: LogRecord = {
      kind: 'call_result',
      v: '1.2',
      stepIndex: 0,
      resultId: 's0.a0',
      outcome: {
        status: 'executed',
        observation: 'paid',
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: 0,
      },
      completedRun: false,
    };
    expect(() => readRunLog([...log.slice(0, at), forged, ...log.slice(at)])).toThrow(CorruptLogError);
  });

  it('after a crash mid-step runs the safe call again and asks a person to settle the never call, which is not run again', async () => {
    const store = new InMemoryStore();
    const ran: string[] = [];
    const s = setup({ script: [THREE, final('done')], parallel: 3, store, ran });
    await run(s.agent, s.request);
    // The log as a crash left it: the actions intent landed, only read c's outcome after it.
    const log = await store.readLog('several');
    const cut = log.filter(
      (r, i) =>
        i <= log.findIndex((x) => x.kind === 'intent' && x.intent === 'actions') ||
        (r.kind === 'call_result' && r.resultId === 's0.a2'),
    );
    const crashed = new InMemoryStore();
    for (const r of cut) {
      if (r.kind === 'run_started') await crashed.runStarted('several', r);
      else if (r.kind === 'intent') await crashed.intent('several', r);
      else if (r.kind === 'result') await crashed.result('several', r.resultId, r);
      else if (r.kind === 'call_result') await crashed.callResult('several', r);
    }
    ran.length = 0;
    const again = setup({ script: [THREE, final('done')], parallel: 3, store: crashed, ran });
    // An upgrade that removes the tool of a call in doubt is refused: that call must be settled first.
    const without = ToolRegistry.of(tools([]).filter((t) => t.name !== 'send'));
    const upgrade = { upgrade: { reason: 'send removed' } };
    await expect(
      resume(again.agent, { ...again.request, tools: without, executor: without.executor() }, upgrade),
    ).rejects.toThrow(/removes tool "send", which call s0\.a1 of step 0 names/);
    const first = await resume(again.agent, again.request);
    expect(first.stopReason).toBe('awaiting_input');
    expect(first.pending).toMatchObject({ resultId: 's0.a1.settle', kind: 'settle' });
    expect(ran).toEqual([]);
    const done = await resume(again.agent, again.request, {
      input: { kind: 'executed', resultId: 's0.a1.settle', observation: 'sent b' },
    });
    expect(done.stopReason).toBe('final_answer');
    expect(ran).toEqual(['read:a']);
    expect(done.trajectory[0]?.calls?.map((c) => c.observation)).toEqual(['read did a', 'sent b', 'read did c']);
    const replayed = again.sink.events.filter((e) => e.type === 'action_started');
    expect(replayed).toMatchObject([{ resultId: 's0.a0', replayed: true }]);
  });

  it('ends with interpreter_error for an actions decision without calls', async () => {
    const s = setup({ script: [THREE, final('done')], parallel: 3 });
    const agent = defineAgent({
      ...s.agent,
      interpreter: {
        params: { interpreter: 'empty' },
        interpret: () => ({ kind: 'actions', calls: [], historyText: '' }),
      },
    });
    const result = await run(agent, s.request);
    expect(result.stopReason).toBe('interpreter_error');
    expect(result.error).toMatch(/decision\.calls must be a non-empty array/);
  });
});
