import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import { ToolRegistry } from '../../../src/core/index.ts';
import type { ToolSpec } from '../../../src/core/index.ts';
import { defineTool, ToolArgumentsError } from '../../../src/zod/index.ts';

const ctx = { runId: 'r', stepIndex: 0, resultId: 's0.action', signal: new AbortController().signal };

const schema = z.object({
  city: z.string().min(1).describe('City name'),
  days: z.number().int().positive().default(3),
  units: z.enum(['metric', 'imperial']).optional(),
});

describe('defineTool', () => {
  it('makes a ToolSpec whose parameters are zod\'s input JSON Schema, without $schema', () => {
    const spec = defineTool({ name: 'forecast', description: 'Weather forecast', schema, replayPolicy: 'safe', completesRun: false, handler: async () => 'sunny' });
    const { $schema: _d, ...expected } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
    expect(spec.parameters).toEqual(expected);
    expect(spec.parameters).toMatchObject({ type: 'object', required: ['city'], properties: { city: { type: 'string', description: 'City name' } } });
    expect(spec).toMatchObject({ name: 'forecast', description: 'Weather forecast', replayPolicy: 'safe', completesRun: false });
    expectTypeOf(spec).toEqualTypeOf<ToolSpec>();
  });

  it('hands the handler zod-parsed arguments with their inferred type (defaults applied)', async () => {
    const seen: unknown[] = [];
    const spec = defineTool({
      name: 'forecast',
      description: 'Weather forecast',
      schema,
      handler: async (args) => {
        expectTypeOf(args).toEqualTypeOf<{ city: string; days: number; units?: 'metric' | 'imperial' | undefined }>();
        seen.push(args);
        return `${args.city} for ${args.days} days`;
      },
    });
    const outcome = await ToolRegistry.of([spec]).executor().execute({ kind: 'tool_call', name: 'forecast', arguments: { city: 'Oslo' } }, ctx);
    expect(outcome).toMatchObject({ status: 'executed', observation: 'Oslo for 3 days' });
    expect(seen).toEqual([{ city: 'Oslo', days: 3 }]);
  });

  it('lets the registry refuse arguments that break the JSON Schema before the handler runs', async () => {
    let ran = false;
    const spec = defineTool({ name: 'forecast', description: 'd', schema, handler: async () => ((ran = true), 'x') });
    const outcome = await ToolRegistry.of([spec]).executor().execute({ kind: 'tool_call', name: 'forecast', arguments: { city: 'Oslo', days: 'many' } }, ctx);
    expect(outcome.status).toBe('not_executed');
    expect(ran).toBe(false);
  });

  it('reports a failed zod refinement as a ToolArgumentsError observation', async () => {
    const spec = defineTool({
      name: 'range',
      description: 'd',
      schema: z.object({ from: z.number(), to: z.number() }).refine((v) => v.from <= v.to, { message: 'from must not exceed to' }),
      handler: async () => 'ok',
    });
    const outcome = await ToolRegistry.of([spec]).executor().execute({ kind: 'tool_call', name: 'range', arguments: { from: 5, to: 1 } }, ctx);
    expect(outcome.status).toBe('executed');
    expect(outcome.observation).toContain('ToolArgumentsError');
    expect(outcome.observation).toContain('from must not exceed to');
    expect(new ToolArgumentsError('t', 'm').name).toBe('ToolArgumentsError');
  });

  it('throws at once for a schema with no JSON Schema form', () => {
    expect(() => defineTool({ name: 'when', description: 'd', schema: z.object({ at: z.date() }) })).toThrow(/defineTool\("when"\).*no JSON Schema form/);
  });

  it('makes a spec without handler when none is given (the registry refuses an executor for it)', () => {
    const spec = defineTool({ name: 'plain', description: 'd', schema: z.object({}) });
    expect(spec.handler).toBeUndefined();
    expect(() => ToolRegistry.of([spec]).executor()).toThrow(/no handler/);
  });

  it('accepts a zod/mini schema with the same inference', async () => {
    const spec = defineTool({
      name: 'mini',
      description: 'd',
      schema: zm.object({ n: zm.number(), tag: zm._default(zm.string(), 'x') }),
      handler: async (args) => {
        expectTypeOf(args).toEqualTypeOf<{ n: number; tag: string }>();
        return `${args.n}:${args.tag}`;
      },
    });
    expect(spec.parameters).toEqual({ type: 'object', properties: { n: { type: 'number' }, tag: { default: 'x', type: 'string' } }, required: ['n'] });
    const outcome = await ToolRegistry.of([spec]).executor().execute({ kind: 'tool_call', name: 'mini', arguments: { n: 2 } }, ctx);
    expect(outcome.observation).toBe('2:x');
  });
});
