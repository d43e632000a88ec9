/**
 * The checks run() and defineAgent make before anything else: every required field, and
 * every value that later reaches the size metric, the snapshot's canonical JSON or a timer.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, InMemoryStore, InvalidRequestError, run, validateRunRequest } from '../../../src/core/index.ts';
import type { ActionExecutor, AgentConfig, Budget, Message, RunRequest } from '../../../src/core/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { harness, text } from './fixtures.ts';

const base = (): RunRequest => harness().request;

/** Asserts `request` is refused with an InvalidRequestError whose message contains `names`. */
function expectRefused(request: unknown, names: string): void {
  let thrown: unknown;
  try {
    validateRunRequest(request as RunRequest);
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(InvalidRequestError);
  expect((thrown as Error).message).toContain(names);
}

const cyclic = (): Record<string, unknown> => {
  const o: Record<string, unknown> = {};
  o['me'] = o;
  return o;
};
const deep = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { d: v };
  return v;
};
const withGoal = (...goal: unknown[]): RunRequest => ({ ...base(), context: { run: [], goal: goal as Message[] } });
const withRun = (...messages: unknown[]): RunRequest => ({
  ...base(),
  context: { run: messages as Message[], goal: [text('user', 'go')] },
});

describe('every required request field has a check that names it', () => {
  const FIELDS = [
    'runId',
    'budget',
    'executor',
    'tools',
    'context',
    'injections',
    'modelBinding',
    'modelReplayPolicy',
    'observationTemplate',
    'toolRenderStyle',
    'cancelGraceMs',
  ] as const;

  it('the table covers every field of a request', () => {
    expect([...FIELDS].sort()).toEqual(Object.keys(base()).sort());
  });

  it.each(FIELDS)('refuses a request without %s', (key) => {
    const { [key]: _dropped, ...rest } = base();
    expectRefused(rest, `request.${key}`);
  });

  it.each(['maxSteps', 'maxValidActions', 'maxContextChars'] as const)('refuses a budget without %s', (key) => {
    const { [key]: _dropped, ...budget } = base().budget;
    expectRefused({ ...base(), budget }, `request.budget.${key}`);
  });

  it.each(['run', 'goal'] as const)('refuses a context without %s', (key) => {
    const { [key]: _dropped, ...context } = base().context;
    expectRefused({ ...base(), context }, `request.context.${key}`);
  });

  it('refuses something that is not a request at all', () => {
    for (const value of [null, undefined, 'request', 7, []]) expectRefused(value, 'request');
  });
});

describe('context messages are checked block by block (the size metric and the snapshot rely on them)', () => {
  const CASES: readonly { label: string; request: () => RunRequest; names: string }[] = [
    {
      label: 'a null message',
      request: () => withGoal(null),
      names: 'request.context.goal[0] must be a message object',
    },
    {
      label: 'a message that is a number',
      request: () => withRun(5),
      names: 'request.context.run[0] must be a message object',
    },
    {
      label: 'a message with role "tool"',
      request: () => withGoal({ role: 'tool', content: [] }),
      names: 'request.context.goal[0].role',
    },
    {
      label: 'a content of [null]',
      request: () => withGoal({ role: 'user', content: [null] }),
      names: 'request.context.goal[0].content[0] must be a content block object',
    },
    {
      label: 'a content string',
      request: () => withGoal({ role: 'user', content: 'hello' }),
      names: 'request.context.goal[0].content must be an array',
    },
    {
      label: 'a block of unknown type',
      request: () => withGoal({ role: 'user', content: [{ type: 'image', url: 'x' }] }),
      names: 'request.context.goal[0].content[0].type',
    },
    {
      label: 'text: 12345',
      request: () => withGoal({ role: 'user', content: [{ type: 'text', text: 12345 }] }),
      names: 'request.context.goal[0].content[0].text must be a string',
    },
    {
      label: 'a BigInt text',
      request: () => withRun({ role: 'system', content: [{ type: 'text', text: 5n }] }),
      names: 'request.context.run[0].content[0].text must be a string, got a bigint',
    },
    {
      label: 'tool-call arguments holding a BigInt',
      request: () =>
        withRun({ role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'add', arguments: { a: 1n } }] }),
      names: 'request.context.run[0].content[0].arguments.a is a bigint',
    },
    {
      label: 'tool-call arguments that contain themselves',
      request: () =>
        withRun({ role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'add', arguments: cyclic() }] }),
      names: 'request.context.run[0].content[0].arguments.me refers back to itself',
    },
    {
      label: 'tool-call arguments nested too deep to store',
      request: () =>
        withRun({ role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'add', arguments: deep(5000) }] }),
      names: 'request.context.run[0].content[0].arguments',
    },
    {
      label: 'an extra message field holding a BigInt',
      request: () => withGoal({ role: 'user', content: [], meta: 1n }),
      names: 'request.context.goal[0].meta is a bigint',
    },
    {
      label: 'an extra block field holding a cycle',
      request: () => withGoal({ role: 'user', content: [{ type: 'text', text: 'x', extra: cyclic() }] }),
      names: 'request.context.goal[0].content[0].extra.me refers back',
    },
    {
      label: 'an extra context field holding a function',
      request: () => ({ ...base(), context: { ...base().context, hook: () => 1 } as RunRequest['context'] }),
      names: 'request.context.hook is a function',
    },
  ];

  it.each(CASES)(
    'refuses $label with InvalidRequestError naming the path, never a raw TypeError',
    ({ request, names }) => {
      expectRefused(request(), names);
    },
  );

  it('refuses a 5,000-character goal with an unknown block under maxContextChars 100, before writing anything', async () => {
    // Before: the unknown block measured NaN, NaN > 100 is false, and the run went ahead.
    const store = new InMemoryStore();
    const h = harness({ store, script: ['{"final":"ok"}'] });
    const goal = [
      { role: 'user', content: [{ type: 'text', text: 'x'.repeat(5000) }, { type: 'image' }] },
    ] as unknown as Message[];
    const budget: Budget = { ...h.request.budget, maxContextChars: 100 };
    const failure = run(h.agent, { ...h.request, budget, context: { run: [], goal } });
    await expect(failure).rejects.toThrow(InvalidRequestError);
    await expect(failure).rejects.toThrow('request.context.goal[0].content[1].type');
    expect(store.runIds()).toEqual([]);
    expect(h.model.calls).toEqual([]);
  });

  it('the same goal without the bad block stops on the context limit (the budget above is really too small)', async () => {
    const h = harness({ script: ['{"final":"ok"}'] });
    const budget: Budget = { ...h.request.budget, maxContextChars: 100 };
    const result = await run(h.agent, {
      ...h.request,
      budget,
      context: { run: [], goal: [text('user', 'x'.repeat(5000))] },
    });
    expect(result.stopReason).toBe('context_limit');
  });

  it('accepts every kind of block the library defines', () => {
    const messages: Message[] = [
      { role: 'system', content: [{ type: 'text', text: 'rules' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'r', signature: 's' },
          { type: 'tool_call', id: 'c', name: 'add', arguments: { a: 1, b: [2, null] } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', toolCallId: 'c', text: '3' }] },
    ];
    expect(() => validateRunRequest({ ...base(), context: { run: messages, goal: [] } })).not.toThrow();
  });
});

describe('injections and model binding', () => {
  const CASES: readonly { label: string; patch: Partial<Record<keyof RunRequest, unknown>>; names: string }[] = [
    { label: 'injections null', patch: { injections: null }, names: 'request.injections' },
    { label: 'injections an array', patch: { injections: [] }, names: 'request.injections' },
    { label: 'injections a Map', patch: { injections: new Map() }, names: 'request.injections' },
    {
      label: 'a channel that is not an array',
      patch: { injections: { skills: 'x' } },
      names: 'request.injections.skills must be an array',
    },
    { label: 'a null entry', patch: { injections: { skills: [null] } }, names: 'request.injections.skills[0]' },
    {
      label: 'a numeric entry',
      patch: { injections: { skills: [{ name: 'a', text: 'b' }, 3] } },
      names: 'request.injections.skills[1]',
    },
    {
      label: 'an entry with a numeric text',
      patch: { injections: { skills: [{ name: 'a', text: 3 }] } },
      names: 'request.injections.skills[0].text',
    },
    {
      label: 'an entry without a name',
      patch: { injections: { skills: [{ text: 't' }] } },
      names: 'request.injections.skills[0].name',
    },
    {
      label: 'an entry with a BigInt extra field',
      patch: { injections: { skills: [{ name: 'a', text: 'b', v: 1n }] } },
      names: 'request.injections.skills[0].v is a bigint',
    },
    { label: 'modelBinding null', patch: { modelBinding: null }, names: 'request.modelBinding' },
    { label: 'modelBinding an array', patch: { modelBinding: ['a'] }, names: 'request.modelBinding' },
    {
      label: 'a numeric binding',
      patch: { modelBinding: { user: 5 } },
      names: 'request.modelBinding.user must be a string',
    },
    {
      label: 'a null binding',
      patch: { modelBinding: { user: null } },
      names: 'request.modelBinding.user must be a string',
    },
    {
      label: 'a BigInt binding',
      patch: { modelBinding: { user: 1n } },
      names: 'request.modelBinding.user must be a string',
    },
  ];

  it.each(CASES)('refuses $label with InvalidRequestError naming it', ({ patch, names }) => {
    expectRefused({ ...base(), ...patch }, names);
  });

  it('accepts entries and bindings of the documented shapes', () => {
    expect(() =>
      validateRunRequest({ ...base(), injections: { a: [], b: [{ name: 'n', text: 't' }] }, modelBinding: {} }),
    ).not.toThrow();
  });
});

describe('a custom executor', () => {
  const custom = (params: unknown): ActionExecutor =>
    ({
      params,
      execute: async () => ({
        status: 'executed',
        observation: '',
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: 0,
      }),
    }) as ActionExecutor;

  it.each([
    { label: 'params holding a BigInt', params: { v: 1n }, names: 'request.executor.params.v' },
    { label: 'params holding an object', params: { v: { nested: true } }, names: 'request.executor.params.v' },
    { label: 'params holding NaN', params: { v: Number.NaN }, names: 'request.executor.params.v' },
    { label: 'params that are a string', params: 'p', names: 'request.executor.params' },
  ])('is refused with $label (params enter the snapshot)', ({ params, names }) => {
    expectRefused({ ...base(), executor: custom(params) }, names);
  });

  it('is accepted without params, with null params or with flat ones', () => {
    expect(() => validateRunRequest({ ...base(), executor: custom(undefined) })).not.toThrow();
    expect(() => validateRunRequest({ ...base(), executor: custom(null) })).not.toThrow();
    expect(() =>
      validateRunRequest({ ...base(), executor: custom({ env: 'sandbox', v: 2, on: true, none: null }) }),
    ).not.toThrow();
  });
});

describe('cancelGraceMs (a timer delay)', () => {
  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, 1e10, '5', null])('refuses %s', (value) => {
    expectRefused({ ...base(), cancelGraceMs: value }, 'request.cancelGraceMs');
  });

  it.each([0, 1.5, 1000, 2 ** 31 - 1])('accepts %s', (value) => {
    expect(() => validateRunRequest({ ...base(), cancelGraceMs: value })).not.toThrow();
  });
});

describe('every AgentConfig field has a check that names it', () => {
  const config = (): AgentConfig => ({
    model: scriptedModel(['{"final":"ok"}'], { model: 'm' }),
    interpreter: jsonActionInterpreter(),
    store: new InMemoryStore(),
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'Not run.', envError: 'Env broke.' },
  });
  const without = (c: AgentConfig, seam: keyof AgentConfig, key: string): AgentConfig => {
    const { [key]: _dropped, ...rest } = c[seam] as unknown as Record<string, unknown>;
    // Store methods live on the prototype: a plain copy of the own fields leaves one out.
    const copy =
      seam === 'store'
        ? Object.fromEntries(
            ['runStarted', 'intent', 'result', 'step', 'readLog', 'runEnded', 'acquire']
              .filter((m) => m !== key)
              .map((m) => [m, () => undefined]),
          )
        : rest;
    return { ...c, [seam]: copy };
  };
  const NESTED: readonly [keyof AgentConfig, string][] = [
    ['model', 'call'],
    ['model', 'params'],
    ['interpreter', 'interpret'],
    ['interpreter', 'params'],
    ['events', 'deliver'],
    ['events', 'params'],
    ...(['runStarted', 'intent', 'result', 'step', 'readLog', 'runEnded'] as const).map(
      (m): [keyof AgentConfig, string] => ['store', m],
    ),
    ['syntheticObservations', 'notExecuted'],
    ['syntheticObservations', 'envError'],
  ];

  it.each(['model', 'interpreter', 'store', 'events', 'syntheticObservations'] as const)(
    'refuses a config without %s',
    (key) => {
      const { [key]: _dropped, ...rest } = config();
      expect(() => defineAgent(rest as AgentConfig)).toThrow(InvalidRequestError);
      expect(() => defineAgent(rest as AgentConfig)).toThrow(key);
    },
  );

  it.each(NESTED)('refuses a config whose %s has no %s', (seam, key) => {
    const bad = without(config(), seam, key);
    expect(() => defineAgent(bad)).toThrow(InvalidRequestError);
    expect(() => defineAgent(bad)).toThrow(`${seam}.${key}`);
  });

  it('refuses a model without params.model', () => {
    const c = config();
    expect(() => defineAgent({ ...c, model: { ...c.model, params: { temperature: 0 } } })).toThrow(
      'model.params.model',
    );
  });

  it.each([
    { seam: 'model', params: { model: 'm', big: 1n }, names: 'model.params.big' },
    { seam: 'model', params: { model: 'm', nested: { a: 1 } }, names: 'model.params.nested' },
    { seam: 'interpreter', params: { v: Number.POSITIVE_INFINITY }, names: 'interpreter.params.v' },
    { seam: 'events', params: { list: [] }, names: 'events.params.list' },
    { seam: 'events', params: new Map(), names: 'events.params' },
  ] as const)('refuses $names that the snapshot could not hold', ({ seam, params, names }) => {
    const c = config();
    const bad = { ...c, [seam]: { ...c[seam], params } } as AgentConfig;
    expect(() => defineAgent(bad)).toThrow(InvalidRequestError);
    expect(() => defineAgent(bad)).toThrow(names);
  });

  it('refuses something that is not a config at all', () => {
    for (const value of [null, undefined, 'config', []])
      expect(() => defineAgent(value as unknown as AgentConfig)).toThrow(InvalidRequestError);
  });
});
