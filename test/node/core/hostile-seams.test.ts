/**
 * Whatever a model, interpreter, executor or store hands back, the library writes nothing it cannot
 * read back: a reply, decision or outcome of the wrong shape is that seam failing, a decoded log
 * serialises as the live run did, and a lease the store fails to release is reported.
 */
import { describe, expect, it } from 'vitest';
import { decodeLog, defineAgent, encodeRecord, InMemoryStore, resume, run } from '../../../src/core/index.ts';
import type {
  ActionExecutor,
  DecisionInterpreter,
  LogRecord,
  ModelCaller,
  RunRequest,
  RunStore,
} from '../../../src/core/index.ts';
import { faultyStore, SimulatedCrashError } from '../../../src/testing/index.ts';
import { harness } from './fixtures.ts';

const deep = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
};

function modelReturning(reply: unknown): ModelCaller {
  return { params: { model: 'raw' }, call: async () => reply as never };
}

/** The log must decode, resume must hand back the stored result, nothing may throw. */
async function expectReadable(
  store: RunStore,
  agent: Parameters<typeof resume>[0],
  request: RunRequest,
): Promise<readonly LogRecord[]> {
  const log = await store.readLog(request.runId);
  const text = log.map((r) => encodeRecord(r)).join('\n');
  expect(decodeLog(text).records).toHaveLength(log.length);
  const again = await resume(agent, request);
  expect(again.stopReason).toBe(
    log.at(-1)?.kind === 'run_ended' ? (log.at(-1) as { stopReason: string }).stopReason : 'unexpected',
  );
  return log;
}

describe('a model reply of the wrong shape is a model failure, and the log stays readable', () => {
  it.each<[string, unknown, RegExp]>([
    ['text null', { callId: 'c0', text: null, reasoning: null }, /text must be a string, got null/],
    ['a bare string', 'hello', /the reply must be an object, got a string/],
    ['text a number', { callId: 'c0', text: 42, reasoning: null }, /text must be a string, got a number/],
    ['callId a number', { callId: 5, text: 'hi', reasoning: null }, /callId must be a string or null, got a number/],
    ['callId empty', { callId: '', text: 'hi', reasoning: null }, /callId must not be ""/],
    [
      'toolCalls not an array',
      { callId: null, text: '', reasoning: null, toolCalls: 'add' },
      /toolCalls must be an array/,
    ],
    [
      'tool-call arguments nested 10,000 deep',
      { callId: null, text: '', reasoning: null, toolCalls: [{ id: 't', name: 'add', arguments: deep(10_000) }] },
      /nested more than 100 levels deep/,
    ],
    [
      'a content block of unknown type',
      { callId: null, text: 'x', reasoning: null, content: [{ type: 'image', url: 'u' }] },
      /content\[0\]\.type must be one of/,
    ],
    [
      'a BigInt in tool arguments',
      { callId: null, text: '', reasoning: null, toolCalls: [{ id: 't', name: 'add', arguments: { a: 1n } }] },
      /arguments\.a is a bigint/,
    ],
    ['null', null, /the reply must be an object, got null/],
    [
      'a BigInt in an extra field of a content block',
      { callId: null, text: 'x', reasoning: null, content: [{ type: 'text', text: 'x', tokens: 1n }] },
      /content\[0\]\.tokens is a bigint/,
    ],
    [
      'a Date in an extra field of a tool call',
      {
        callId: null,
        text: '',
        reasoning: null,
        toolCalls: [{ id: 't', name: 'add', arguments: {}, at: new Date(0) }],
      },
      /toolCalls\[0\]\.at is a Date object/,
    ],
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
    const reply = {
      callId: null,
      text: '',
      reasoning: null,
      toolCalls: [{ id: 't0', name: 'add', arguments: { a: 1, b: 2 } }],
    };
    let calls = 0;
    const model: ModelCaller = {
      params: { model: 'mutating' },
      call: async () => (calls++ === 0 ? reply : { callId: null, text: '', reasoning: null, toolCalls: [] }),
    };
    const interpreter: DecisionInterpreter = {
      params: {},
      interpret(r) {
        const call = r.toolCalls?.[0];
        (reply.toolCalls[0] as { arguments: unknown }).arguments = { a: 100, b: 200 };
        if (!call) return { kind: 'final', answer: 'done', historyText: '' };
        return {
          kind: 'action',
          action: { kind: 'tool_call', name: call.name, arguments: call.arguments },
          trajectoryRepr: 'add',
          historyText: '',
        };
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
  const interpreterReturning = (decision: unknown): DecisionInterpreter => ({
    params: {},
    interpret: () => decision as never,
  });

  it.each<[string, unknown, RegExp]>([
    ['an unknown kind', { kind: 'banana', historyText: '' }, /decision\.kind must be/],
    [
      'an action without an action',
      { kind: 'action', trajectoryRepr: 'x', historyText: '' },
      /decision\.action must be an object/,
    ],
    ['historyText a number', { kind: 'final', answer: 'a', historyText: 7 }, /decision\.historyText must be a string/],
    [
      'arguments nested 10,000 deep',
      {
        kind: 'action',
        action: { kind: 'tool_call', name: 'add', arguments: deep(10_000) },
        trajectoryRepr: 'x',
        historyText: '',
      },
      /nested more than 100 levels deep/,
    ],
    [
      'a BigInt in an extra field',
      { kind: 'final', answer: 'a', historyText: '', cost: 1n },
      /decision\.cost is a bigint/,
    ],
    [
      'a cycle in the arguments',
      (() => {
        const a: Record<string, unknown> = {};
        a['self'] = a;
        return {
          kind: 'action',
          action: { kind: 'tool_call', name: 'add', arguments: a },
          trajectoryRepr: 'x',
          historyText: '',
        };
      })(),
      /cycle/,
    ],
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
    [
      'an unknown status',
      {
        status: 'done',
        observation: 'x',
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: 0,
      },
      /outcome\.status must be/,
    ],
    [
      'a numeric observation',
      {
        status: 'executed',
        observation: 12345,
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: 0,
      },
      /outcome\.observation must be a string/,
    ],
    [
      'a negative truncation count',
      {
        status: 'executed',
        observation: 'x',
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: -1,
      },
      /observationTruncatedChars/,
    ],
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
    const h = harness({
      store: leasing(async () => void (releases++, await Promise.reject(new Error('lock file vanished')))),
    });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(releases).toBe(1);
    const types = h.sink.events.map((e) => e.type);
    expect(types.slice(-2)).toEqual(['warning', 'run_ended']);
    expect(h.sink.events.at(-2)).toMatchObject({
      code: 'lease_release_failed',
      message: expect.stringContaining('lock file vanished'),
    });
  });

  it('as a warning event when the run fails before its end', async () => {
    const h = harness({ store: leasing(async () => Promise.reject(new Error('lock file vanished'))) });
    await run(h.agent, h.request);
    await expect(run(h.agent, h.request)).rejects.toThrow(/already|exists/);
    expect(h.sink.events.at(-1)).toMatchObject({ type: 'warning', code: 'lease_release_failed' });
  });
});
