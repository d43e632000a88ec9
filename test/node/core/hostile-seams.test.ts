/**
 * Whatever a model, interpreter, executor, sink or store does, the library writes nothing it cannot
 * read back, cancellation settles on time, nothing is written after a failed or abandoned write,
 * and a tool's replay policy holds under any executor.
 */
import { describe, expect, it } from 'vitest';
import { decodeLog, defineAgent, encodeRecord, InMemoryStore, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { ActionExecutor, DecisionInterpreter, EventSink, LogRecord, ModelCall, ModelCaller, RunEvent, RunRequest, RunStore } from '../../../src/core/index.ts';
import { collectingSink, faultyStore, SimulatedCrashError } from '../../../src/testing/index.ts';
import { harness, makeTools, timeless } from './fixtures.ts';

const deep = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
};

function modelReturning(reply: unknown): ModelCaller {
  return { params: { model: 'raw' }, call: async () => reply as never };
}

/** The log must decode, resume must hand back the stored result, nothing may throw. */
async function expectReadable(store: RunStore, agent: Parameters<typeof resume>[0], request: RunRequest): Promise<readonly LogRecord[]> {
  const log = await store.readLog(request.runId);
  const text = log.map((r) => encodeRecord(r)).join('\n');
  expect(decodeLog(text).records).toHaveLength(log.length);
  const again = await resume(agent, request);
  expect(again.stopReason).toBe(log.at(-1)?.kind === 'run_ended' ? (log.at(-1) as { stopReason: string }).stopReason : 'unexpected');
  return log;
}

describe('a model reply of the wrong shape is a model failure, and the log stays readable', () => {
  it.each<[string, unknown, RegExp]>([
    ['text null', { callId: 'c0', text: null, reasoning: null }, /text must be a string, got null/],
    ['a bare string', 'hello', /the reply must be an object, got a string/],
    ['text a number', { callId: 'c0', text: 42, reasoning: null }, /text must be a string, got a number/],
    ['callId a number', { callId: 5, text: 'hi', reasoning: null }, /callId must be a string or null, got a number/],
    ['callId empty', { callId: '', text: 'hi', reasoning: null }, /callId must not be ""/],
    ['toolCalls not an array', { callId: null, text: '', reasoning: null, toolCalls: 'add' }, /toolCalls must be an array/],
    ['tool-call arguments nested 10,000 deep', { callId: null, text: '', reasoning: null, toolCalls: [{ id: 't', name: 'add', arguments: deep(10_000) }] }, /nested more than 100 levels deep/],
    ['a content block of unknown type', { callId: null, text: 'x', reasoning: null, content: [{ type: 'image', url: 'u' }] }, /content\[0\]\.type must be one of/],
    ['a BigInt in tool arguments', { callId: null, text: '', reasoning: null, toolCalls: [{ id: 't', name: 'add', arguments: { a: 1n } }] }, /arguments\.a is a bigint/],
    ['null', null, /the reply must be an object, got null/],
    ['a BigInt in an extra field of a content block', { callId: null, text: 'x', reasoning: null, content: [{ type: 'text', text: 'x', tokens: 1n }] }, /content\[0\]\.tokens is a bigint/],
    ['a Date in an extra field of a tool call', { callId: null, text: '', reasoning: null, toolCalls: [{ id: 't', name: 'add', arguments: {}, at: new Date(0) }] }, /toolCalls\[0\]\.at is a Date object/],
  ])('%s', async (_name, reply, message) => {
    const h = harness();
    const agent = defineAgent({ ...h.agent, model: modelReturning(reply) });
    const result = await run(agent, h.request);
    expect(result.stopReason).toBe('model_error');
    expect(result.trajectory[0]?.decision).toBe('model_error');
    expect(result.trajectory[0]?.observation).toMatch(/^TypeError: the model caller returned a malformed reply: /);
    expect(result.trajectory[0]?.observation).toMatch(message);
    const log = await expectReadable(h.store, agent, h.request);
    expect(log.some((r) => r.kind === 'result')).toBe(false);
  });

  it('accepts a reply without reasoning as reasoning null', async () => {
    const h = harness();
    const agent = defineAgent({ ...h.agent, model: modelReturning({ callId: null, text: '{"final":"ok"}' }) });
    const result = await run(agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(result.trajectory[0]?.reasoning).toBeNull();
  });

  it('does not let a model caller change the stored reply by mutating it after returning', async () => {
    const h = harness();
    const reply = { callId: null, text: '', reasoning: null, toolCalls: [{ id: 't0', name: 'add', arguments: { a: 1, b: 2 } }] };
    let calls = 0;
    const model: ModelCaller = { params: { model: 'mutating' }, call: async () => (calls++ === 0 ? reply : { callId: null, text: '', reasoning: null, toolCalls: [] }) };
    const interpreter: DecisionInterpreter = {
      params: {},
      interpret(r) {
        const call = r.toolCalls?.[0];
        (reply.toolCalls[0] as { arguments: unknown }).arguments = { a: 100, b: 200 };
        if (!call) return { kind: 'final', answer: 'done', historyText: '' };
        return { kind: 'action', action: { kind: 'tool_call', name: call.name, arguments: call.arguments }, trajectoryRepr: 'add', historyText: '' };
      },
    };
    const agent = defineAgent({ ...h.agent, model, interpreter });
    const result = await run(agent, h.request);
    expect(result.trajectory[0]?.observation).toBe('3');
    const stored = (await h.store.readLog('run-1')).find((r) => r.kind === 'result');
    expect(stored?.kind === 'result' && stored.reply.toolCalls[0]?.arguments).toEqual({ a: 1, b: 2 });
  });
});

describe('a decision or outcome of the wrong shape is the seam failing, and the log stays readable', () => {
  const interpreterReturning = (decision: unknown): DecisionInterpreter => ({ params: {}, interpret: () => decision as never });

  it.each<[string, unknown, RegExp]>([
    ['an unknown kind', { kind: 'banana', historyText: '' }, /decision\.kind must be/],
    ['an action without an action', { kind: 'action', trajectoryRepr: 'x', historyText: '' }, /decision\.action must be an object/],
    ['historyText a number', { kind: 'final', answer: 'a', historyText: 7 }, /decision\.historyText must be a string/],
    ['arguments nested 10,000 deep', { kind: 'action', action: { kind: 'tool_call', name: 'add', arguments: deep(10_000) }, trajectoryRepr: 'x', historyText: '' }, /nested more than 100 levels deep/],
    ['a BigInt in an extra field', { kind: 'final', answer: 'a', historyText: '', cost: 1n }, /decision\.cost is a bigint/],
    ['a cycle in the arguments', (() => { const a: Record<string, unknown> = {}; a['self'] = a; return { kind: 'action', action: { kind: 'tool_call', name: 'add', arguments: a }, trajectoryRepr: 'x', historyText: '' }; })(), /cycle/],
  ])('an interpreter returning %s ends the run interpreter_error', async (_name, decision, message) => {
    const h = harness();
    const agent = defineAgent({ ...h.agent, interpreter: interpreterReturning(decision) });
    const result = await run(agent, h.request);
    expect(result.stopReason).toBe('interpreter_error');
    expect(result.trajectory[0]?.observation).toMatch(/^TypeError: the interpreter returned a malformed decision: /);
    expect(result.trajectory[0]?.observation).toMatch(message);
    expect(h.calls).toEqual([]);
    await expectReadable(h.store, agent, h.request);
  });

  it.each<[string, unknown, RegExp]>([
    ['undefined', undefined, /the outcome must be an object/],
    ['an unknown status', { status: 'done', observation: 'x', observationIsSynthetic: false, envReportedCompletion: false, observationTruncatedChars: 0 }, /outcome\.status must be/],
    ['a numeric observation', { status: 'executed', observation: 12345, observationIsSynthetic: false, envReportedCompletion: false, observationTruncatedChars: 0 }, /outcome\.observation must be a string/],
    ['a negative truncation count', { status: 'executed', observation: 'x', observationIsSynthetic: false, envReportedCompletion: false, observationTruncatedChars: -1 }, /observationTruncatedChars/],
  ])('a custom executor returning %s gives an env_error outcome', async (_name, outcome, message) => {
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"x"}'] });
    const executor: ActionExecutor = { execute: async () => outcome as never };
    const request = { ...h.request, executor };
    const result = await run(h.agent, request);
    expect(result.stopReason).toBe('env_error');
    expect(result.trajectory[0]?.actionStatus).toBe('env_error');
    expect(result.trajectory[0]?.observation).toMatch(message);
    await expectReadable(h.store, h.agent, request);
  });
});

/** A promise that never settles unless told to, and ignores every signal. */
function stuck<T>(): { promise: Promise<T>; settle: (v: T) => void } {
  let settle!: (v: T) => void;
  const promise = new Promise<T>((resolve) => (settle = resolve));
  return { promise, settle };
}

describe('abort wins within cancelGraceMs whatever a seam does', () => {
  it('a model call that never settles and ignores the signal: run rejects, the log ends cancelled, a late reply changes nothing', async () => {
    const h = harness();
    const hang = stuck<unknown>();
    let sawCall!: () => void;
    const called = new Promise<void>((r) => (sawCall = r));
    const model: ModelCaller = { params: { model: 'deaf' }, call: (c: ModelCall) => (sawCall(), setTimeout(() => (c.onDelta?.('late delta'), c.onDelta?.('late thought', 'reasoning')), 30), hang.promise as never) };
    const agent = defineAgent({ ...h.agent, model });
    const ctl = new AbortController();
    const pending = run(agent, { ...h.request, cancelGraceMs: 50 }, { signal: ctl.signal });
    await called;
    const reason = new Error('user stop');
    ctl.abort(reason);
    await expect(pending).rejects.toBe(reason);
    const log = await h.store.readLog('run-1');
    expect(log.at(-1)).toMatchObject({ kind: 'run_ended', stopReason: 'cancelled' });
    const eventsBefore = h.sink.events.length;
    hang.settle({ callId: null, text: '{"tool":"note","args":{"text":"late"}}', reasoning: null });
    await new Promise((r) => setTimeout(r, 60));
    expect(await h.store.readLog('run-1')).toHaveLength(log.length);
    expect(h.sink.events).toHaveLength(eventsBefore);
    expect(h.sink.events.at(-1)?.type).toBe('run_ended');
    expect(h.calls).toEqual([]);
  });

  it('a tool handler that never settles and ignores the signal: run rejects, the log ends cancelled, a late return changes nothing', async () => {
    const hang = stuck<string>();
    let sawCall!: () => void;
    const called = new Promise<void>((r) => (sawCall = r));
    const tools = [...makeTools(), { name: 'wait', description: 'Waits forever.', parameters: { type: 'object' }, handler: () => (sawCall(), hang.promise) }];
    const h = harness({ tools, script: ['{"tool":"wait","args":{}}', '{"final":"x"}'] });
    const ctl = new AbortController();
    const pending = run(h.agent, { ...h.request, cancelGraceMs: 50 }, { signal: ctl.signal });
    await called;
    ctl.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    const log = await h.store.readLog('run-1');
    expect(log.at(-1)).toMatchObject({ kind: 'run_ended', stopReason: 'cancelled' });
    expect(log.filter((r) => r.kind === 'step')).toHaveLength(0);
    const eventsBefore = h.sink.events.length;
    hang.settle('finally done');
    await new Promise((r) => setTimeout(r, 20));
    expect(await h.store.readLog('run-1')).toHaveLength(log.length);
    expect(h.sink.events).toHaveLength(eventsBefore);
  });

  it('an event sink that never settles and ignores the signal: run rejects and the log still ends cancelled', async () => {
    const h = harness();
    let sawStep!: () => void;
    const inStep = new Promise<void>((r) => (sawStep = r));
    const events: EventSink = { params: {}, deliver: (e: RunEvent) => (e.type === 'step_started' ? (sawStep(), new Promise<void>(() => undefined)) : undefined) };
    const agent = defineAgent({ ...h.agent, events });
    const ctl = new AbortController();
    const pending = run(agent, { ...h.request, cancelGraceMs: 50 }, { signal: ctl.signal });
    await inStep;
    ctl.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect((await h.store.readLog('run-1')).at(-1)).toMatchObject({ kind: 'run_ended', stopReason: 'cancelled' });
  });

  it('a run_ended write that outlasts the grace period: run rejects on time, and the lease is released only after that write settled', async () => {
    const inner = new InMemoryStore();
    const order: string[] = [];
    const slowEnd = stuck<void>();
    const store: RunStore = {
      runStarted: (id, r) => inner.runStarted(id, r),
      intent: (id, r) => inner.intent(id, r),
      result: (id, rid, r) => inner.result(id, rid, r),
      step: (id, r) => inner.step(id, r),
      readLog: (id) => inner.readLog(id),
      runEnded: (id, r) => slowEnd.promise.then(() => (order.push('run_ended landed'), inner.runEnded(id, r))),
      acquire: async () => async () => void order.push('released'),
    };
    const h = harness({ store });
    const hang = stuck<never>();
    let sawCall!: () => void;
    const called = new Promise<void>((r) => (sawCall = r));
    const agent = defineAgent({ ...h.agent, model: { params: { model: 'deaf' }, call: () => (sawCall(), hang.promise) } });
    const ctl = new AbortController();
    const pending = run(agent, { ...h.request, cancelGraceMs: 20 }, { signal: ctl.signal });
    await called;
    ctl.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect(order).toEqual([]);
    slowEnd.settle();
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual(['run_ended landed', 'released']);
  });
});

describe('nothing is written after a failed write, even when the signal aborted', () => {
  it.each(['runStarted', 'intent', 'result', 'step'] as const)('a %s write that fails while aborting leaves no run_ended behind it', async (method) => {
    const inner = new InMemoryStore();
    const ctl = new AbortController();
    const store: RunStore = {
      runStarted: (id, r) => inner.runStarted(id, r),
      intent: (id, r) => inner.intent(id, r),
      result: (id, rid, r) => inner.result(id, rid, r),
      step: (id, r) => inner.step(id, r),
      readLog: (id) => inner.readLog(id),
      runEnded: (id, r) => inner.runEnded(id, r),
      [method]: async () => {
        ctl.abort(new Error('stop'));
        throw new Error('disk gone');
      },
    };
    const h = harness({ store });
    await expect(run(h.agent, h.request, { signal: ctl.signal })).rejects.toThrow('stop');
    const log = await inner.readLog('run-1');
    expect(log.some((r) => r.kind === 'run_ended')).toBe(false);
    if (method === 'runStarted') expect(log).toEqual([]);
  });
});

describe('events are frozen: a sink cannot change what the run goes on with', () => {
  it('a sink that mutates step_finished and action events changes neither the next prompt nor the log', async () => {
    const prompts = (agentSink: EventSink | null) => {
      const h = harness();
      const seen: string[] = [];
      const inner = h.agent.model;
      const model: ModelCaller = { params: inner.params, call: (c) => (seen.push(JSON.stringify(c.messages)), inner.call(c)) };
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

describe('records have one key order: a decoded log serialises byte-identically to the live run', () => {
  it('the live trajectory and the stored one are the same JSON, and a resumed trajectory matches the uninterrupted one byte for byte (timestamps aside)', async () => {
    const reference = harness();
    const live = await run(reference.agent, reference.request);
    const stored = (await reference.store.readLog('run-1')).flatMap((r) => (r.kind === 'step' ? [r.step] : []));
    expect(JSON.stringify(stored)).toBe(JSON.stringify(live.trajectory));
    const untimed = (s: readonly object[]) => JSON.stringify(s.map((x) => ({ ...x, startedAt: '', endedAt: '' })));
    for (const crashAfter of [3, 7, 12]) {
      const inner = new InMemoryStore();
      const h = harness({ store: faultyStore(inner, { crashAfterWrites: crashAfter }) });
      await expect(run(h.agent, h.request)).rejects.toMatchObject({ cause: expect.any(SimulatedCrashError) });
      const again = harness({ store: inner });
      const resumed = await resume(again.agent, again.request);
      expect(untimed(resumed.trajectory)).toBe(untimed(live.trajectory));
    }
  });
});

describe("a tool's replay policy holds under a custom executor", () => {
  const customExecutor = (replayPolicy: 'safe' | 'never' | undefined, ran: string[]): ActionExecutor => {
    const inner = ToolRegistry.of(makeTools(ran)).executor();
    return { ...(replayPolicy ? { replayPolicy } : {}), execute: (a, ctx) => inner.execute(a, ctx) };
  };

  it('a never tool is recorded never and not re-run after a crash (a person settles it), even when the executor says safe', async () => {
    const ran: string[] = [];
    const inner = new InMemoryStore();
    // Writes: run_started, model intent, result + action intent land; the tool runs; the step write crashes.
    const h = harness({ store: faultyStore(inner, { crashAfterWrites: 3 }), script: ['{"tool":"note","args":{"text":"once"}}', '{"final":"x"}'] });
    const request = { ...h.request, executor: customExecutor('safe', ran) };
    await expect(run(h.agent, request)).rejects.toMatchObject({ cause: expect.any(SimulatedCrashError) });
    const intent = (await inner.readLog('run-1')).find((r) => r.kind === 'intent' && r.intent === 'action');
    expect(intent).toMatchObject({ replayPolicy: 'never' });
    const again = harness({ store: inner, script: ['{"tool":"note","args":{"text":"once"}}', '{"final":"x"}'] });
    const result = await resume(again.agent, { ...again.request, executor: customExecutor('safe', ran) });
    expect(result).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'settle', target: 'action' } });
    expect(ran).toEqual(['note:once']);
  });

  it("an executor's explicit never makes a safe tool never", async () => {
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"x"}'] });
    await run(h.agent, { ...h.request, executor: customExecutor('never', []) });
    const intent = (await h.store.readLog('run-1')).find((r) => r.kind === 'intent' && r.intent === 'action');
    expect(intent).toMatchObject({ replayPolicy: 'never' });
  });

  it("the executor's replay policy is part of the run's identity", async () => {
    const h = harness({ script: ['{"final":"x"}'] });
    await run(h.agent, { ...h.request, executor: customExecutor('safe', []) });
    await expect(resume(h.agent, { ...h.request, executor: customExecutor('never', []) })).rejects.toThrow(/executorReplayPolicy/);
  });
});

describe('a custom executor next to tools sees only tool calls that validate', () => {
  it.each([
    ['an unknown tool', '{"tool":"nope","args":{}}', /unknown tool "nope"/],
    ['arguments that fail the schema', '{"tool":"add","args":{"a":"one","b":2}}', /do not match its schema/],
  ])('%s is not_executed with a synthetic observation and never reaches the executor', async (_name, line, message) => {
    const seen: unknown[] = [];
    const h = harness({ script: [line, '{"final":"x"}'] });
    const executor: ActionExecutor = { replayPolicy: 'never', execute: async (a) => (seen.push(a), { status: 'executed', observation: 'ran', observationIsSynthetic: false, envReportedCompletion: false, observationTruncatedChars: 0 }) };
    const result = await run(h.agent, { ...h.request, executor });
    expect(seen).toEqual([]);
    expect(result.trajectory[0]).toMatchObject({ actionStatus: 'not_executed', observationIsSynthetic: true });
    expect(result.trajectory[0]?.observation).toMatch(message);
    expect(result.validActions).toBe(0);
    const intent = (await h.store.readLog('run-1')).find((r) => r.kind === 'intent' && r.intent === 'action');
    expect(intent).toMatchObject({ replayPolicy: 'safe' });
  });

  it('with no tools, a custom executor still receives every action (it is the environment)', async () => {
    const seen: unknown[] = [];
    const h = harness({ script: ['{"tool":"anything","args":{"x":1}}', '{"final":"x"}'], tools: [] });
    const executor: ActionExecutor = { execute: async (a) => (seen.push(a), { status: 'executed', observation: 'ran', observationIsSynthetic: false, envReportedCompletion: false, observationTruncatedChars: 0 }) };
    const result = await run(h.agent, { ...h.request, executor });
    expect(seen).toHaveLength(1);
    expect(result.trajectory[0]?.actionStatus).toBe('executed');
  });
});

describe("a run's identity is made of the params defineAgent froze", () => {
  it('changing a model caller\'s params after defineAgent changes neither the snapshot nor a resume', async () => {
    const params: Record<string, string> = { model: 'm-1' };
    const h = harness({ script: ['{"final":"3"}'] });
    const inner = h.agent.model;
    const agent = defineAgent({ ...h.agent, model: { params, call: (c) => inner.call(c) } });
    params['model'] = 'm-2';
    await run(agent, h.request);
    const started = (await h.store.readLog('run-1'))[0];
    expect(started?.kind === 'run_started' && started.snapshot['model']).toEqual({ model: 'm-1' });
    params['model'] = 'm-3';
    const result = await resume(agent, h.request);
    expect(result.stopReason).toBe('final_answer');
  });

  it('refuses an executor replay policy that is neither safe nor never', async () => {
    const h = harness();
    const executor = { replayPolicy: 'sometimes', execute: h.request.executor.execute.bind(h.request.executor) } as unknown as ActionExecutor;
    await expect(run(h.agent, { ...h.request, executor })).rejects.toThrow(/request\.executor\.replayPolicy must be/);
  });
});

describe('a lease the store fails to release is reported, not swallowed', () => {
  const leasing = (release: () => Promise<void>): RunStore => {
    const inner = new InMemoryStore();
    return {
      runStarted: (id, r) => inner.runStarted(id, r),
      intent: (id, r) => inner.intent(id, r),
      result: (id, rid, r) => inner.result(id, rid, r),
      step: (id, r) => inner.step(id, r),
      readLog: (id) => inner.readLog(id),
      runEnded: (id, r) => inner.runEnded(id, r),
      acquire: async () => release,
    };
  };

  it('as a warning event before run_ended, once the last record landed', async () => {
    let releases = 0;
    const h = harness({ store: leasing(async () => void (releases++, await Promise.reject(new Error('lock file vanished')))) });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(releases).toBe(1);
    const types = h.sink.events.map((e) => e.type);
    expect(types.slice(-2)).toEqual(['warning', 'run_ended']);
    expect(h.sink.events.at(-2)).toMatchObject({ code: 'lease_release_failed', message: expect.stringContaining('lock file vanished') });
  });

  it('as a warning event when the run fails before its end', async () => {
    const h = harness({ store: leasing(async () => Promise.reject(new Error('lock file vanished'))) });
    await run(h.agent, h.request);
    await expect(run(h.agent, h.request)).rejects.toThrow(/already|exists/);
    expect(h.sink.events.at(-1)).toMatchObject({ type: 'warning', code: 'lease_release_failed' });
  });
});

describe('a decision is read once: what is checked, gated, logged and executed is one copy', () => {
  const gatedTools = (ran: string[]) => [
    { name: 'read', description: 'read', parameters: { type: 'object' }, replayPolicy: 'safe' as const, handler: async () => (ran.push('read'), 'ok') },
    { name: 'wipe', description: 'wipe', parameters: { type: 'object' }, replayPolicy: 'never' as const, needsApproval: true, handler: async () => (ran.push('wipe'), 'wiped') },
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
      value: new Proxy({ kind: 'tool_call', name: 'read', arguments: {} }, {
        getPrototypeOf: () => (++asked === 1 ? Date.prototype : Object.prototype),
      }),
    }));
    const h = harness({ interpreter, tools: gatedTools(ran), script: ['{"tool":"read"}', '{"final":"x"}'] });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('interpreter_error');
    expect(ran).toEqual([]);
  });

  it('a decision that changes between reads is carried out as read the first time, and logged the same', async () => {
    const ran: string[] = [];
    let reads = 0;
    const interpreter = hostile(() => ({ get: () => ({ kind: 'tool_call', name: ++reads === 1 ? 'read' : 'wipe', arguments: {} }) }));
    const h = harness({ interpreter, tools: gatedTools(ran), script: ['{"tool":"read"}', '{"final":"x"}'] });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(ran).toEqual(['read']);
    const intents = (await h.store.readLog('run-1')).flatMap((r) => (r.kind === 'intent' && r.intent === 'action' ? [r.decision.action] : []));
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
    const agent = defineAgent({ model, interpreter: h.agent.interpreter, store: h.store, events: h.sink, syntheticObservations: h.agent.syntheticObservations });
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
    const agent = defineAgent({ model, interpreter: h.agent.interpreter, store: h.store, events: h.sink, syntheticObservations: h.agent.syntheticObservations });
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
    const agent = defineAgent({ model, interpreter: h.agent.interpreter, store: h.store, events: h.sink, syntheticObservations: h.agent.syntheticObservations });
    expect((await run(agent, h.request)).stopReason).toBe('final_answer');
    expect(lasts.join('\n')).not.toContain('forged');
  });
});
