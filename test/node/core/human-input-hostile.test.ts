/** Human input under attack: hostile replies, crafted logs and executor hooks that change their mind. */
import { describe, expect, it } from 'vitest';
import {
  CorruptLogError,
  encodeRecord,
  importRun,
  InMemoryStore,
  InvalidInputError,
  readRunLog,
  resume,
  run,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type { ActionExecutor, InputReply, LogRecord, RunRequest, RunStore } from '../../../src/core/index.ts';
import { harness, makeTools } from './fixtures.ts';

const NOTE_THEN_FINAL = ['{"tool":"note","args":{"text":"hello"}}', '{"final":"done"}'];
const approvalTools = (calls: string[]) =>
  makeTools(calls).map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));

/** A run stopped at its approval request (`s0.input`). */
async function awaitingApproval(calls: string[] = []) {
  const h = harness({ tools: approvalTools(calls), script: NOTE_THEN_FINAL, calls });
  const first = await run(h.agent, h.request);
  expect(first.pending?.resultId).toBe('s0.input');
  return h;
}

/** A custom executor around the registry's, whose needsApproval hook the test controls. */
function hookedExecutor(calls: string[], hook: () => unknown): { tools: ToolRegistry; executor: ActionExecutor } {
  const tools = ToolRegistry.of(makeTools(calls));
  const inner = tools.executor();
  return { tools, executor: { needsApproval: hook as () => boolean, execute: inner.execute.bind(inner) } };
}

describe('a hostile reply object', () => {
  it('a reply whose getter throws is refused with InvalidInputError, and nothing is written', async () => {
    const h = await awaitingApproval();
    const before = await h.store.readLog('run-1');
    const reply = { resultId: 's0.input' } as Record<string, unknown>;
    Object.defineProperty(reply, 'kind', {
      enumerable: true,
      get: () => {
        throw new Error('boom');
      },
    });
    const e = await resume(h.agent, h.request, { input: reply as unknown as InputReply }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InvalidInputError);
    expect(await h.store.readLog('run-1')).toEqual(before);
  });

  it('a reply whose getter says approve when checked and executed afterwards stores the reply that was checked, and the log stays readable', async () => {
    const calls: string[] = [];
    const h = await awaitingApproval(calls);
    let reads = 0;
    const reply = { resultId: 's0.input' } as Record<string, unknown>;
    Object.defineProperty(reply, 'kind', { enumerable: true, get: () => (++reads <= 3 ? 'approve' : 'cancel') });
    const result = await resume(h.agent, h.request, { input: reply as unknown as InputReply }).catch((x: unknown) => x);
    const log = await h.store.readLog('run-1');
    const stored = log.find((r) => r.kind === 'input');
    expect(stored).toMatchObject({ reply: { kind: 'approve' } });
    expect(() => readRunLog(log)).not.toThrow();
    expect(result).toMatchObject({ stopReason: 'final_answer' });
    expect(calls).toEqual(['note:hello']);
  });

  it('a frozen reply with a field its kind does not take is refused, and nothing is written or run', async () => {
    const calls: string[] = [];
    const h = await awaitingApproval(calls);
    const before = await h.store.readLog('run-1');
    const reply = Object.freeze({ kind: 'approve', resultId: 's0.input', observation: 'I did it myself' });
    await expect(resume(h.agent, h.request, { input: reply as unknown as InputReply })).rejects.toThrow(
      /takes no "observation"/,
    );
    expect(calls).toEqual([]);
    expect(await h.store.readLog('run-1')).toEqual(before);
  });
});

describe('a recorded gate outlives an executor hook that changed its mind', () => {
  it('a denied action never runs, even when the hook no longer asks about it on resume', async () => {
    const calls: string[] = [];
    let asks = true;
    const { tools, executor } = hookedExecutor(calls, () => asks);
    const h = harness({ script: NOTE_THEN_FINAL, calls });
    const request: RunRequest = { ...h.request, tools, executor };
    const first = await run(h.agent, request);
    expect(first.pending).toMatchObject({ kind: 'approval', resultId: 's0.input' });
    asks = false;
    const result = await resume(h.agent, request, { input: { kind: 'deny', resultId: 's0.input', reason: 'No.' } });
    expect(calls).toEqual([]);
    expect(result.trajectory[0]).toMatchObject({ actionStatus: 'denied', observation: 'No.' });
  });

  it('a needsApproval hook that returns a promise asks a person rather than running the action unapproved', async () => {
    const calls: string[] = [];
    const { tools, executor } = hookedExecutor(calls, () => Promise.resolve(true));
    const h = harness({ script: NOTE_THEN_FINAL, calls });
    const result = await run(h.agent, { ...h.request, tools, executor });
    expect(calls).toEqual([]);
    expect(result).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'approval' } });
  });

  it('a needsApproval hook whose promise rejects asks a person and leaves no unhandled rejection', async () => {
    const calls: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { tools, executor } = hookedExecutor(calls, () => Promise.reject(new Error('hook down')));
      const h = harness({ script: NOTE_THEN_FINAL, calls });
      const result = await run(h.agent, { ...h.request, tools, executor });
      await new Promise((r) => setTimeout(r, 20));
      expect(result).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'approval' } });
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('readRunLog refuses replies the request never accepted', () => {
  /** The log of a run whose never model call was in flight at a crash and is awaiting its settlement. */
  async function settleModelLog(): Promise<readonly LogRecord[]> {
    const h = harness({ request: { modelReplayPolicy: 'never' }, script: ['{"final":"x"}'] });
    const store = h.store as InMemoryStore;
    await run(h.agent, h.request);
    // Cut the log back to run_started + the model-call intent (a crash before the result), then settle.
    const log = (await store.readLog('run-1')).slice(0, 2);
    const cut = new InMemoryStore();
    await importRun(cut, 'run-1', log.map((r) => `${encodeRecord(r)}\n`).join(''));
    const again = harness({ store: cut, request: { modelReplayPolicy: 'never' }, script: ['{"final":"x"}'] });
    const r = await resume(again.agent, again.request);
    expect(r.pending).toMatchObject({ kind: 'settle', target: 'model_call', resultId: 's0.settle' });
    return cut.readLog('run-1');
  }

  const input = (reply: Record<string, unknown>): LogRecord =>
    ({
      kind: 'input',
      v: '1.1',
      stepIndex: 0,
      resultId: 's0.settle',
      reply: { resultId: 's0.settle', ...reply },
      receivedAt: '',
    }) as unknown as LogRecord;

  it.each([
    ['approve for a model-call settlement', { kind: 'approve' }],
    ['executed for a model-call settlement', { kind: 'executed', observation: 'x' }],
    ['an unknown kind', { kind: 'maybe' }],
  ])('an input record holding %s is a CorruptLogError, and importRun writes nothing', async (_name, reply) => {
    const log = [...(await settleModelLog()), input(reply)];
    expect(() => readRunLog(log)).toThrow(CorruptLogError);
    const target = new InMemoryStore();
    await expect(importRun(target, 'run-1', log.map((r) => `${encodeRecord(r)}\n`).join(''))).rejects.toBeInstanceOf(
      CorruptLogError,
    );
    expect(await target.readLog('run-1')).toEqual([]);
  });

  it('a deny without its reason is a CorruptLogError', async () => {
    const h = await awaitingApproval();
    const log = [
      ...(await h.store.readLog('run-1')),
      {
        kind: 'input',
        v: '1.1',
        stepIndex: 0,
        resultId: 's0.input',
        reply: { kind: 'deny', resultId: 's0.input' },
        receivedAt: '',
      } as unknown as LogRecord,
    ];
    expect(() => readRunLog(log)).toThrow(CorruptLogError);
  });

  it('a retry reply stays readable (the control case)', async () => {
    const log = [...(await settleModelLog()), input({ kind: 'retry' })];
    expect(readRunLog(log)).toMatchObject({ state: 'in_flight', inFlight: { resolution: 'apply_input' } });
  });
});

describe('a request record with unknown keys', () => {
  it("an input_request whose request carries its own resultId and stepIndex keeps the record's, and answering it leaves a readable log", async () => {
    const calls: string[] = [];
    const h = await awaitingApproval(calls);
    const log = (await h.store.readLog('run-1')).map((r) =>
      r.kind === 'input_request'
        ? ({ ...r, request: { ...r.request, resultId: 'evil', stepIndex: 7 } } as unknown as LogRecord)
        : r,
    );
    const view = readRunLog(log);
    expect(view.pending).toMatchObject({ resultId: 's0.input', stepIndex: 0 });
    const target = new InMemoryStore();
    await importRun(target, 'run-1', log.map((r) => `${encodeRecord(r)}\n`).join(''));
    const again = harness({ tools: approvalTools(calls), script: NOTE_THEN_FINAL, calls, store: target });
    const result = await resume(again.agent, again.request, {
      input: { kind: 'approve', resultId: view.pending!.resultId },
    });
    expect(result.stopReason).toBe('final_answer');
    expect(readRunLog(await target.readLog('run-1')).state).toBe('ended');
  });
});

describe('events of an awaiting run', () => {
  it('input_requested is the last event even when the lease release fails (its warning comes before it)', async () => {
    const inner = new InMemoryStore();
    const store: RunStore = {
      runStarted: (a, b) => inner.runStarted(a, b),
      intent: (a, b) => inner.intent(a, b),
      result: (a, b, c) => inner.result(a, b, c),
      step: (a, b) => inner.step(a, b),
      runEnded: (a, b) => inner.runEnded(a, b),
      inputRequest: (a, b) => inner.inputRequest(a, b),
      input: (a, b) => inner.input(a, b),
      readLog: (a) => inner.readLog(a),
      acquire: async () => async () => {
        throw new Error('lock file gone');
      },
    };
    const h = harness({ tools: approvalTools([]), script: NOTE_THEN_FINAL, store });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('awaiting_input');
    const types = h.sink.events.map((e) => e.type);
    expect(types.at(-1)).toBe('input_requested');
    expect(h.sink.events).toContainEqual(expect.objectContaining({ type: 'warning', code: 'lease_release_failed' }));
  });
});
