/** Recovery (docs/recovery.md): in-flight cases, no re-interpretation of the past, identity checks. */
import { describe, expect, it } from 'vitest';
import {
  defineAgent,
  identityMismatch,
  identitySnapshot,
  InMemoryStore,
  isPolyLoopError,
  resume,
  run,
  RunIdentityMismatchError,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type { Decision, DecisionInterpreter, LogRecord } from '../../../src/core/index.ts';
import { faultyStore, jsonActionInterpreter } from '../../../src/testing/index.ts';
import { harness, makeTools, text, timeless } from './fixtures.ts';
import type { Harness } from './fixtures.ts';

/** Run until the store has taken `writes` writes, then "crash"; return the surviving log's store. */
async function crashAfter(
  writes: number,
  make: (store: InMemoryStore | ReturnType<typeof faultyStore>) => Harness,
): Promise<InMemoryStore> {
  const inner = new InMemoryStore();
  const h = make(faultyStore(inner, { crashAfterWrites: writes }));
  await expect(run(h.agent, h.request)).rejects.toMatchObject({ name: 'StoreError' });
  return inner;
}

const kinds = (log: readonly LogRecord[]): string[] =>
  log.map((r) => (r.kind === 'intent' ? `intent:${r.intent}` : r.kind));

describe('recovery of an action in flight', () => {
  it('asks a person to settle a never-replay action that was in flight, without calling the handler again', async () => {
    // Writes: run_started; step 0: model intent, result + action intent (add), step;
    // step 1: model intent, result + action intent (note, never) → crash before its step write.
    const script = [
      '{"tool":"add","args":{"a":1,"b":2}}',
      '{"tool":"note","args":{"text":"once"}}',
      '{"final":"done"}',
    ];
    const first: string[] = [];
    const store = await crashAfter(6, (s) => harness({ script, store: s, calls: first }));
    expect(first).toEqual(['add:{"a":1,"b":2}', 'note:once']);
    expect(kinds(await store.readLog('run-1')).at(-1)).toBe('intent:action');

    const second: string[] = [];
    const h = harness({ script, store, calls: second });
    const result = await resume(h.agent, h.request);
    expect(result.stopReason).toBe('awaiting_input');
    expect(result.pending).toMatchObject({
      kind: 'settle',
      target: 'action',
      resultId: 's1.settle',
      decision: { action: { name: 'note', arguments: { text: 'once' } } },
    });
    expect(second).toEqual([]);
    expect(h.model.calls).toHaveLength(0);
    expect(result.steps).toBe(1);
    const log = await store.readLog('run-1');
    expect(kinds(log).slice(-3)).toEqual(['intent:action', 'resumed', 'input_request']);
  });

  it('executes a safe action in flight again with the same resultId', async () => {
    const script = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];
    const first: string[] = [];
    // Writes: run_started, model intent, result + action intent → crash before the step write.
    const store = await crashAfter(3, (s) => harness({ script, store: s, calls: first }));
    expect(first).toEqual(['add:{"a":1,"b":2}']);
    const seen: string[] = [];
    const h = harness({ script, store, calls: seen });
    const result = await resume(h.agent, h.request);
    const ids = h.sink.events.flatMap((e) =>
      e.type === 'action_started' ? [`${e.resultId}:${String(e.replayed)}`] : [],
    );
    expect(result.stopReason).toBe('final_answer');
    expect(seen).toEqual(['add:{"a":1,"b":2}']);
    expect(ids).toEqual(['s0.action:true']);
  });
});

describe('recovery of a model call in flight', () => {
  it('does not re-issue a never-replay model call: it asks a person to settle it (retry or cancel)', async () => {
    const script = ['{"final":"x"}'];
    const store = await crashAfter(2, (s) => harness({ script, store: s, request: { modelReplayPolicy: 'never' } }));
    const h = harness({ script, store, request: { modelReplayPolicy: 'never' } });
    const result = await resume(h.agent, h.request);
    expect(result.stopReason).toBe('awaiting_input');
    expect(result.pending).toEqual({
      resultId: 's0.settle',
      stepIndex: 0,
      kind: 'settle',
      target: 'model_call',
      decision: null,
    });
    expect(h.model.calls).toHaveLength(0);
    expect(result.steps).toBe(0);
  });

  it('re-issues a safe model call with the same resultId and callSeq', async () => {
    const script = ['{"final":"x"}'];
    const store = await crashAfter(2, (s) => harness({ script, store: s }));
    const h = harness({ script, store });
    const result = await resume(h.agent, h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(h.model.calls.map((c) => [c.callSeq, c.resultId])).toEqual([[0, 's0.model']]);
    expect(kinds(await store.readLog('run-1'))).toEqual([
      'run_started',
      'intent:model_call',
      'resumed',
      'result',
      'step',
      'run_ended',
    ]);
  });
});

/** Same params as the JSON interpreter, different behaviour: what changing code between crash and resume looks like. */
function shoutingInterpreter(): DecisionInterpreter & { count: number } {
  const inner = jsonActionInterpreter();
  const it = {
    params: inner.params,
    count: 0,
    interpret(
      reply: Parameters<DecisionInterpreter['interpret']>[0],
      ctx: Parameters<DecisionInterpreter['interpret']>[1],
    ): Decision {
      it.count++;
      const d = inner.interpret(reply, ctx);
      return d.kind === 'final'
        ? { ...d, answer: d.answer.toUpperCase() }
        : { ...d, historyText: d.historyText.toUpperCase() };
    },
  };
  return it;
}

describe('re-interpretation', () => {
  const script = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"three"}'];

  it('never re-interprets completed steps, and re-interprets the interrupted one with the current interpreter', async () => {
    // Writes: run_started, intent, result + action intent, step (0 done), intent, result → crash before step 1.
    const store = await crashAfter(6, (s) => harness({ script, store: s }));
    const interpreter = shoutingInterpreter();
    const h = harness({ script, store, interpreter });
    const result = await resume(h.agent, h.request);
    expect(interpreter.count).toBe(1);
    expect(result.trajectory[0]?.historyText).toBe('{"tool":"add","args":{"a":1,"b":2}}');
    expect(result.finalAnswer).toBe('THREE');
    expect(h.model.calls).toHaveLength(0);
  });

  it('does not re-interpret an action in flight: the stored decision is replayed', async () => {
    const store = await crashAfter(3, (s) =>
      harness({ script, store: s, tools: makeTools().map((t) => ({ ...t, replayPolicy: 'safe' as const })) }),
    );
    const interpreter = shoutingInterpreter();
    const h = harness({
      script,
      store,
      interpreter,
      tools: makeTools(['x']).map((t) => ({ ...t, replayPolicy: 'safe' as const })),
    });
    const result = await resume(h.agent, h.request);
    expect(result.trajectory[0]?.historyText).toBe('{"tool":"add","args":{"a":1,"b":2}}');
    expect(interpreter.count).toBe(1); // only step 1's fresh reply
  });
});

describe('resume at a step boundary', () => {
  it('ends with the stop reason of the last step when the crash came before run_ended', async () => {
    const script = ['{"final":"done"}'];
    const store = await crashAfter(4, (s) => harness({ script, store: s }));
    expect(kinds(await store.readLog('run-1')).at(-1)).toBe('step');
    const h = harness({ script: [], store });
    const result = await resume(h.agent, h.request);
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'done', steps: 1 });
    expect(h.model.calls).toHaveLength(0);
  });

  it('starts at step 0 from a log with only run_started', async () => {
    const store = await crashAfter(1, (s) => harness({ script: ['{"final":"a"}'], store: s }));
    const h = harness({ script: ['{"final":"a"}'], store });
    expect((await resume(h.agent, h.request)).finalAnswer).toBe('a');
  });

  it('returns the stored result of an ended run and executes nothing', async () => {
    const h = harness();
    const first = await run(h.agent, h.request);
    const again = harness({ script: [], store: h.store });
    const second = await resume(again.agent, again.request);
    expect(timeless(second.trajectory)).toEqual(timeless(first.trajectory));
    expect({ ...second, trajectory: null }).toEqual({ ...first, trajectory: null });
    expect(again.model.calls).toHaveLength(0);
    expect(again.sink.events).toHaveLength(0);
  });
});

describe('run and resume on the wrong log', () => {
  it('refuses to run a run id that already has a log, writing nothing', async () => {
    const h = harness();
    await run(h.agent, h.request);
    const before = (await h.store.readLog('run-1')).length;
    await expect(run(h.agent, h.request)).rejects.toMatchObject({ name: 'RunExistsError', code: 'run_exists' });
    expect((await h.store.readLog('run-1')).length).toBe(before);
  });

  it('refuses to resume a run with an empty log', async () => {
    const h = harness();
    const e = await resume(h.agent, h.request).catch((x: unknown) => x);
    expect(isPolyLoopError(e, 'run_not_found')).toBe(true);
    expect(await h.store.readLog('run-1')).toEqual([]);
  });
});

describe('identity check on resume', () => {
  const tools2 = ToolRegistry.of(makeTools().map((t) => (t.name === 'add' ? { ...t, description: 'Adds.' } : t)));
  const drifts: [string, (h: Harness) => Harness, string][] = [
    ['the model params', (h) => harness({ store: h.store, script: [] }) && withModel(h, 'other-model'), 'model.model'],
    [
      'the budget',
      (h) => ({ ...h, request: { ...h.request, budget: { ...h.request.budget, maxSteps: 21 } } }),
      'budget.maxSteps',
    ],
    [
      'a tool description',
      (h) => ({ ...h, request: { ...h.request, tools: tools2, executor: tools2.executor() } }),
      'tools[add].description',
    ],
    [
      'the run context',
      (h) => ({
        ...h,
        request: { ...h.request, context: { ...h.request.context, run: [text('system', 'Be terse.')] } },
      }),
      'context.run.0.content.0.text',
    ],
    [
      'the goal context',
      (h) => ({
        ...h,
        request: { ...h.request, context: { ...h.request.context, goal: [text('user', 'Other goal')] } },
      }),
      'context.goal.0.content.0.text',
    ],
    [
      'the injections',
      (h) => ({ ...h, request: { ...h.request, injections: { skills: [{ name: 'a', text: 'b' }] } } }),
      'injections.skills',
    ],
    [
      'the model binding',
      (h) => ({ ...h, request: { ...h.request, modelBinding: { user: 'someone-else' } } }),
      'modelBinding.user',
    ],
    [
      'the observation template',
      (h) => ({ ...h, request: { ...h.request, observationTemplate: 'Result: {observation}' } }),
      'observationTemplate',
    ],
    ['the tool render style', (h) => ({ ...h, request: { ...h.request, toolRenderStyle: 'json' } }), 'toolRenderStyle'],
    [
      'the model replay policy',
      (h) => ({ ...h, request: { ...h.request, modelReplayPolicy: 'never' } }),
      'modelReplayPolicy',
    ],
    [
      'the executor params',
      (h) => ({
        ...h,
        request: {
          ...h.request,
          executor: { params: { env: 'b' }, execute: h.request.executor.execute.bind(h.request.executor) },
        },
      }),
      'executor',
    ],
    ['the synthetic texts', (h) => withSynthetic(h), 'syntheticObservations.notExecuted'],
    ['the interpreter params', (h) => withInterpreterParams(h), 'interpreter.version'],
  ];

  it.each(drifts)('rejects a resume after a change of %s, naming the differing key', async (_name, drift, key) => {
    const store = await crashAfter(3, (s) => harness({ store: s }));
    const before = (await store.readLog('run-1')).length;
    const changed = drift(harness({ store }));
    const e = await resume(changed.agent, changed.request).catch((x: unknown) => x);
    expect(isPolyLoopError(e, 'run_identity_mismatch')).toBe(true);
    expect((e as { differingKeys: string[] }).differingKeys).toContain(key);
    expect(changed.model.calls).toHaveLength(0);
    expect((await store.readLog('run-1')).length).toBe(before);
  });

  it('checks identity when resuming an ended run too', async () => {
    const h = harness();
    await run(h.agent, h.request);
    const changed = { ...h, request: { ...h.request, budget: { ...h.request.budget, maxValidActions: 99 } } };
    await expect(resume(changed.agent, changed.request)).rejects.toMatchObject({ name: 'RunIdentityMismatchError' });
  });

  it('accepts a resume with another cancel grace, store instance view and event sink', async () => {
    const store = await crashAfter(3, (s) => harness({ store: s }));
    const h = harness({ store });
    const result = await resume(h.agent, { ...h.request, cancelGraceMs: 5 });
    expect(result.stopReason).toBe('final_answer');
  });
});

function withModel(h: Harness, model: string): Harness {
  const next = harness({ store: h.store });
  return { ...next, agent: defineAgent({ ...next.agent, model: { ...next.agent.model, params: { model } } }) };
}

function withSynthetic(h: Harness): Harness {
  const next = harness({ store: h.store });
  return {
    ...next,
    agent: {
      ...next.agent,
      syntheticObservations: { notExecuted: 'Nope.', envError: next.agent.syntheticObservations.envError },
    },
  };
}

function withInterpreterParams(h: Harness): Harness {
  const base = jsonActionInterpreter();
  return harness({
    store: h.store,
    interpreter: { params: { ...base.params, version: 2 }, interpret: base.interpret.bind(base) },
  });
}

describe('identityMismatch, the comparison resume makes first', () => {
  it('names the same differing keys as the RunIdentityMismatchError resume throws, and is null for the same run', async () => {
    const store = await crashAfter(3, (s) => harness({ store: s }));
    const started = (await store.readLog('run-1'))[0];
    if (started?.kind !== 'run_started') throw new Error('no run_started');
    const same = harness({ store });
    expect(identityMismatch('run-1', started, identitySnapshot(same.agent, same.request))).toBeNull();
    const changed = harness({ store, request: { observationTemplate: 'Result: {observation}' } });
    const mismatch = identityMismatch('run-1', started, identitySnapshot(changed.agent, changed.request));
    const thrown = await resume(changed.agent, changed.request).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(RunIdentityMismatchError);
    expect(mismatch?.message).toBe((thrown as Error).message);
  });
});
