/** Human input in core: approvals, answers and settlements, each surviving a stop of the process. */
import { describe, expect, it } from 'vitest';
import {
  defineAgent,
  exportRun,
  importRun,
  InMemoryStore,
  InvalidInputError,
  readRunLog,
  resume,
  run,
  StoreError,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type {
  DecisionInterpreter,
  InputReply,
  LogRecord,
  RunRequest,
  RunStore,
  ToolSpec,
} from '../../../src/core/index.ts';
import { humanInputLaw, lawProblems, lawReply } from '../../contract/human-input-law.ts';
import { harness, makeTools, timeless } from './fixtures.ts';
import type { Harness } from './fixtures.ts';

const NOTE_THEN_FINAL = ['{"tool":"note","args":{"text":"hello"}}', '{"final":"done"}'];

function withTools(tools: ToolSpec[], script = NOTE_THEN_FINAL, store: RunStore = new InMemoryStore()): Harness {
  return harness({ tools, script, store });
}

const approvalTools = (calls: string[]): ToolSpec[] =>
  makeTools(calls).map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
const askTool = (): ToolSpec => ({
  name: 'ask',
  description: 'Ask the user.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  answeredBy: 'human',
});

/** A store that fails (once) the n-th call of one write method, after letting it land or not. */
function failingStore(method: keyof RunStore, nth: number, lands: boolean): RunStore & { inner: InMemoryStore } {
  const inner = new InMemoryStore();
  let count = 0;
  const wrap =
    (m: keyof RunStore & keyof InMemoryStore) =>
    async (...args: unknown[]): Promise<void> => {
      const call = (inner[m] as (...a: unknown[]) => Promise<void>).bind(inner);
      if (m === method && ++count === nth) {
        if (lands) await call(...args);
        throw new Error(`simulated crash at ${m}`);
      }
      await call(...args);
    };
  return {
    inner,
    runStarted: wrap('runStarted'),
    intent: wrap('intent'),
    result: wrap('result'),
    step: wrap('step'),
    runEnded: wrap('runEnded'),
    inputRequest: wrap('inputRequest'),
    input: wrap('input'),
    readLog: (id) => inner.readLog(id),
  } as RunStore & { inner: InMemoryStore };
}

const kinds = (log: readonly LogRecord[]): string[] =>
  log.map((r) => (r.kind === 'intent' ? `intent:${r.intent}` : r.kind));

describe('approval', () => {
  it('stops at an approval request: awaiting_input with the recorded action pending, no run_ended, the tool not run', async () => {
    const calls: string[] = [];
    const h = withTools(approvalTools(calls));
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('awaiting_input');
    expect(result.pending).toEqual({
      resultId: 's0.input',
      stepIndex: 0,
      kind: 'approval',
      target: 'action',
      decision: expect.objectContaining({
        kind: 'action',
        action: { kind: 'tool_call', name: 'note', arguments: { text: 'hello' } },
      }),
    });
    expect(calls).toEqual([]);
    const log = await h.store.readLog('run-1');
    expect(kinds(log)).toEqual(['run_started', 'intent:model_call', 'result', 'input_request']);
    expect(h.sink.events.map((e) => e.type)).toContain('input_requested');
    expect(h.sink.events.at(-1)).toMatchObject({ type: 'input_requested', resultId: 's0.input' });
    expect(readRunLog(log)).toMatchObject({ state: 'awaiting_input', pending: result.pending });
  });

  it('a resume without input returns the same awaiting result and writes and delivers nothing', async () => {
    const h = withTools(approvalTools([]));
    const first = await run(h.agent, h.request);
    const before = (await h.store.readLog('run-1')).length;
    const events = h.sink.events.length;
    const again = await resume(h.agent, h.request);
    expect(again).toEqual({ ...first, eventDeliveryFailures: 0 });
    expect((await h.store.readLog('run-1')).length).toBe(before);
    expect(h.sink.events.length).toBe(events);
  });

  it('approve runs the recorded action once and finishes with the trajectory of a run that needed no approval', async () => {
    const calls: string[] = [];
    const h = withTools(approvalTools(calls));
    const { pending } = await run(h.agent, h.request);
    const result = await resume(h.agent, h.request, { input: { kind: 'approve', resultId: pending!.resultId } });
    expect(result.stopReason).toBe('final_answer');
    expect(result.pending).toBeNull();
    expect(calls).toEqual(['note:hello']);
    const plain = withTools(makeTools());
    expect(timeless(result.trajectory)).toEqual(timeless((await run(plain.agent, plain.request)).trajectory));
    const log = await h.store.readLog('run-1');
    // The resume that carries the reply out marks where it took over, before the reply lands.
    expect(kinds(log).slice(3, 8)).toEqual(['input_request', 'resumed', 'input', 'intent:action', 'step']);
    expect(h.sink.events.map((e) => e.type)).toContain('input_received');
  });

  it('deny records a denied step (a step, never a valid action) with the reason as observation, and the tool never runs', async () => {
    const calls: string[] = [];
    const h = withTools(approvalTools(calls));
    const { pending } = await run(h.agent, h.request);
    const result = await resume(h.agent, h.request, {
      input: { kind: 'deny', resultId: pending!.resultId, reason: 'Not today.' },
    });
    expect(calls).toEqual([]);
    expect(result.trajectory[0]).toMatchObject({
      decision: 'action',
      actionStatus: 'denied',
      observation: 'Not today.',
      observationIsSynthetic: false,
    });
    expect(result).toMatchObject({ stopReason: 'final_answer', steps: 2, validActions: 0 });
    const log = await h.store.readLog('run-1');
    expect(log.some((r) => r.kind === 'intent' && r.intent === 'action')).toBe(false);
    // The model saw the reason, wrapped by the observation template.
    expect(
      h.model.calls
        .at(-1)
        ?.messages.map((m) => m.content.map((b) => ('text' in b ? b.text : '')).join(''))
        .join('\n'),
    ).toContain('Observation:\nNot today.');
  });

  it('cancel ends the run cancelled, and the promise resolves (the person stopped it, not the signal)', async () => {
    const h = withTools(approvalTools([]));
    const { pending } = await run(h.agent, h.request);
    const result = await resume(h.agent, h.request, { input: { kind: 'cancel', resultId: pending!.resultId } });
    expect(result).toMatchObject({ stopReason: 'cancelled', pending: null });
    expect((await h.store.readLog('run-1')).at(-1)).toMatchObject({ kind: 'run_ended', stopReason: 'cancelled' });
  });

  it('executes the recorded decision even when the interpreter changed between the request and the reply', async () => {
    const calls: string[] = [];
    const h = withTools(approvalTools(calls));
    const { pending } = await run(h.agent, h.request);
    const liar: DecisionInterpreter = {
      params: h.agent.interpreter.params,
      interpret: () => ({
        kind: 'action',
        action: { kind: 'tool_call', name: 'note', arguments: { text: 'FORGED' } },
        trajectoryRepr: 'x',
        historyText: 'x',
      }),
    };
    const changed = defineAgent({ ...h.agent, interpreter: liar });
    await resume(changed, h.request, { input: { kind: 'approve', resultId: pending!.resultId } });
    expect(calls[0]).toBe('note:hello');
  });

  it("asks a custom executor's needsApproval hook, only about actions that validate", async () => {
    const calls: string[] = [];
    const tools = ToolRegistry.of(makeTools(calls));
    const inner = tools.executor();
    const asked: string[] = [];
    const executor = {
      needsApproval: (a: { kind: string; name?: string }) => (asked.push(a.name ?? a.kind), a.name === 'add'),
      execute: inner.execute.bind(inner),
    };
    const h = harness({
      script: [
        '{"tool":"nope","args":{}}',
        '{"tool":"add","args":{"a":1,"b":"x"}}',
        '{"tool":"add","args":{"a":1,"b":2}}',
        '{"final":"3"}',
      ],
      calls,
    });
    const request: RunRequest = { ...h.request, tools, executor };
    const result = await run(h.agent, request);
    expect(asked).toEqual(['add']);
    expect(result).toMatchObject({
      stopReason: 'awaiting_input',
      steps: 2,
      pending: { stepIndex: 2, kind: 'approval' },
    });
    expect(result.trajectory.map((s) => s.actionStatus)).toEqual(['not_executed', 'not_executed']);
  });
});

describe('answers', () => {
  it('a tool answered by a person needs no handler; the answer becomes an executed step', async () => {
    const h = withTools(
      [...makeTools(), askTool()],
      ['{"tool":"ask","args":{"q":"Which colour?"}}', '{"final":"blue it is"}'],
    );
    const first = await run(h.agent, h.request);
    expect(first.pending).toMatchObject({ kind: 'answer', target: 'action', resultId: 's0.input' });
    expect(() => ToolRegistry.of([askTool()]).executor()).not.toThrow();
    const result = await resume(h.agent, h.request, { input: { kind: 'answer', resultId: 's0.input', text: 'Blue.' } });
    expect(result.trajectory[0]).toMatchObject({ actionStatus: 'executed', observation: 'Blue.' });
    expect(result).toMatchObject({ stopReason: 'final_answer', validActions: 1 });
    const log = await h.store.readLog('run-1');
    expect(kinds(log).slice(3, 7)).toEqual(['input_request', 'resumed', 'input', 'step']);
  });
});

describe('wrong replies are refused with InvalidInputError, writing nothing', () => {
  const cases: [string, (p: string) => unknown, RegExp][] = [
    [
      'another resultId',
      () => ({ kind: 'approve', resultId: 's9.input' }),
      /open request is "s0.input", not "s9.input"/,
    ],
    [
      'a kind the request does not accept',
      (p) => ({ kind: 'executed', resultId: p, observation: 'x' }),
      /accepts approve, deny, cancel, not executed/,
    ],
    ['an unknown kind', (p) => ({ kind: 'maybe', resultId: p }), /reply\.kind must be one of/],
    ['a deny without a reason', (p) => ({ kind: 'deny', resultId: p }), /reply\.reason must be a string/],
    ['not an object', () => 'approve', /the reply must be an object/],
  ];
  it.each(cases)('%s', async (_name, make, message) => {
    const h = withTools(approvalTools([]));
    const { pending } = await run(h.agent, h.request);
    const before = await h.store.readLog('run-1');
    const e = await resume(h.agent, h.request, { input: make(pending!.resultId) as InputReply }).catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(InvalidInputError);
    expect((e as Error).message).toMatch(message);
    expect(await h.store.readLog('run-1')).toEqual(before);
  });

  it('a reply to an ended run', async () => {
    const h = withTools(makeTools());
    await run(h.agent, h.request);
    const before = await h.store.readLog('run-1');
    await expect(resume(h.agent, h.request, { input: { kind: 'approve', resultId: 's0.input' } })).rejects.toThrow(
      /has ended; it awaits no input/,
    );
    expect(await h.store.readLog('run-1')).toEqual(before);
  });

  it('a reply to a run that awaits nothing (interrupted at a step boundary)', async () => {
    const store = failingStore('intent', 3, false);
    const h = withTools(makeTools(), NOTE_THEN_FINAL, store);
    await expect(run(h.agent, h.request)).rejects.toBeInstanceOf(StoreError);
    const before = await store.inner.readLog('run-1');
    expect(readRunLog(before).state).toBe('at_boundary');
    const again = withTools(makeTools(), NOTE_THEN_FINAL, store.inner);
    await expect(
      resume(again.agent, again.request, { input: { kind: 'approve', resultId: 's1.input' } }),
    ).rejects.toThrow(/awaits no input/);
    expect(await store.inner.readLog('run-1')).toEqual(before);
  });
});

describe('settlement replaces the in_flight_unknown end', () => {
  async function inDoubt(calls: string[]): Promise<{ h: Harness; pendingId: string }> {
    const store = failingStore('step', 1, false);
    const h = withTools(makeTools(calls), NOTE_THEN_FINAL, store);
    await expect(run(h.agent, h.request)).rejects.toBeInstanceOf(StoreError);
    expect(calls).toEqual(['note:hello']);
    const again = withTools(makeTools(calls), NOTE_THEN_FINAL, store.inner);
    const r = await resume(again.agent, again.request);
    expect(r).toMatchObject({
      stopReason: 'awaiting_input',
      pending: {
        kind: 'settle',
        target: 'action',
        resultId: 's0.settle',
        decision: expect.objectContaining({ kind: 'action' }),
      },
    });
    expect(calls).toEqual(['note:hello']);
    return { h: again, pendingId: r.pending!.resultId };
  }

  it('executed: the person says it happened; recorded with their observation, not run again', async () => {
    const calls: string[] = [];
    const { h, pendingId } = await inDoubt(calls);
    await expect(resume(h.agent, h.request, { input: { kind: 'approve', resultId: pendingId } })).rejects.toThrow(
      /a settle request of an action accepts executed, retry, deny, cancel, not approve/,
    );
    const result = await resume(h.agent, h.request, {
      input: { kind: 'executed', resultId: pendingId, observation: 'noted hello (checked by hand)' },
    });
    expect(calls).toEqual(['note:hello']);
    expect(result.trajectory[0]).toMatchObject({
      actionStatus: 'executed',
      observation: 'noted hello (checked by hand)',
    });
    expect(result.stopReason).toBe('final_answer');
  });

  it('retry: runs it again this once, behind a new intent; a crash during the retry asks again rather than running a third time', async () => {
    const calls: string[] = [];
    const { h, pendingId } = await inDoubt(calls);
    const crashing = failingStore('step', 1, false);
    await importRun(crashing.inner, 'run-1', await exportRun(h.store, 'run-1'));
    const c = withTools(makeTools(calls), NOTE_THEN_FINAL, crashing);
    await expect(resume(c.agent, c.request, { input: { kind: 'retry', resultId: pendingId } })).rejects.toBeInstanceOf(
      StoreError,
    );
    expect(calls).toEqual(['note:hello', 'note:hello']);
    const d = withTools(makeTools(calls), NOTE_THEN_FINAL, crashing.inner);
    const r = await resume(d.agent, d.request);
    expect(r).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'settle', resultId: 's0.settle' } });
    expect(calls).toHaveLength(2);
    // Each resume marks where it took over: the settlement it asked for, then the retry's crash.
    expect(kinds(await crashing.inner.readLog('run-1')).slice(3)).toEqual([
      'intent:action',
      'resumed',
      'input_request',
      'input',
      'intent:action',
      'resumed',
      'input_request',
    ]);
  });

  it('deny: nothing more runs; the step is denied', async () => {
    const calls: string[] = [];
    const { h, pendingId } = await inDoubt(calls);
    const result = await resume(h.agent, h.request, {
      input: { kind: 'deny', resultId: pendingId, reason: 'treat it as not done' },
    });
    expect(result.trajectory[0]).toMatchObject({ actionStatus: 'denied', observation: 'treat it as not done' });
    expect(calls).toEqual(['note:hello']);
  });

  it('a model call in flight under modelReplayPolicy never: settle accepts retry and cancel only', async () => {
    const store = failingStore('result', 1, false);
    const h = harness({ store, request: { modelReplayPolicy: 'never' }, script: ['{"final":"x"}'] });
    await expect(run(h.agent, h.request)).rejects.toBeInstanceOf(StoreError);
    const again = harness({ store: store.inner, request: { modelReplayPolicy: 'never' }, script: ['{"final":"x"}'] });
    const r = await resume(again.agent, again.request);
    expect(r.pending).toEqual({
      resultId: 's0.settle',
      stepIndex: 0,
      kind: 'settle',
      target: 'model_call',
      decision: null,
    });
    await expect(
      resume(again.agent, again.request, { input: { kind: 'executed', resultId: 's0.settle', observation: 'x' } }),
    ).rejects.toThrow(/a settle request of a model call accepts retry, cancel, not executed/);
    const done = await resume(again.agent, again.request, { input: { kind: 'retry', resultId: 's0.settle' } });
    expect(done).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'x' });
    expect(again.model.calls).toHaveLength(1);
  });

  it('a store without input methods ends a never action in flight as in_flight_unknown', async () => {
    const store = failingStore('step', 1, false);
    const h = withTools(makeTools(), NOTE_THEN_FINAL, store);
    await expect(run(h.agent, h.request)).rejects.toBeInstanceOf(StoreError);
    const inner = store.inner;
    const old: RunStore = {
      runStarted: (a, b) => inner.runStarted(a, b),
      intent: (a, b) => inner.intent(a, b),
      result: (a, b, c) => inner.result(a, b, c),
      step: (a, b) => inner.step(a, b),
      runEnded: (a, b) => inner.runEnded(a, b),
      readLog: (a) => inner.readLog(a),
    };
    const again = withTools(makeTools(), NOTE_THEN_FINAL, old);
    expect((await resume(again.agent, again.request)).stopReason).toBe('in_flight_unknown');
  });
});

describe('a reply that landed is carried out after a crash', () => {
  it('crash right after the input record: resume without input approves and runs the action once', async () => {
    const calls: string[] = [];
    const store = failingStore('input', 1, true);
    const h = withTools(approvalTools(calls), NOTE_THEN_FINAL, store);
    const { pending } = await run(h.agent, h.request);
    await expect(
      resume(h.agent, h.request, { input: { kind: 'approve', resultId: pending!.resultId } }),
    ).rejects.toBeInstanceOf(StoreError);
    expect(readRunLog(await store.inner.readLog('run-1'))).toMatchObject({
      state: 'in_flight',
      inFlight: { resolution: 'apply_input' },
    });
    const again = withTools(approvalTools(calls), NOTE_THEN_FINAL, store.inner);
    const result = await resume(again.agent, again.request);
    expect(result.stopReason).toBe('final_answer');
    expect(calls).toEqual(['note:hello']);
  });
});

describe('the human-input law at every write point (crashAtEveryWrite from polyloop/testing)', () => {
  it.each(['safe', 'never'] as const)(
    'approvals, a denial, an answer and settlements (model replay %s): the uninterrupted trajectory after every crash; each never action exactly once, the denied one never',
    async (modelReplayPolicy) => {
      const result = await humanInputLaw({ modelReplayPolicy, newStore: () => new InMemoryStore() });
      expect(lawProblems(result)).toEqual([]);
    },
  );

  it('the law check can fail: a person who answers every settlement with retry runs the approved note twice', async () => {
    const result = await humanInputLaw({
      modelReplayPolicy: 'safe',
      newStore: () => new InMemoryStore(),
      reply: (world) => (p) => (p.kind === 'settle' ? { kind: 'retry', resultId: p.resultId } : lawReply(world)(p)),
    });
    expect(lawProblems(result).some((p) => /the approved note ran 2 times/.test(p))).toBe(true);
  });
});
