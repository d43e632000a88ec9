/** ToolRegistry and RegistryExecutor: every outcome of a call and the registry rules (docs/api.md#tools). */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError, RegistryExecutor, ToolEnvironmentError, ToolRegistry } from '../../../src/core/index.ts';
import type { Action, ActionOutcome, JsonObject, ToolHandler, ToolSpec } from '../../../src/core/index.ts';

const ctx = (signal: AbortSignal = new AbortController().signal) => ({ runId: 'r', stepIndex: 0, resultId: 's0.action', signal });
const call = (name: string, args: unknown): Action => ({ kind: 'tool_call', name, arguments: args as JsonObject });

const ADD_SCHEMA: JsonObject = {
  type: 'object',
  properties: { a: { type: 'integer' }, b: { type: 'integer' } },
  required: ['a', 'b'],
  additionalProperties: false,
};

function spec(name: string, handler: ToolHandler, extra: Partial<ToolSpec> = {}): ToolSpec {
  return { name, description: `The ${name} tool.`, parameters: { type: 'object' }, handler, ...extra };
}

class QuotaExceededError extends Error {
  override readonly name = 'QuotaExceededError';
}
class NamelessSubclassError extends Error {}

/** A registry whose tools each exercise one row of the table. */
function tableRegistry(handled: string[] = []): ToolRegistry {
  return ToolRegistry.of([
    spec('add', async (args) => (handled.push('add'), String((args['a'] as number) + (args['b'] as number))), { parameters: ADD_SCHEMA }),
    spec('env', async () => {
      handled.push('env');
      throw new ToolEnvironmentError('the sandbox is gone');
    }),
    spec('typed', async () => {
      handled.push('typed');
      throw new QuotaExceededError('quota of 3 calls used up');
    }),
    spec('range', async () => {
      handled.push('range');
      throw new RangeError('index 9 out of range');
    }),
    spec('stringly', async () => {
      handled.push('stringly');
      throw 'plain string failure';
    }),
    spec('nameless', async () => {
      handled.push('nameless');
      throw new NamelessSubclassError('a subclass that does not set name');
    }),
  ]);
}

type Row = { readonly label: string; readonly action: Action; readonly status: ActionOutcome['status']; readonly synthetic: boolean; readonly observation: string | RegExp };

const ROWS: readonly Row[] = [
  { label: 'a code action is not a tool call', action: { kind: 'code', source: 'print(1)' }, status: 'not_executed', synthetic: true, observation: /not a tool call/ },
  { label: 'an unknown tool', action: call('nope', {}), status: 'not_executed', synthetic: true, observation: /unknown tool "nope".*known tools: add, env/ },
  { label: 'arguments that are not an object', action: call('add', [1, 2]), status: 'not_executed', synthetic: true, observation: /arguments of "add" must be a JSON object/ },
  { label: 'a missing required argument', action: call('add', { a: 1 }), status: 'not_executed', synthetic: true, observation: /"add" do not match its schema.*required property "b"/ },
  { label: 'an argument of the wrong type', action: call('add', { a: 1, b: 'two' }), status: 'not_executed', synthetic: true, observation: /#\/b: .*"integer"/ },
  { label: 'an argument the schema does not allow', action: call('add', { a: 1, b: 2, c: 3 }), status: 'not_executed', synthetic: true, observation: /"c" does not match additional properties/ },
  { label: 'a handler returning text', action: call('add', { a: 2, b: 5 }), status: 'executed', synthetic: false, observation: '7' },
  { label: 'a handler throwing ToolEnvironmentError', action: call('env', {}), status: 'env_error', synthetic: false, observation: 'the sandbox is gone' },
  { label: 'a handler throwing an Error subclass', action: call('typed', {}), status: 'executed', synthetic: false, observation: 'QuotaExceededError: quota of 3 calls used up' },
  { label: 'a handler throwing a built-in error', action: call('range', {}), status: 'executed', synthetic: false, observation: 'RangeError: index 9 out of range' },
  { label: 'a handler throwing a string', action: call('stringly', {}), status: 'executed', synthetic: false, observation: 'Error: plain string failure' },
];

describe('RegistryExecutor outcome table', () => {
  it.each(ROWS)('$label gives $status (synthetic: $synthetic)', async ({ action, status, synthetic, observation }) => {
    const out = await tableRegistry().executor().execute(action, ctx());
    expect(out.status).toBe(status);
    expect(out.observationIsSynthetic).toBe(synthetic);
    if (typeof observation === 'string') expect(out.observation).toBe(observation);
    else expect(out.observation).toMatch(observation);
    expect(out.envReportedCompletion).toBe(false);
    expect(out.observationTruncatedChars).toBe(0);
    expect(out.observation).not.toMatch(/\n\s+at /);
  });

  it('ends a schema refusal with one full stop, though the validator ends its own sentence', async () => {
    const out = await tableRegistry().executor().execute(call('add', { a: 1 }), ctx());
    expect(out.observation).toMatch(/required property "b"\.$/);
    expect(out.observation).not.toMatch(/\.\.$/);
  });

  it('reports several schema violations of one call in one sentence', async () => {
    const out = await tableRegistry().executor().execute(call('add', { a: 'x', b: 1.5, c: true }), ctx());
    expect(out.status).toBe('not_executed');
    expect(out.observation).toMatch(/^Not executed: arguments of "add" do not match its schema: /);
    expect(out.observation).toContain('#/a');
    expect(out.observation).toContain('#/b');
    expect(out.observation).toContain('"c"');
  });

  it('never calls the handler for an action it refuses', async () => {
    const handled: string[] = [];
    const ex = tableRegistry(handled).executor();
    for (const action of [call('add', { a: 1 }), call('nope', {}), { kind: 'code', source: 'x' } as const]) await ex.execute(action, ctx());
    expect(handled).toEqual([]);
  });

  it('names the error class of a subclass that does not set its own name', async () => {
    // A throw is observed as "error class name: message"; a subclass that does not override `name`
    // still has a class name.
    const out = await tableRegistry().executor().execute(call('nameless', {}), ctx());
    expect(out.status).toBe('executed');
    expect(out.observation).toBe('NamelessSubclassError: a subclass that does not set name');
  });

  it('passes the validated arguments and the signal to the handler', async () => {
    const seen: unknown[] = [];
    const controller = new AbortController();
    const reg = ToolRegistry.of([spec('echo', async (args, { signal }) => (seen.push(args, signal), 'ok'), { parameters: ADD_SCHEMA })]);
    await reg.executor().execute(call('echo', { a: 1, b: 2 }), ctx(controller.signal));
    expect(seen).toEqual([{ a: 1, b: 2 }, controller.signal]);
  });
});

describe('RegistryExecutor and abort', () => {
  it('rejects with signal.reason untouched when aborted before the handler, and does not call it', async () => {
    const handled: string[] = [];
    const controller = new AbortController();
    const reason = { why: 'user pressed stop' };
    controller.abort(reason);
    await expect(tableRegistry(handled).executor().execute(call('add', { a: 1, b: 2 }), ctx(controller.signal))).rejects.toBe(reason);
    expect(handled).toEqual([]);
  });

  it('rejects with signal.reason untouched when aborted during a handler that honours the signal', async () => {
    const controller = new AbortController();
    const reason = new Error('stop now');
    const reg = ToolRegistry.of([
      spec('slow', (_args, { signal }) => new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))),
    ]);
    const pending = reg.executor().execute(call('slow', {}), ctx(controller.signal));
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('rejects with signal.reason when aborted during a handler that ignores the signal and returns', async () => {
    const controller = new AbortController();
    const reason = new Error('stop now');
    const reg = ToolRegistry.of([spec('deaf', async () => (controller.abort(reason), 'finished anyway'))]);
    await expect(reg.executor().execute(call('deaf', {}), ctx(controller.signal))).rejects.toBe(reason);
  });

  it('rejects with signal.reason, not as env_error, when aborted during a handler that then throws ToolEnvironmentError', async () => {
    const controller = new AbortController();
    const reason = new Error('stop now');
    const reg = ToolRegistry.of([
      spec('envAfterAbort', async () => {
        controller.abort(reason);
        throw new ToolEnvironmentError('connection dropped');
      }),
    ]);
    await expect(reg.executor().execute(call('envAfterAbort', {}), ctx(controller.signal))).rejects.toBe(reason);
  });
});

describe('RegistryExecutor.executeTracked', () => {
  const completing = (behaviour: 'return' | 'throw' | 'env'): ToolSpec =>
    spec(
      'submit',
      async () => {
        if (behaviour === 'throw') throw new TypeError('bad submission');
        if (behaviour === 'env') throw new ToolEnvironmentError('grader offline');
        return 'submitted';
      },
      { completesRun: true },
    );

  it.each([
    { label: 'a completesRun tool that returned', tools: [completing('return')], action: call('submit', {}), completedRun: true, status: 'executed' },
    { label: 'a completesRun tool that threw an ordinary error', tools: [completing('throw')], action: call('submit', {}), completedRun: false, status: 'executed' },
    { label: 'a completesRun tool that threw ToolEnvironmentError', tools: [completing('env')], action: call('submit', {}), completedRun: false, status: 'env_error' },
    { label: 'a completesRun tool with bad arguments', tools: [{ ...completing('return'), parameters: ADD_SCHEMA }], action: call('submit', {}), completedRun: false, status: 'not_executed' },
    { label: 'an ordinary tool that returned', tools: [spec('plain', async () => 'ok')], action: call('plain', {}), completedRun: false, status: 'executed' },
    { label: 'a code action', tools: [completing('return')], action: { kind: 'code', source: 'submit()' } as Action, completedRun: false, status: 'not_executed' },
  ] as const)('completedRun is $completedRun for $label', async ({ tools, action, completedRun, status }) => {
    const tracked = await ToolRegistry.of(tools).executor().executeTracked(action, ctx());
    expect(tracked.completedRun).toBe(completedRun);
    expect(tracked.outcome.status).toBe(status);
    expect(tracked.outcome.envReportedCompletion).toBe(false);
  });
});

describe('ToolRegistry', () => {
  const three = (): ToolSpec[] => [
    spec('alpha', async () => 'a', { replayPolicy: 'safe' }),
    spec('beta', async () => 'b'),
    spec('gamma', async () => 'g', { replayPolicy: 'never', completesRun: true }),
  ];

  it('refuses duplicate tool names', () => {
    expect(() => ToolRegistry.of([...three(), spec('beta', async () => 'again')])).toThrow(InvalidRequestError);
    expect(() => ToolRegistry.of([...three(), spec('beta', async () => 'again')])).toThrow(/duplicate tool name "beta"/);
  });

  it('refuses a tool whose parameters are not a JSON Schema object', () => {
    expect(() => ToolRegistry.of([{ name: 'x', description: '', parameters: [] as unknown as JsonObject }])).toThrow(InvalidRequestError);
  });

  it('lists names and model schemas in registration order, without replay policy or handler', () => {
    const reg = ToolRegistry.of(three());
    expect(reg.names()).toEqual(['alpha', 'beta', 'gamma']);
    expect(reg.modelSchemas()).toEqual(three().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })));
  });

  it('gives descriptors with defaults filled in and undefined for an unknown name', () => {
    const reg = ToolRegistry.of(three());
    expect(reg.get('beta')).toEqual({ name: 'beta', description: 'The beta tool.', parameters: { type: 'object' }, replayPolicy: 'never', completesRun: false, needsApproval: false, answeredBy: null });
    expect(reg.get('gamma')?.completesRun).toBe(true);
    expect(reg.get('delta')).toBeUndefined();
  });

  it('restrictTo returns a new registry in original order and leaves the original unchanged', () => {
    const reg = ToolRegistry.of(three());
    const before = { names: reg.names(), schemas: reg.modelSchemas(), alpha: reg.get('alpha') };
    const sub = reg.restrictTo(['gamma', 'alpha']);
    expect(sub).toBeInstanceOf(ToolRegistry);
    expect(sub).not.toBe(reg);
    expect(sub.names()).toEqual(['alpha', 'gamma']);
    expect(sub.get('beta')).toBeUndefined();
    expect(sub.modelSchemas().map((s) => s.name)).toEqual(['alpha', 'gamma']);
    expect(reg.names()).toEqual(before.names);
    expect(reg.modelSchemas()).toEqual(before.schemas);
    expect(reg.get('alpha')).toEqual(before.alpha);
    expect(reg.get('beta')).toBeDefined();
  });

  it('restrictTo with an unknown name throws and names it', () => {
    const reg = ToolRegistry.of(three());
    expect(() => reg.restrictTo(['alpha', 'omega'])).toThrow(InvalidRequestError);
    expect(() => reg.restrictTo(['alpha', 'omega'])).toThrow(/"omega"/);
    expect(reg.names()).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('restrictTo([]) gives an empty registry whose executor refuses every call', async () => {
    const empty = ToolRegistry.of(three()).restrictTo([]);
    expect(empty.names()).toEqual([]);
    const out = await empty.executor().execute(call('alpha', {}), ctx());
    expect(out).toMatchObject({ status: 'not_executed', observationIsSynthetic: true });
    expect(out.observation).toMatch(/no tools are available/);
  });

  it('a restricted executor does not run a tool left out of it', async () => {
    const handled: string[] = [];
    const reg = ToolRegistry.of([spec('a', async () => (handled.push('a'), 'a')), spec('b', async () => (handled.push('b'), 'b'))]);
    const out = await reg.restrictTo(['a']).executor().execute(call('b', {}), ctx());
    expect(out.status).toBe('not_executed');
    expect(handled).toEqual([]);
  });

  it('is not changed when the specs it was built from are mutated afterwards', () => {
    const specs = [spec('add', async () => '', { parameters: structuredClone(ADD_SCHEMA) as JsonObject })];
    const reg = ToolRegistry.of(specs);
    (specs[0]!.parameters as { required: string[] }).required = [];
    expect(reg.get('add')?.parameters).toEqual(ADD_SCHEMA);
    expect(reg.validate(call('add', {})).ok).toBe(false);
  });

  it('is not changed when a caller mutates the schemas modelSchemas() returned', () => {
    // An adapter that tweaks schemas for its provider (e.g. strict mode) must not loosen validation.
    const reg = ToolRegistry.of([spec('add', async () => '', { parameters: ADD_SCHEMA })]);
    const schema = reg.modelSchemas()[0]?.parameters as { required?: string[] };
    try {
      schema.required = [];
    } catch {
      // A frozen schema refusing the write is fine too.
    }
    expect(reg.get('add')?.parameters).toEqual(ADD_SCHEMA);
    expect(reg.validate(call('add', {})).ok).toBe(false);
  });

  it('executor() throws at once, naming every tool without a handler', () => {
    const reg = ToolRegistry.of([
      spec('ok', async () => ''),
      { name: 'bare1', description: '', parameters: { type: 'object' } },
      { name: 'bare2', description: '', parameters: { type: 'object' } },
    ]);
    expect(() => reg.executor()).toThrow(InvalidRequestError);
    expect(() => reg.executor()).toThrow(/bare1, bare2/);
    expect(() => reg.restrictTo(['ok']).executor()).not.toThrow();
  });

  it('executor() returns a RegistryExecutor bound to its registry', () => {
    const reg = ToolRegistry.of(three());
    const ex = reg.executor();
    expect(ex).toBeInstanceOf(RegistryExecutor);
    expect(ex.registry).toBe(reg);
  });

  it.each([
    { label: 'a valid call', action: call('alpha', {}), expected: { ok: true } },
    { label: 'a code action', action: { kind: 'code', source: 'x' } as Action, expected: { ok: false, message: 'the action is not a tool call' } },
    { label: 'an unknown tool', action: call('zeta', {}), expected: { ok: false, message: 'unknown tool "zeta" (known tools: alpha, beta, gamma)' } },
    { label: 'non-object arguments', action: call('alpha', 'text'), expected: { ok: false, message: 'arguments of "alpha" must be a JSON object' } },
  ])('validate gives $expected.ok for $label', ({ action, expected }) => {
    expect(ToolRegistry.of(three()).validate(action)).toEqual(expected);
  });

  it.each([
    { label: 'a tool with replayPolicy safe', action: call('alpha', {}), policy: 'safe' },
    { label: 'a tool without a replayPolicy (default never)', action: call('beta', {}), policy: 'never' },
    { label: 'a tool with replayPolicy never', action: call('gamma', {}), policy: 'never' },
    { label: 'an unknown tool (nothing runs)', action: call('zeta', {}), policy: 'safe' },
    { label: 'a code action (nothing runs)', action: { kind: 'code', source: 'rm -rf /' } as Action, policy: 'safe' },
  ])('replayPolicyFor is $policy for $label', ({ action, policy }) => {
    expect(ToolRegistry.of(three()).executor().replayPolicyFor(action)).toBe(policy);
  });
});

describe('argument validation (JSON Schema 2020-12, no eval)', () => {
  const reg = ToolRegistry.of([
    {
      name: 'plot',
      description: 'Plot a point.',
      parameters: {
        type: 'object',
        $defs: { coord: { type: 'number', minimum: -180, maximum: 180 }, label: { type: 'string', minLength: 1 } },
        properties: {
          point: { type: 'array', prefixItems: [{ $ref: '#/$defs/coord' }, { $ref: '#/$defs/coord' }, { $ref: '#/$defs/label' }], items: false },
          tags: { type: 'array', items: { $ref: '#/$defs/label' }, uniqueItems: true },
          style: { enum: ['dot', 'cross'] },
        },
        required: ['point'],
        dependentRequired: { style: ['tags'] },
      },
      handler: async () => 'plotted',
    },
  ]);

  it.each([
    { label: 'prefixItems and $ref all satisfied', args: { point: [10, -20, 'home'] }, ok: true },
    { label: 'a $ref leaf out of range', args: { point: [10, 999, 'home'] }, ok: false, where: '#/point/1' },
    { label: 'prefixItems in the wrong order', args: { point: ['home', 10, 20] }, ok: false, where: '#/point/0' },
    { label: 'an item past prefixItems when items is false', args: { point: [1, 2, 'x', 4] }, ok: false, where: '#/point/3' },
    { label: 'a $ref through items', args: { point: [1, 2, 'x'], tags: ['a', ''] }, ok: false, where: '#/tags/1' },
    { label: 'uniqueItems', args: { point: [1, 2, 'x'], tags: ['a', 'a'] }, ok: false, where: '#/tags' },
    { label: 'dependentRequired (a 2019-09+ keyword)', args: { point: [1, 2, 'x'], style: 'dot' }, ok: false, where: 'tags' },
    { label: 'an enum', args: { point: [1, 2, 'x'], tags: ['t'], style: 'star' }, ok: false, where: '#/style' },
  ])('$label → ok: $ok', ({ args, ok, where }) => {
    const result = reg.validate(call('plot', args));
    expect(result.ok).toBe(ok);
    if (!result.ok && where) expect(result.message).toContain(where);
  });

  it('validates without generating code from strings (eval and Function are unavailable)', () => {
    // The bundle test (purity-and-bundle) checks the code text and runs it under
    // --disallow-code-generation-from-strings; this checks the same in-process.
    const g = globalThis as { eval: unknown; Function: unknown };
    const saved = { eval: g.eval, Function: g.Function };
    const refuse = (): never => {
      throw new EvalError('code generation from strings is disallowed here');
    };
    g.eval = refuse;
    g.Function = refuse;
    try {
      const fresh = ToolRegistry.of([{ name: 'add', description: '', parameters: ADD_SCHEMA }]);
      expect(fresh.validate(call('add', { a: 1, b: 2 }))).toEqual({ ok: true });
      expect(fresh.validate(call('add', { a: 1 })).ok).toBe(false);
      expect(reg.validate(call('plot', { point: [1, 2, 'x'] }))).toEqual({ ok: true });
    } finally {
      g.eval = saved.eval;
      g.Function = saved.Function;
    }
  });
});

describe('ToolRegistry.of refuses a schema the validator would misread or throw on, naming the tool', () => {
  const BAD_SCHEMAS: readonly { label: string; parameters: unknown; names: string }[] = [
    { label: 'properties: 5', parameters: { type: 'object', properties: 5 }, names: 'parameters.properties must be an object of schemas' },
    { label: 'a property schema that is a string', parameters: { type: 'object', properties: { a: 'integer' } }, names: 'parameters.properties.a must be a schema' },
    { label: 'an unresolvable $ref', parameters: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }, names: 'parameters.properties.a.$ref "#/$defs/missing" does not resolve' },
    { label: 'a $ref to another document', parameters: { $ref: 'https://example.com/schema.json' }, names: 'parameters.$ref' },
    { label: 'an invalid pattern', parameters: { type: 'object', properties: { a: { type: 'string', pattern: '([a-z' } } }, names: 'parameters.properties.a.pattern is not a valid regular expression' },
    { label: 'a pattern valid only without the u flag', parameters: { type: 'string', pattern: '\\-' }, names: 'parameters.pattern is not a valid regular expression' },
    { label: 'an invalid patternProperties key', parameters: { type: 'object', patternProperties: { '(': { type: 'string' } } }, names: 'parameters.patternProperties key "("' },
    { label: "type: 'banana'", parameters: { type: 'banana' }, names: 'parameters.type must be one of' },
    { label: 'a type list with an unknown name', parameters: { type: ['string', 'date'] }, names: 'parameters.type' },
    { label: "required: 'x'", parameters: { type: 'object', required: 'x' }, names: 'parameters.required must be an array of property names' },
    { label: 'enum that is not an array', parameters: { enum: 'a' }, names: 'parameters.enum must be an array' },
    { label: 'minLength -1', parameters: { type: 'string', minLength: -1 }, names: 'parameters.minLength must be a non-negative integer' },
    { label: 'anyOf: []', parameters: { anyOf: [] }, names: 'parameters.anyOf must be a non-empty array of schemas' },
    { label: 'a BigInt default', parameters: { type: 'object', default: 1n }, names: 'parameters.default is a bigint' },
    { label: 'a schema that contains itself', parameters: ((o: Record<string, unknown>) => ((o['not'] = o), o))({ type: 'object' }), names: 'parameters.not refers back to itself' },
    { label: 'a duplicate $id', parameters: { $defs: { a: { $id: 'https://x.test/a' }, b: { $id: 'https://x.test/a' } } }, names: 'parameters' },
    { label: 'the unsupported $dynamicRef', parameters: { $dynamicRef: '#meta' }, names: 'parameters.$dynamicRef is not supported' },
  ];

  it.each(BAD_SCHEMAS)('refuses $label', ({ parameters, names }) => {
    const build = () => ToolRegistry.of([spec('ok', async () => ''), spec('shady', async () => '', { parameters: parameters as JsonObject })]);
    expect(build).toThrow(InvalidRequestError);
    expect(build).toThrow(`tool "shady": ${names}`);
  });

  it.each([
    { label: 'a boolean property schema', parameters: { type: 'object', properties: { any: true, none: false } } },
    { label: 'a $ref to the root', parameters: { type: 'object', properties: { child: { $ref: '#' } } } },
    { label: 'a $ref by $anchor', parameters: { $defs: { n: { $anchor: 'num', type: 'number' } }, properties: { a: { $ref: '#num' } } } },
    { label: 'a $ref to a relative $id', parameters: { $id: 'https://x.test/root', $defs: { n: { $id: 'n', type: 'number' } }, properties: { a: { $ref: 'n' } } } },
    { label: 'unknown annotation keywords', parameters: { type: 'object', 'x-ui': { widget: 5, type: 'banana' } } },
    { label: 'a tuple in the older items form', parameters: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } },
    { label: 'draft 7 dependencies', parameters: { type: 'object', dependencies: { a: ['b'], c: { required: ['d'] } } } },
    { label: 'a Unicode property escape pattern', parameters: { type: 'string', pattern: '^\\p{L}+$' } },
  ])('accepts $label', ({ parameters }) => {
    expect(() => ToolRegistry.of([spec('fine', async () => '', { parameters: parameters as JsonObject })])).not.toThrow();
  });

  it('a $ref that the check accepted resolves when the arguments reach it', () => {
    const reg = ToolRegistry.of([spec('tree', async () => '', { parameters: { type: 'object', properties: { kid: { $ref: '#' }, v: { type: 'integer' } } } })]);
    expect(reg.validate(call('tree', { kid: { kid: { v: 1 } } }))).toEqual({ ok: true });
    expect(reg.validate(call('tree', { kid: { kid: { v: 'x' } } })).ok).toBe(false);
  });

  it.each([
    { label: 'a description that is not a string', patch: { description: 5 }, names: 'tool "t": description must be a string' },
    { label: 'an unknown replay policy', patch: { replayPolicy: 'sometimes' }, names: 'tool "t": replayPolicy must be "safe" or "never"' },
    { label: 'completesRun that is not a boolean', patch: { completesRun: 'yes' }, names: 'tool "t": completesRun must be a boolean' },
    { label: 'a handler that is not a function', patch: { handler: 'run' }, names: 'tool "t": handler must be a function' },
  ])('refuses a spec with $label', ({ patch, names }) => {
    const build = () => ToolRegistry.of([{ ...spec('t', async () => ''), ...patch } as unknown as ToolSpec]);
    expect(build).toThrow(InvalidRequestError);
    expect(build).toThrow(names);
  });

  it.each([null, 5, 'tool'])('refuses a spec that is %s, not an object', (value) => {
    expect(() => ToolRegistry.of([value as unknown as ToolSpec])).toThrow(InvalidRequestError);
  });

  it('refuses specs that are not an array', () => {
    expect(() => ToolRegistry.of({ name: 'x' } as unknown as ToolSpec[])).toThrow(InvalidRequestError);
  });
});

describe('validate() never throws, whatever the action', () => {
  const reg = ToolRegistry.of([spec('add', async () => '', { parameters: ADD_SCHEMA })]);
  const deep = (levels: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < levels; i++) v = { a: v };
    return v;
  };
  const cyclic = (): unknown => {
    const o: Record<string, unknown> = { a: 1 };
    o['b'] = o;
    return o;
  };

  it.each([
    { label: 'a BigInt argument', action: call('add', { a: 1n, b: 2 }), message: 'arguments.a is a bigint' },
    { label: 'an argument that contains itself', action: call('add', cyclic()), message: 'arguments.b refers back to itself' },
    { label: 'arguments nested 10,000 levels deep', action: call('add', deep(10_000)), message: 'nested more than' },
    { label: 'a function argument', action: call('add', { a: () => 1, b: 2 }), message: 'arguments.a is a function' },
    { label: 'a null action', action: null as unknown as Action, message: 'not a tool call' },
    { label: 'a string action', action: 'add' as unknown as Action, message: 'not a tool call' },
  ])('gives ok: false for $label', ({ action, message }) => {
    const result = reg.validate(action);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain(message);
  });

  it('an executor refuses such an action as not executed and never calls the handler', async () => {
    let called = 0;
    const ex = ToolRegistry.of([spec('add', async () => (called++, 'ran'), { parameters: ADD_SCHEMA })]).executor();
    const out = await ex.execute(call('add', { a: 1n, b: 2 }), ctx());
    expect(out).toMatchObject({ status: 'not_executed', observationIsSynthetic: true });
    expect(called).toBe(0);
  });
});

describe('RegistryExecutor built directly and handlers that break the contract', () => {
  it('refuses direct construction when a tool has no handler, as executor() does', () => {
    const reg = ToolRegistry.of([spec('ok', async () => ''), { name: 'bare', description: '', parameters: { type: 'object' } }]);
    expect(() => new RegistryExecutor(reg, () => undefined)).toThrow(InvalidRequestError);
    expect(() => new RegistryExecutor(reg, () => undefined)).toThrow(/ok, bare/);
    expect(() => new RegistryExecutor(reg, (name) => (name === 'ok' ? async () => '' : undefined))).toThrow(/no handler for tool\(s\) bare/);
  });

  it.each([
    { label: 'a registry that is not a ToolRegistry', args: [{ names: () => [] }, () => undefined] },
    { label: 'a handler lookup that is not a function', args: [ToolRegistry.of([]), undefined] },
  ])('refuses $label', ({ args }) => {
    expect(() => new RegistryExecutor(...(args as ConstructorParameters<typeof RegistryExecutor>))).toThrow(InvalidRequestError);
  });

  it('runs the handlers it was given when built directly with all of them', async () => {
    const reg = ToolRegistry.of([{ name: 'bare', description: '', parameters: { type: 'object' } }]);
    const ex = new RegistryExecutor(reg, () => async () => 'from the lookup');
    expect(await ex.execute(call('bare', {}), ctx())).toMatchObject({ status: 'executed', observation: 'from the lookup' });
  });

  it('keeps the handlers it found at construction, whatever the lookup answers later', async () => {
    let handler: ToolHandler | undefined = async () => 'first';
    const ex = new RegistryExecutor(ToolRegistry.of([{ name: 't', description: '', parameters: { type: 'object' } }]), () => handler);
    handler = undefined;
    expect(await ex.execute(call('t', {}), ctx())).toMatchObject({ status: 'executed', observation: 'first' });
  });

  it.each([
    { label: 'an object', value: { text: 'hi' }, kind: 'an object' },
    { label: 'a number', value: 42, kind: 'a number' },
    { label: 'undefined', value: undefined, kind: 'undefined' },
    { label: 'null', value: null, kind: 'null' },
    { label: 'an array', value: ['a'], kind: 'an array' },
  ])('a handler returning $label gives an executed outcome that says so, as if it had thrown a TypeError', async ({ value, kind }) => {
    const reg = ToolRegistry.of([spec('odd', (async () => value) as unknown as ToolHandler, { completesRun: true })]);
    const tracked = await reg.executor().executeTracked(call('odd', {}), ctx());
    expect(tracked.outcome).toEqual({
      status: 'executed',
      observation: `TypeError: handler of "odd" returned ${kind}, not a string`,
      observationIsSynthetic: false,
      envReportedCompletion: false,
      observationTruncatedChars: 0,
    });
    // A handler that broke its contract did not return normally: it completes nothing.
    expect(tracked.completedRun).toBe(false);
  });

  it('a handler returning a non-string after abort rejects with signal.reason', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const reg = ToolRegistry.of([spec('odd', (async () => (controller.abort(reason), 7)) as unknown as ToolHandler)]);
    await expect(reg.executor().execute(call('odd', {}), ctx(controller.signal))).rejects.toBe(reason);
  });
});
