/** ToolRegistry: the rules of a registry of tools (docs/api.md#tools). */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError, RegistryExecutor, ToolRegistry } from '../../../src/core/index.ts';
import type { Action, JsonObject, ToolSpec } from '../../../src/core/index.ts';
import { ADD_SCHEMA, call, ctx, spec } from './tools-fixtures.ts';

describe('ToolRegistry', () => {
  const three = (): ToolSpec[] => [
    spec('alpha', async () => 'a', { replayPolicy: 'safe' }),
    spec('beta', async () => 'b'),
    spec('gamma', async () => 'g', { replayPolicy: 'never', completesRun: true }),
  ];

  it('refuses duplicate tool names', () => {
    expect(() => ToolRegistry.of([...three(), spec('beta', async () => 'again')])).toThrow(InvalidRequestError);
    expect(() => ToolRegistry.of([...three(), spec('beta', async () => 'again')])).toThrow(
      /duplicate tool name "beta"/,
    );
  });

  it('refuses a tool whose parameters are not a JSON Schema object', () => {
    expect(() => ToolRegistry.of([{ name: 'x', description: '', parameters: [] as unknown as JsonObject }])).toThrow(
      InvalidRequestError,
    );
  });

  it('lists names and model schemas in registration order, without replay policy or handler', () => {
    const reg = ToolRegistry.of(three());
    expect(reg.names()).toEqual(['alpha', 'beta', 'gamma']);
    expect(reg.modelSchemas()).toEqual(
      three().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    );
  });

  it('gives descriptors with defaults filled in and undefined for an unknown name', () => {
    const reg = ToolRegistry.of(three());
    expect(reg.get('beta')).toEqual({
      name: 'beta',
      description: 'The beta tool.',
      parameters: { type: 'object' },
      replayPolicy: 'never',
      completesRun: false,
      needsApproval: false,
      answeredBy: null,
    });
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
    const reg = ToolRegistry.of([
      spec('a', async () => (handled.push('a'), 'a')),
      spec('b', async () => (handled.push('b'), 'b')),
    ]);
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
    {
      label: 'a code action',
      action: { kind: 'code', source: 'x' } as Action,
      expected: { ok: false, message: 'the action is not a tool call' },
    },
    {
      label: 'an unknown tool',
      action: call('zeta', {}),
      expected: { ok: false, message: 'unknown tool "zeta" (known tools: alpha, beta, gamma)' },
    },
    {
      label: 'non-object arguments',
      action: call('alpha', 'text'),
      expected: { ok: false, message: 'arguments of "alpha" must be a JSON object' },
    },
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
