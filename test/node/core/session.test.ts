/** The loop's outcomes, faults, cancellation, events and concurrency. */
import { describe, expect, it } from 'vitest';
import {
  consoleSink,
  defineAgent,
  InMemoryStore,
  isPolyLoopError,
  resume,
  run,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type { ActionExecutor, LogRecord, ModelCaller, RunEndedRecord, RunStore } from '../../../src/core/index.ts';
import { collectingSink, faultyStore, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { sleep } from '../../../src/testing/scripted-model.ts';
import { harness, makeTools, SYNTHETIC, timeless } from './fixtures.ts';

const ended = (log: readonly LogRecord[]): RunEndedRecord => log.at(-1) as RunEndedRecord;

describe('stop reasons of a run', () => {
  it.each([
    ['model_error when the model call throws', [new Error('boom')], 'model_error'],
    ['final_answer on a final answer', ['{"final":"ok"}'], 'final_answer'],
    ['tool_completed when a completesRun tool returns', ['{"tool":"submit","args":{"value":"v"}}'], 'tool_completed'],
    ['max_steps when invalid replies use up the steps', ['x', 'y', 'z'], 'max_steps'],
  ] as const)('ends with %s', async (_name, script, reason) => {
    const model: ModelCaller = {
      params: { model: 'm' },
      call: async (c) => {
        const r = script[c.callSeq];
        if (r instanceof Error) throw r;
        return { callId: `c${c.callSeq}`, text: r as string, reasoning: null };
      },
    };
    const h = harness({ request: { budget: { maxSteps: 3, maxValidActions: 3, maxContextChars: 100_000 } } });
    const agent = { ...h.agent, model };
    const result = await run(agent, h.request);
    expect(result.stopReason).toBe(reason);
    expect(ended(await h.store.readLog('run-1')).stopReason).toBe(reason);
  });

  it('records a model failure as a step with callId null and the error as observation, and writes no result', async () => {
    const h = harness({ script: () => Promise.reject(new TypeError('socket hang up')) });
    const result = await run(h.agent, h.request);
    expect(result.trajectory[0]).toMatchObject({
      decision: 'model_error',
      modelCallId: null,
      observation: 'TypeError: socket hang up',
    });
    expect((await h.store.readLog('run-1')).some((r) => r.kind === 'result')).toBe(false);
  });

  it('treats a reply with callId "" as a model failure', async () => {
    const h = harness({ script: [{ callId: '', text: '{"final":"x"}', reasoning: null }] });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('model_error');
  });

  it('ends with interpreter_error when the interpreter throws, keeping the model reply in the step', async () => {
    const h = harness({
      script: ['anything'],
      interpreter: {
        params: { i: 1 },
        interpret: () => {
          throw new SyntaxError('cannot read');
        },
      },
    });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('interpreter_error');
    expect(result.trajectory[0]).toMatchObject({
      decision: 'interpreter_error',
      modelText: 'anything',
      observation: 'SyntaxError: cannot read',
    });
  });

  it('does not complete the run when a completesRun handler throws: the action counts, the run goes on', async () => {
    const h = harness({ script: ['{"tool":"submit","args":{"value":"bad"}}', '{"final":"gave up"}'] });
    const result = await run(h.agent, h.request);
    expect(result).toMatchObject({ stopReason: 'final_answer', validActions: 1, steps: 2 });
    expect(result.trajectory[0]).toMatchObject({
      actionStatus: 'executed',
      observation: 'RangeError: bad value',
      toolCompletedRun: false,
    });
  });

  it('ends with env_error when a handler reports a broken environment, and puts the synthetic text in history', async () => {
    const tools = ToolRegistry.of([
      {
        name: 'db',
        description: 'd',
        parameters: { type: 'object' },
        handler: async () => {
          const { ToolEnvironmentError } = await import('../../../src/core/index.ts');
          throw new ToolEnvironmentError('database is down');
        },
      },
    ]);
    const h = harness({ script: ['{"tool":"db","args":{}}'], request: { tools, executor: tools.executor() } });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('env_error');
    expect(result.trajectory[0]).toMatchObject({
      actionStatus: 'env_error',
      observation: 'database is down',
      observationIsSynthetic: false,
    });
  });

  it('turns a custom executor that throws into an env_error outcome', async () => {
    const executor: ActionExecutor = { execute: () => Promise.reject(new Error('sandbox crashed')) };
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":1}}'] });
    const result = await run(h.agent, { ...h.request, executor });
    expect(result.stopReason).toBe('env_error');
    expect(result.trajectory[0]?.observation).toBe('Error: sandbox crashed');
  });

  it('ends with env_completed when the environment reports completion, ahead of tool_completed', async () => {
    const executor: ActionExecutor = {
      replayPolicy: 'safe',
      execute: async () => ({
        status: 'executed',
        observation: 'all green',
        observationIsSynthetic: false,
        envReportedCompletion: true,
        observationTruncatedChars: 0,
      }),
    };
    const h = harness({ script: ['{"tool":"submit","args":{"value":"v"}}'] });
    const result = await run(h.agent, { ...h.request, executor });
    expect(result.stopReason).toBe('env_completed');
  });

  it('counts only executed actions as valid: not_executed and invalid steps count as steps only', async () => {
    const script = [
      '{"tool":"nope","args":{}}',
      'garbage',
      '{"tool":"add","args":{"a":1}}',
      '{"tool":"add","args":{"a":1,"b":1}}',
      '{"tool":"add","args":{"a":2,"b":2}}',
    ];
    const h = harness({ script, request: { budget: { maxSteps: 10, maxValidActions: 2, maxContextChars: 100_000 } } });
    const result = await run(h.agent, h.request);
    expect(result).toMatchObject({ stopReason: 'max_valid_actions', steps: 5, validActions: 2 });
  });

  it('stops with context_limit before a model call whose context would exceed the budget', async () => {
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'] });
    const first = await run(h.agent, { ...h.request, runId: 'measure' });
    const size = (m: (typeof h.model.calls)[number]): number =>
      m.messages.reduce(
        (n, msg) => n + msg.content.reduce((k, b) => k + (b.type === 'text' ? b.text.length : 0), 0),
        0,
      ) + JSON.stringify(m.tools).length;
    const firstCall = size(h.model.calls[0]!);
    const secondCall = size(h.model.calls[1]!);
    expect(first.stopReason).toBe('final_answer');
    const g = harness({
      script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'],
      request: { budget: { maxSteps: 9, maxValidActions: 9, maxContextChars: secondCall - 1 } },
    });
    const result = await run(g.agent, g.request);
    expect(firstCall).toBeLessThanOrEqual(secondCall - 1);
    expect(result).toMatchObject({ stopReason: 'context_limit', steps: 1 });
    expect(g.model.calls).toHaveLength(1);
  });
});

describe('events', () => {
  it('delivers events in order and counts delivery failures without stopping the run', async () => {
    const sink = collectingSink({ failOn: ['step_started', 'run_ended'] });
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'] });
    const agent = defineAgent({ ...h.agent, events: sink });
    const result = await run(agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(result.eventDeliveryFailures).toBe(3);
    expect(ended(await h.store.readLog('run-1')).eventDeliveryFailures).toBe(2);
    expect(sink.events.map((e) => e.type)).toEqual([
      'run_started',
      'step_started',
      'model_call_started',
      'model_call_finished',
      'decision',
      'action_started',
      'action_finished',
      'step_finished',
      'step_started',
      'model_call_started',
      'model_call_finished',
      'decision',
      'step_finished',
      'run_ended',
    ]);
    expect(sink.events.filter((e) => e.type === 'warning')).toHaveLength(0);
  });

  it('delivers model deltas reported by a streaming model, before the call finishes', async () => {
    const sink = collectingSink();
    const model: ModelCaller = {
      params: { model: 'streamer' },
      call: async (c) => {
        for (const d of ['{"fin', 'al":"', 'ok"}']) c.onDelta?.(d);
        return { callId: 'r', text: '{"final":"ok"}', reasoning: null };
      },
    };
    const h = harness();
    await run(defineAgent({ ...h.agent, model, events: sink }), h.request);
    const types = sink.events.map((e) => (e.type === 'model_delta' ? `delta:${e.delta}` : e.type));
    expect(types.slice(2, 6)).toEqual(['model_call_started', 'delta:{"fin', 'delta:al":"', 'delta:ok"}']);
    expect(types[6]).toBe('model_call_finished');
  });

  it('delivers reasoning deltas with kind reasoning, text deltas exactly as before, and ignores other kinds', async () => {
    const sink = collectingSink();
    const model: ModelCaller = {
      params: { model: 'thinker' },
      call: async (c) => {
        const onDelta = c.onDelta as (d: unknown, kind?: unknown) => void;
        onDelta('Think', 'reasoning');
        onDelta('ing.', 'reasoning');
        onDelta('ignored', 'thought');
        onDelta(42, 'reasoning');
        onDelta('{"final":', 'text');
        onDelta('"ok"}');
        return { callId: 'r', text: '{"final":"ok"}', reasoning: 'Thinking.' };
      },
    };
    const h = harness();
    await run(defineAgent({ ...h.agent, model, events: sink }), h.request);
    expect(sink.events.filter((e) => e.type === 'model_delta')).toEqual([
      { type: 'model_delta', runId: 'run-1', stepIndex: 0, callSeq: 0, delta: 'Think', kind: 'reasoning' },
      { type: 'model_delta', runId: 'run-1', stepIndex: 0, callSeq: 0, delta: 'ing.', kind: 'reasoning' },
      { type: 'model_delta', runId: 'run-1', stepIndex: 0, callSeq: 0, delta: '{"final":' },
      { type: 'model_delta', runId: 'run-1', stepIndex: 0, callSeq: 0, delta: '"ok"}' },
    ]);
    const text = sink.events.find((e) => e.type === 'model_delta' && e.delta === '"ok"}');
    expect(Object.keys(text ?? {})).toEqual(['type', 'runId', 'stepIndex', 'callSeq', 'delta']);
  });

  it('prints reasoning deltas apart from text deltas in consoleSink with deltas: true', async () => {
    const lines: string[] = [];
    const model: ModelCaller = {
      params: { model: 'thinker' },
      call: async (c) => {
        c.onDelta?.('Hmm, three.', 'reasoning');
        c.onDelta?.('{"final":"3"}');
        return { callId: 'r', text: '{"final":"3"}', reasoning: 'Hmm, three.' };
      },
    };
    const h = harness();
    await run(
      defineAgent({ ...h.agent, model, events: consoleSink({ write: (l) => void lines.push(l), deltas: true }) }),
      h.request,
    );
    expect(lines).toContain('[run-1] #0 model thinks: Hmm, three.');
    expect(lines).toContain('[run-1] #0 model: {"final":"3"}');
  });
});

describe('cancellation', () => {
  it('aborts during the model call: writes run_ended cancelled, then rejects with signal.reason', async () => {
    const h = harness({ script: ['{"final":"late"}'] });
    const agent = defineAgent({ ...h.agent, model: scriptedModel(['{"final":"late"}'], { delayMs: 10_000 }) });
    const ac = new AbortController();
    const reason = new Error('user pressed stop');
    const pending = run(agent, h.request, { signal: ac.signal });
    await sleep(20);
    ac.abort(reason);
    await expect(pending).rejects.toBe(reason);
    const log = await h.store.readLog('run-1');
    expect(ended(log)).toMatchObject({ kind: 'run_ended', stopReason: 'cancelled', steps: 0 });
    expect(log.filter((r) => r.kind === 'step')).toHaveLength(0);
    expect(h.sink.events.at(-1)).toMatchObject({ type: 'run_ended', stopReason: 'cancelled' });
  });

  it('aborts during a tool handler: the handler sees the signal, the step gets no record, its intent stays', async () => {
    let handlerSawAbort = false;
    let entered!: () => void;
    const inHandler = new Promise<void>((ok) => (entered = ok));
    const tools = ToolRegistry.of([
      {
        name: 'slow',
        description: 's',
        parameters: { type: 'object' },
        replayPolicy: 'never',
        handler: async (_a, { signal }) => {
          entered();
          try {
            await sleep(10_000, signal);
          } catch (e) {
            handlerSawAbort = signal.aborted;
            throw e;
          }
          return 'done';
        },
      },
    ]);
    const h = harness({ script: ['{"tool":"slow","args":{}}'], request: { tools, executor: tools.executor() } });
    const ac = new AbortController();
    const pending = run(h.agent, h.request, { signal: ac.signal });
    // Aborted once the handler runs, not after a fixed delay a loaded machine may not meet.
    await inHandler;
    ac.abort();
    const e = await pending.catch((x: unknown) => x);
    expect((e as DOMException).name).toBe('AbortError');
    expect(handlerSawAbort).toBe(true);
    const log = await h.store.readLog('run-1');
    expect(log.map((r) => r.kind)).toEqual(['run_started', 'intent', 'result', 'intent', 'run_ended']);
    expect(ended(log).stopReason).toBe('cancelled');
  });

  it('still rejects with signal.reason when the cancel-time write outlasts cancelGraceMs', async () => {
    const inner = new InMemoryStore();
    let hang = false;
    const store: RunStore = {
      ...bind(inner),
      runEnded: (id, rec) => (hang ? new Promise<void>(() => undefined) : inner.runEnded(id, rec)),
    };
    const h = harness({ store, request: { cancelGraceMs: 30 } });
    const agent = defineAgent({ ...h.agent, model: scriptedModel(['{"final":"x"}'], { delayMs: 10_000 }) });
    const ac = new AbortController();
    const pending = run(agent, h.request, { signal: ac.signal });
    await sleep(20);
    hang = true;
    ac.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });

  it('starts no action after an abort, even when the model ignores the signal and replies', async () => {
    const calls: string[] = [];
    const ac = new AbortController();
    const deaf: ModelCaller = {
      params: { model: 'deaf' },
      call: async () => {
        ac.abort(new Error('stop now'));
        return { callId: 'r0', text: '{"tool":"note","args":{"text":"x"}}', reasoning: null };
      },
    };
    const h = harness({ calls });
    await expect(run(defineAgent({ ...h.agent, model: deaf }), h.request, { signal: ac.signal })).rejects.toThrow(
      'stop now',
    );
    expect(calls).toEqual([]);
    const log = await h.store.readLog('run-1');
    expect(log.filter((r) => r.kind === 'intent' && r.intent === 'action')).toHaveLength(0);
    expect(ended(log).stopReason).toBe('cancelled');
  });

  it('rejects at once, writing nothing, when the signal is already aborted', async () => {
    const h = harness();
    await expect(run(h.agent, h.request, { signal: AbortSignal.abort(new Error('early')) })).rejects.toThrow('early');
    expect(await h.store.readLog('run-1')).toEqual([]);
  });
});

function bind(store: RunStore): RunStore {
  return {
    runStarted: store.runStarted.bind(store),
    intent: store.intent.bind(store),
    result: store.result.bind(store),
    step: store.step.bind(store),
    readLog: store.readLog.bind(store),
    runEnded: store.runEnded.bind(store),
  };
}

describe('a store that throws midway', () => {
  it.each(['runStarted', 'intent', 'result', 'step', 'runEnded'] as const)(
    'ends the run at once with StoreError when %s fails, writes nothing more, and the log stays resumable',
    async (method) => {
      const inner = new InMemoryStore();
      const cause = new Error(`disk full during ${method}`);
      let armed = true;
      const store: RunStore = {
        ...bind(inner),
        [method]: (...args: unknown[]) => {
          if (armed && !(method === 'intent' && (args[1] as { intent: string }).intent !== 'action')) {
            armed = false;
            return Promise.reject(cause);
          }
          return (inner[method] as (...a: unknown[]) => Promise<void>)(...args);
        },
      };
      const h = harness({ store, tools: makeTools().map((t) => ({ ...t, replayPolicy: 'safe' as const })) });
      const e = await run(h.agent, h.request).catch((x: unknown) => x);
      expect(isPolyLoopError(e, 'store_error')).toBe(true);
      expect((e as Error).cause).toBe(cause);
      const before = await inner.readLog('run-1');
      await sleep(5);
      expect(await inner.readLog('run-1')).toHaveLength(before.length);
      const again = harness({ store: inner, tools: makeTools().map((t) => ({ ...t, replayPolicy: 'safe' as const })) });
      const reference = harness({ tools: makeTools().map((t) => ({ ...t, replayPolicy: 'safe' as const })) });
      const expected = await run(reference.agent, reference.request);
      const result =
        before.length === 0 ? await run(again.agent, again.request) : await resume(again.agent, again.request);
      expect(timeless(result.trajectory)).toEqual(timeless(expected.trajectory));
    },
  );

  it('wraps a readLog failure in StoreError', async () => {
    const inner = new InMemoryStore();
    const store: RunStore = { ...bind(inner), readLog: () => Promise.reject(new Error('io')) };
    const h = harness({ store });
    await expect(resume(h.agent, h.request)).rejects.toMatchObject({ name: 'StoreError', operation: 'readLog' });
  });
});

describe('concurrency', () => {
  it('runs 100 concurrent runs on one definition and one store with no cross-talk', async () => {
    const store = new InMemoryStore();
    const sink = collectingSink();
    const model = scriptedModel(async (call) => {
      const n = Number(call.runId.slice(2));
      await sleep(call.callSeq % 3);
      if (call.callSeq === 0) return `{"tool":"add","args":{"a":${n},"b":1000}}`;
      const last = call.messages.at(-1)?.content[0];
      return `{"final":"${call.runId}=${last?.type === 'text' ? last.text.split('\n')[1] : '?'}"}`;
    });
    const tools = ToolRegistry.of(makeTools());
    const agent = defineAgent({
      model,
      interpreter: jsonActionInterpreter(),
      store,
      events: sink,
      syntheticObservations: SYNTHETIC,
    });
    const base = harness().request;
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        run(agent, { ...base, runId: `r-${i}`, tools, executor: tools.executor() }),
      ),
    );
    results.forEach((r, i) => expect(r.finalAnswer).toBe(`r-${i}=${i + 1000}`));
    for (let i = 0; i < 100; i += 17) {
      const log = await store.readLog(`r-${i}`);
      expect(log.map((r) => r.kind)).toEqual([
        'run_started',
        'intent',
        'result',
        'intent',
        'step',
        'intent',
        'result',
        'step',
        'run_ended',
      ]);
    }
    expect(sink.events.filter((e) => e.type === 'run_ended')).toHaveLength(100);
  });
});

describe('what the store reports while reading', () => {
  it('turns a store warning from readLog into a warning event right after run_started', async () => {
    const inner = new InMemoryStore();
    const h0 = harness({ store: faultyStore(inner, { crashAfterWrites: 3 }) });
    await run(h0.agent, h0.request).catch(() => undefined);
    const store: RunStore = {
      ...bind(inner),
      readLog: async (id, o) => {
        o?.onWarning?.({ code: 'torn_tail', message: 'ignored a torn last line' });
        return inner.readLog(id);
      },
    };
    const h = harness({ store });
    const result = await resume(h.agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(h.sink.events.slice(0, 2).map((e) => e.type)).toEqual(['run_started', 'warning']);
    expect(h.sink.events[1]).toMatchObject({ code: 'torn_tail', message: 'ignored a torn last line' });
  });
});

describe('the lease', () => {
  it("wraps a lease failure that is not the library's own in StoreError, and writes nothing", async () => {
    const inner = new InMemoryStore();
    const cause = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const store: RunStore = { ...bind(inner), acquire: () => Promise.reject(cause) };
    const h = harness({ store });
    const e = await run(h.agent, h.request).catch((x: unknown) => x);
    expect(e).toMatchObject({ name: 'StoreError', operation: 'acquire' });
    expect((e as Error).cause).toBe(cause);
    expect(await inner.readLog('run-1')).toEqual([]);
  });

  it('passes RunLockedError through untouched and releases nothing it did not take', async () => {
    const inner = new InMemoryStore();
    const { RunLockedError } = await import('../../../src/core/index.ts');
    const store: RunStore = {
      ...bind(inner),
      acquire: () => Promise.reject(new RunLockedError('run-1', 'held by pid 7')),
    };
    const h = harness({ store });
    await expect(run(h.agent, h.request)).rejects.toMatchObject({ name: 'RunLockedError', code: 'run_locked' });
  });

  it('rejects with signal.reason when aborted while waiting for the lease, and releases a lease it took', async () => {
    const inner = new InMemoryStore();
    let released = 0;
    const store: RunStore = {
      ...bind(inner),
      acquire: (_id, { signal }) =>
        new Promise((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason);
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
          void resolve;
        }),
    };
    const h = harness({ store });
    const ac = new AbortController();
    const pending = run(h.agent, h.request, { signal: ac.signal });
    const reason = new Error('tab closed');
    ac.abort(reason);
    await expect(pending).rejects.toBe(reason);
    const leased: RunStore = { ...bind(inner), acquire: async () => async () => void released++ };
    const g = harness({ store: leased });
    await run(g.agent, { ...g.request, runId: 'leased' });
    expect(released).toBe(1);
  });
});
