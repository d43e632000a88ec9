/** A stop that reaches the driver: requestStop on the in-process store, and a lease lost mid-step. */
import { describe, expect, it } from 'vitest';
import {
  InMemoryStore,
  InvalidRequestError,
  isPolyLoopError,
  LeaseLostError,
  readRunLog,
  requestStop,
  resume,
  run,
  RunNotFoundError,
} from '../../../src/core/index.ts';
import type { LogRecord, ModelCaller, ReleaseLease, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { harness, makeTools } from './fixtures.ts';

/** A `never` tool that waits until its signal aborts, telling the test when it started and what it saw. */
function slowTool(): { tool: ToolSpec; started: Promise<void>; seen: unknown[] } {
  let begin!: () => void;
  const started = new Promise<void>((r) => (begin = r));
  const seen: unknown[] = [];
  const tool: ToolSpec = {
    name: 'slow',
    description: 'Takes its time.',
    parameters: { type: 'object', properties: {} },
    replayPolicy: 'never',
    handler: (_args, ctx) =>
      new Promise((_resolve, reject) => {
        begin();
        ctx.signal.addEventListener('abort', () => {
          seen.push(ctx.signal.reason);
          reject(ctx.signal.reason);
        });
      }),
  };
  return { tool, started, seen };
}

const SLOW_THEN_FINAL = ['{"tool":"slow","args":{}}', '{"final":"done"}'];
const ended = (log: readonly LogRecord[]) => log.find((r) => r.kind === 'run_ended');

describe('requestStop', () => {
  it('ends a run inside a slow tool: the handler sees StopRequestedError and the run resolves cancelled with the reason', async () => {
    const slow = slowTool();
    const h = harness({ tools: [slow.tool, ...makeTools()], script: SLOW_THEN_FINAL });
    const running = run(h.agent, h.request);
    await slow.started;
    await requestStop(h.store, 'run-1', 'the customer cancelled');
    const result = await running;
    expect(result.stopReason).toBe('cancelled');
    expect(result.stopRequest).toEqual({ reason: 'the customer cancelled' });
    expect(slow.seen).toHaveLength(1);
    expect(isPolyLoopError(slow.seen[0], 'stop_requested')).toBe(true);
    const end = ended(await h.store.readLog('run-1'));
    expect(end).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'the customer cancelled' } });
    expect(h.sink.events.at(-1)).toMatchObject({
      type: 'run_ended',
      stopRequest: { reason: 'the customer cancelled' },
    });
  });

  it('ends a run inside a model call that ignores its signal, and records no reply', async () => {
    let called!: () => void;
    const calledP = new Promise<void>((r) => (called = r));
    const model: ModelCaller = {
      params: { model: 'never-answers' },
      call: () => {
        called();
        return new Promise(() => undefined);
      },
    };
    const h = harness();
    const agent = { ...h.agent, model };
    const running = run(agent, h.request);
    await calledP;
    await requestStop(h.store, 'run-1');
    const result = await running;
    expect(result.stopReason).toBe('cancelled');
    expect(result.stopRequest).toEqual({});
    const log = await h.store.readLog('run-1');
    expect(log.some((r) => r.kind === 'result')).toBe(false);
    expect(ended(log)).toMatchObject({ stopRequest: {} });
  });

  it('honours a stop asked while the run awaits approval at the next resume: the reply given then is not carried out', async () => {
    const calls: string[] = [];
    const tools = makeTools(calls).map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
    const h = harness({ tools, script: ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'], calls });
    const paused = await run(h.agent, h.request);
    expect(paused.stopReason).toBe('awaiting_input');
    await requestStop(h.store, 'run-1', 'not needed any more');
    const before = h.model.calls.length;
    const result = await resume(h.agent, h.request, { input: { kind: 'approve', resultId: 's0.input' } });
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'not needed any more' } });
    expect(calls).toEqual([]);
    expect(h.model.calls.length).toBe(before);
    const log = await h.store.readLog('run-1');
    expect(log.map((r) => r.kind)).toEqual(['run_started', 'intent', 'result', 'input_request', 'run_ended']);
    expect(readRunLog(log).state).toBe('ended');
  });

  it('honours a stop asked while no driver ran, before the interrupted step goes on', async () => {
    const slow = slowTool();
    const h = harness({ tools: [slow.tool, ...makeTools()], script: SLOW_THEN_FINAL });
    const controller = new AbortController();
    const running = run(h.agent, h.request, { signal: controller.signal });
    await slow.started;
    controller.abort(new Error('the process went away'));
    await expect(running).rejects.toThrow('the process went away');
    // A cancelled run has ended: make one that did not, by cutting the log before its end.
    const store = new InMemoryStore();
    const cut = (await h.store.readLog('run-1')).filter((r) => r.kind !== 'run_ended');
    await copyInto(store, cut);
    await requestStop(store, 'run-1', 'stop it');
    const again = harness({ tools: [slow.tool, ...makeTools()], script: SLOW_THEN_FINAL, store });
    const result = await resume(again.agent, again.request);
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'stop it' } });
    expect(again.model.calls.length).toBe(0);
    expect(slow.seen).toHaveLength(1);
  });

  it('does nothing to an ended run, and refuses an unknown run, a store without stops and a reason that is no string', async () => {
    const h = harness({ script: ['{"final":"done"}'] });
    await run(h.agent, h.request);
    const before = await h.store.readLog('run-1');
    await requestStop(h.store, 'run-1', 'late');
    expect(await h.store.readLog('run-1')).toEqual(before);
    await expect(requestStop(h.store, 'nope')).rejects.toBeInstanceOf(RunNotFoundError);
    const bare = { readLog: (id: string) => h.store.readLog(id) } as unknown as RunStore;
    await expect(requestStop(bare, 'run-1')).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(requestStop(h.store, 'run-1', 42 as unknown as string)).rejects.toBeInstanceOf(InvalidRequestError);
  });
});

describe('a lost lease', () => {
  it('aborts the step, and the driver writes nothing more: run rejects with LeaseLostError', async () => {
    const slow = slowTool();
    const inner = new InMemoryStore();
    const lost = new AbortController();
    const store = new Proxy(inner, {
      get(target, key) {
        if (key === 'acquire')
          return async (runId: string, opts: { signal?: AbortSignal }) => {
            const release = await target.acquire(runId, opts);
            return Object.assign(() => release(), { lost: lost.signal }) as ReleaseLease;
          };
        const v = Reflect.get(target, key, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const h = harness({ tools: [slow.tool, ...makeTools()], script: SLOW_THEN_FINAL, store });
    const running = run(h.agent, h.request);
    await slow.started;
    const before = await inner.readLog('run-1');
    lost.abort(new LeaseLostError('run-1', 'another driver took the run over'));
    await expect(running).rejects.toBeInstanceOf(LeaseLostError);
    expect(isPolyLoopError(slow.seen[0], 'lease_lost')).toBe(true);
    expect(await inner.readLog('run-1')).toEqual(before);
  });
});

async function copyInto(store: InMemoryStore, records: readonly LogRecord[]): Promise<void> {
  const { importRun } = await import('../../../src/core/index.ts');
  const { encodeRecord } = await import('../../../src/core/serialization.ts');
  await importRun(store, 'run-1', records.map((r) => `${encodeRecord(r)}\n`).join(''));
}
