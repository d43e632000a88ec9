/**
 * Tool arguments against their JSON Schema: validation without eval, schemas refused up front,
 * validate() never throwing (docs/api.md#tools).
 */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError, ToolRegistry } from '../../../src/core/index.ts';
import type { Action, JsonObject, ToolSpec } from '../../../src/core/index.ts';
import { ADD_SCHEMA, call, ctx, spec } from './tools-fixtures.ts';

describe('argument validation (JSON Schema 2020-12, no eval)', () => {
  const reg = ToolRegistry.of([
    {
      name: 'plot',
      description: 'Plot a point.',
      parameters: {
        type: 'object',
        $defs: { coord: { type: 'number', minimum: -180, maximum: 180 }, label: { type: 'string', minLength: 1 } },
        properties: {
          point: {
            type: 'array',
            prefixItems: [{ $ref: '#/$defs/coord' }, { $ref: '#/$defs/coord' }, { $ref: '#/$defs/label' }],
            items: false,
          },
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
    {
      label: 'an item past prefixItems when items is false',
      args: { point: [1, 2, 'x', 4] },
      ok: false,
      where: '#/point/3',
    },
    { label: 'a $ref through items', args: { point: [1, 2, 'x'], tags: ['a', ''] }, ok: false, where: '#/tags/1' },
    { label: 'uniqueItems', args: { point: [1, 2, 'x'], tags: ['a', 'a'] }, ok: false, where: '#/tags' },
    {
      label: 'dependentRequired (a 2019-09+ keyword)',
      args: { point: [1, 2, 'x'], style: 'dot' },
      ok: false,
      where: 'tags',
    },
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
    {
      label: 'properties: 5',
      parameters: { type: 'object', properties: 5 },
      names: 'parameters.properties must be an object of schemas',
    },
    {
      label: 'a property schema that is a string',
      parameters: { type: 'object', properties: { a: 'integer' } },
      names: 'parameters.properties.a must be a schema',
    },
    {
      label: 'an unresolvable $ref',
      parameters: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
      names: 'parameters.properties.a.$ref "#/$defs/missing" does not resolve',
    },
    {
      label: 'a $ref to another document',
      parameters: { $ref: 'https://example.com/schema.json' },
      names: 'parameters.$ref',
    },
    {
      label: 'an invalid pattern',
      parameters: { type: 'object', properties: { a: { type: 'string', pattern: '([a-z' } } },
      names: 'parameters.properties.a.pattern is not a valid regular expression',
    },
    {
      label: 'a pattern valid only without the u flag',
      parameters: { type: 'string', pattern: '\\-' },
      names: 'parameters.pattern is not a valid regular expression',
    },
    {
      label: 'an invalid patternProperties key',
      parameters: { type: 'object', patternProperties: { '(': { type: 'string' } } },
      names: 'parameters.patternProperties key "("',
    },
    { label: "type: 'banana'", parameters: { type: 'banana' }, names: 'parameters.type must be one of' },
    { label: 'a type list with an unknown name', parameters: { type: ['string', 'date'] }, names: 'parameters.type' },
    {
      label: "required: 'x'",
      parameters: { type: 'object', required: 'x' },
      names: 'parameters.required must be an array of property names',
    },
    { label: 'enum that is not an array', parameters: { enum: 'a' }, names: 'parameters.enum must be an array' },
    {
      label: 'minLength -1',
      parameters: { type: 'string', minLength: -1 },
      names: 'parameters.minLength must be a non-negative integer',
    },
    { label: 'anyOf: []', parameters: { anyOf: [] }, names: 'parameters.anyOf must be a non-empty array of schemas' },
    { label: 'a BigInt default', parameters: { type: 'object', default: 1n }, names: 'parameters.default is a bigint' },
    {
      label: 'a schema that contains itself',
      parameters: ((o: Record<string, unknown>) => ((o['not'] = o), o))({ type: 'object' }),
      names: 'parameters.not refers back to itself',
    },
    {
      label: 'a duplicate $id',
      parameters: { $defs: { a: { $id: 'https://x.test/a' }, b: { $id: 'https://x.test/a' } } },
      names: 'parameters',
    },
    {
      label: 'the unsupported $dynamicRef',
      parameters: { $dynamicRef: '#meta' },
      names: 'parameters.$dynamicRef is not supported',
    },
  ];

  it.each(BAD_SCHEMAS)('refuses $label', ({ parameters, names }) => {
    const build = () =>
      ToolRegistry.of([
        spec('ok', async () => ''),
        spec('shady', async () => '', { parameters: parameters as JsonObject }),
      ]);
    expect(build).toThrow(InvalidRequestError);
    expect(build).toThrow(`tool "shady": ${names}`);
  });

  it.each([
    { label: 'a boolean property schema', parameters: { type: 'object', properties: { any: true, none: false } } },
    { label: 'a $ref to the root', parameters: { type: 'object', properties: { child: { $ref: '#' } } } },
    {
      label: 'a $ref by $anchor',
      parameters: { $defs: { n: { $anchor: 'num', type: 'number' } }, properties: { a: { $ref: '#num' } } },
    },
    {
      label: 'a $ref to a relative $id',
      parameters: {
        $id: 'https://x.test/root',
        $defs: { n: { $id: 'n', type: 'number' } },
        properties: { a: { $ref: 'n' } },
      },
    },
    { label: 'unknown annotation keywords', parameters: { type: 'object', 'x-ui': { widget: 5, type: 'banana' } } },
    {
      label: 'a tuple in the older items form',
      parameters: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
    },
    {
      label: 'draft 7 dependencies',
      parameters: { type: 'object', dependencies: { a: ['b'], c: { required: ['d'] } } },
    },
    { label: 'a Unicode property escape pattern', parameters: { type: 'string', pattern: '^\\p{L}+$' } },
  ])('accepts $label', ({ parameters }) => {
    expect(() =>
      ToolRegistry.of([spec('fine', async () => '', { parameters: parameters as JsonObject })]),
    ).not.toThrow();
  });

  it('a $ref that the check accepted resolves when the arguments reach it', () => {
    const reg = ToolRegistry.of([
      spec('tree', async () => '', {
        parameters: { type: 'object', properties: { kid: { $ref: '#' }, v: { type: 'integer' } } },
      }),
    ]);
    expect(reg.validate(call('tree', { kid: { kid: { v: 1 } } }))).toEqual({ ok: true });
    expect(reg.validate(call('tree', { kid: { kid: { v: 'x' } } })).ok).toBe(false);
  });

  it.each([
    {
      label: 'a description that is not a string',
      patch: { description: 5 },
      names: 'tool "t": description must be a string',
    },
    {
      label: 'an unknown replay policy',
      patch: { replayPolicy: 'sometimes' },
      names: 'tool "t": replayPolicy must be "safe" or "never"',
    },
    {
      label: 'completesRun that is not a boolean',
      patch: { completesRun: 'yes' },
      names: 'tool "t": completesRun must be a boolean',
    },
    {
      label: 'a handler that is not a function',
      patch: { handler: 'run' },
      names: 'tool "t": handler must be a function',
    },
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
    {
      label: 'an argument that contains itself',
      action: call('add', cyclic()),
      message: 'arguments.b refers back to itself',
    },
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
