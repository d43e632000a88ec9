/** defineAgent (frozen, reports params) and the checks run() makes before writing anything. */
import { describe, expect, it } from 'vitest';
import {
  defineAgent,
  InMemoryStore,
  InvalidRequestError,
  resume,
  run,
  STANDARD_SYNTHETIC_OBSERVATIONS,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type {
  ActionExecutor,
  AgentConfig,
  Budget,
  ModelCaller,
  RunRequest,
  ToolRenderStyle,
  ToolSpec,
} from '../../../src/core/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { harness, makeTools, SYNTHETIC } from './fixtures.ts';

function config(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    model: scriptedModel(['{"final":"ok"}'], { model: 'scripted-7b' }),
    interpreter: jsonActionInterpreter(),
    store: new InMemoryStore(),
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'Not run.', envError: 'Env broke.' },
    ...overrides,
  };
}

describe('defineAgent', () => {
  it('reports the params of model, interpreter, events and the synthetic texts', () => {
    const agent = defineAgent(config());
    expect(agent.params).toEqual({
      model: { model: 'scripted-7b', scripted: true },
      interpreter: { interpreter: 'json-action', version: 1 },
      events: { sink: 'collecting' },
      syntheticObservations: { notExecuted: 'Not run.', envError: 'Env broke.' },
    });
  });

  it('freezes the definition and its params, all the way down', () => {
    const agent = defineAgent(config());
    for (const value of [
      agent,
      agent.params,
      agent.params.model,
      agent.params.interpreter,
      agent.params.events,
      agent.params.syntheticObservations,
      agent.syntheticObservations,
    ]) {
      expect(Object.isFrozen(value)).toBe(true);
    }
    expect(() => {
      (agent as { store: unknown }).store = null;
    }).toThrow(TypeError);
    expect(agent.store).toBeInstanceOf(InMemoryStore);
  });

  it('is not changed by later mutation of the config it was given', () => {
    const modelParams: Record<string, string | number> = { model: 'm-1', temperature: 0 };
    const synthetic = { notExecuted: 'Not run.', envError: 'Env broke.' };
    const model: ModelCaller = { params: modelParams, call: async () => ({ callId: null, text: '', reasoning: null }) };
    const agent = defineAgent(config({ model, syntheticObservations: synthetic }));
    modelParams['model'] = 'm-2';
    modelParams['temperature'] = 1;
    synthetic.notExecuted = 'changed';
    expect(agent.params.model).toEqual({ model: 'm-1', temperature: 0 });
    expect(agent.params.syntheticObservations.notExecuted).toBe('Not run.');
    expect(agent.syntheticObservations.notExecuted).toBe('Not run.');
  });

  it.each([
    {
      label: 'a model without params.model',
      model: { params: { temperature: 0 }, call: async () => ({ callId: null, text: '', reasoning: null }) },
    },
    {
      label: 'a model whose params.model is not a string',
      model: { params: { model: 7 }, call: async () => ({ callId: null, text: '', reasoning: null }) },
    },
    { label: 'a model without params', model: { call: async () => ({ callId: null, text: '', reasoning: null }) } },
    { label: 'a model without call', model: { params: { model: 'm' } } },
  ])('refuses $label', ({ model }) => {
    expect(() => defineAgent(config({ model: model as unknown as ModelCaller }))).toThrow(InvalidRequestError);
    expect(() => defineAgent(config({ model: model as unknown as ModelCaller }))).toThrow(/model/);
  });

  it.each(['model', 'interpreter', 'store', 'events', 'syntheticObservations'] as const)(
    'refuses a config without %s (no defaults, no default store)',
    (key) => {
      const { [key]: _dropped, ...rest } = config();
      expect(() => defineAgent(rest as AgentConfig)).toThrow(InvalidRequestError);
      expect(() => defineAgent(rest as AgentConfig)).toThrow(new RegExp(key));
    },
  );

  it('refuses synthetic observations that are not both strings', () => {
    const bad = { notExecuted: 'x' } as unknown as AgentConfig['syntheticObservations'];
    expect(() => defineAgent(config({ syntheticObservations: bad }))).toThrow(InvalidRequestError);
  });
});

describe('STANDARD_SYNTHETIC_OBSERVATIONS', () => {
  it('is a frozen pair of non-empty texts that defineAgent accepts and records in the params', () => {
    expect(Object.isFrozen(STANDARD_SYNTHETIC_OBSERVATIONS)).toBe(true);
    expect(STANDARD_SYNTHETIC_OBSERVATIONS.notExecuted).toMatch(/not executed/);
    expect(STANDARD_SYNTHETIC_OBSERVATIONS.envError).toMatch(/environment/);
    const h = harness();
    const agent = defineAgent({
      ...h.agent,
      store: new InMemoryStore(),
      syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
    });
    expect(agent.params.syntheticObservations).toEqual(STANDARD_SYNTHETIC_OBSERVATIONS);
  });
});

describe("a run's identity is made of the params defineAgent froze", () => {
  it("changing a model caller's params after defineAgent changes neither the snapshot nor a resume", async () => {
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
    const executor = {
      replayPolicy: 'sometimes',
      execute: h.request.executor.execute.bind(h.request.executor),
    } as unknown as ActionExecutor;
    await expect(run(h.agent, { ...h.request, executor })).rejects.toThrow(/request\.executor\.replayPolicy must be/);
  });
});

describe('run() refuses a malformed request before writing anything', () => {
  const budget = (patch: Partial<Record<keyof Budget, unknown>>): Budget =>
    ({ maxSteps: 5, maxValidActions: 5, maxContextChars: 10_000, ...patch }) as Budget;

  const sameTools = (specs: ToolSpec[]) => ToolRegistry.of(specs);
  const BAD: readonly { label: string; patch: (r: RunRequest) => Partial<RunRequest>; message: RegExp }[] = [
    ...(['maxSteps', 'maxValidActions', 'maxContextChars'] as const).flatMap((key) =>
      [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3', null].map((value) => ({
        label: `budget.${key} = ${String(typeof value === 'string' ? JSON.stringify(value) : value)}`,
        patch: () => ({ budget: budget({ [key]: value }) }),
        message: new RegExp(`budget\\.${key}`),
      })),
    ),
    {
      label: 'toolRenderStyle "html"',
      patch: () => ({ toolRenderStyle: 'html' as ToolRenderStyle }),
      message: /toolRenderStyle/,
    },
    {
      label: 'toolRenderStyle "Markdown"',
      patch: () => ({ toolRenderStyle: 'Markdown' as ToolRenderStyle }),
      message: /toolRenderStyle/,
    },
    {
      label: 'an executor from a wider registry than request.tools',
      patch: (r) => ({ tools: r.tools.restrictTo(['add']) }),
      message: /different registry/,
    },
    {
      label: 'an executor from a narrower registry than request.tools',
      patch: (r) => ({ executor: r.tools.restrictTo(['add', 'note']).executor() }),
      message: /different registry/,
    },
    {
      label: 'an executor from a registry with other tools of the same count',
      patch: () => ({ executor: sameTools(makeTools().map((t) => ({ ...t, name: `${t.name}2` }))).executor() }),
      message: /different registry/,
    },
  ];

  it.each(BAD)('rejects $label with InvalidRequestError, and the store stays empty', async ({ patch, message }) => {
    const store = new InMemoryStore();
    const h = harness({ store });
    const request = { ...h.request, ...patch(h.request) };
    const failure = run(h.agent, request);
    await expect(failure).rejects.toThrow(InvalidRequestError);
    await expect(failure).rejects.toThrow(message);
    expect(store.runIds()).toEqual([]);
    expect(h.model.calls).toEqual([]);
    expect(h.calls).toEqual([]);
    expect(h.sink.events).toEqual([]);
  });

  it('rejects an executor whose registry has the same names but other schemas or replay policies', async () => {
    // Names alone do not make the same registry: the executor would validate against schemas the
    // model never saw, and its replay policies (which decide re-execution on resume) are not in
    // the run's identity snapshot, which records request.tools.
    const store = new InMemoryStore();
    const h = harness({ store });
    const looser = ToolRegistry.of(
      makeTools().map((t) => ({ ...t, replayPolicy: 'safe' as const, parameters: { type: 'object' } })),
    );
    expect(looser.names()).toEqual(h.request.tools.names());
    await expect(run(h.agent, { ...h.request, executor: looser.executor() })).rejects.toThrow(InvalidRequestError);
    expect(store.runIds()).toEqual([]);
  });

  it('accepts an executor of an equal registry built again from the same specs', async () => {
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'] });
    const again = ToolRegistry.of(makeTools(h.calls));
    const result = await run(h.agent, { ...h.request, executor: again.executor() });
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: '3', validActions: 1 });
  });

  it('the same request with a valid budget does run (the table above is not failing for another reason)', async () => {
    const store = new InMemoryStore();
    const h = harness({ store, script: ['{"final":"done"}'] });
    const result = await run(h.agent, {
      ...h.request,
      budget: budget({ maxSteps: 1, maxValidActions: 1, maxContextChars: 100_000 }),
      toolRenderStyle: 'json',
    });
    expect(result.stopReason).toBe('final_answer');
    expect(store.runIds()).toEqual(['run-1']);
  });

  it('resume() refuses the same malformed request, on an existing run, without writing', async () => {
    const store = new InMemoryStore();
    const h = harness({ store, script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'] });
    await run(h.agent, { ...h.request, budget: budget({ maxSteps: 1 }) });
    const before = await store.readLog('run-1');
    await expect(resume(h.agent, { ...h.request, budget: budget({ maxSteps: 0 }) })).rejects.toThrow(
      InvalidRequestError,
    );
    await expect(resume(h.agent, { ...h.request, toolRenderStyle: 'xml' as ToolRenderStyle })).rejects.toThrow(
      InvalidRequestError,
    );
    expect(await store.readLog('run-1')).toEqual(before);
  });

  it('defines agents that share nothing but what they were given', () => {
    const a = defineAgent({ ...config(), syntheticObservations: SYNTHETIC });
    const b = defineAgent({ ...config(), syntheticObservations: { notExecuted: 'other', envError: 'other' } });
    expect(a.params.syntheticObservations).toEqual(SYNTHETIC);
    expect(b.params.syntheticObservations.notExecuted).toBe('other');
  });
});

describe('validateRunRequest', () => {
  it('is the check run() makes: it accepts a good request and names the field of a bad one', async () => {
    const { validateRunRequest } = await import('../../../src/core/index.ts');
    const { harness } = await import('./fixtures.ts');
    const h = harness();
    expect(() => validateRunRequest(h.request)).not.toThrow();
    expect(() => validateRunRequest({ ...h.request, budget: { ...h.request.budget, maxSteps: 0 } })).toThrow(
      /budget\.maxSteps/,
    );
    expect(() => validateRunRequest({ ...h.request, toolRenderStyle: 'html' as never })).toThrow(/toolRenderStyle/);
  });
});
