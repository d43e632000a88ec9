import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import { isPolyLoopError, run, ToolRegistry } from '../../../src/core/index.ts';
import type { ToolSpec } from '../../../src/core/index.ts';
import { defineTool, ToolArgumentsError } from '../../../src/zod/index.ts';
import { harness } from '../core/fixtures.ts';

const ctx = { runId: 'r', stepIndex: 0, resultId: 's0.action', signal: new AbortController().signal };

const schema = z.object({
  city: z.string().min(1).describe('City name'),
  days: z.number().int().positive().default(3),
  units: z.enum(['metric', 'imperial']).optional(),
});

describe('defineTool', () => {
  it("makes a ToolSpec whose parameters are zod's input JSON Schema, without $schema", () => {
    const spec = defineTool({
      name: 'forecast',
      description: 'Weather forecast',
      schema,
      replayPolicy: 'safe',
      completesRun: false,
      handler: async () => 'sunny',
    });
    const { $schema: _d, ...expected } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
    expect(spec.parameters).toEqual(expected);
    expect(spec.parameters).toMatchObject({
      type: 'object',
      required: ['city'],
      properties: { city: { type: 'string', description: 'City name' } },
    });
    expect(spec).toMatchObject({
      name: 'forecast',
      description: 'Weather forecast',
      replayPolicy: 'safe',
      completesRun: false,
    });
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
    const outcome = await ToolRegistry.of([spec])
      .executor()
      .execute({ kind: 'tool_call', name: 'forecast', arguments: { city: 'Oslo' } }, ctx);
    expect(outcome).toMatchObject({ status: 'executed', observation: 'Oslo for 3 days' });
    expect(seen).toEqual([{ city: 'Oslo', days: 3 }]);
  });

  it('lets the registry refuse arguments that break the JSON Schema before the handler runs', async () => {
    let ran = false;
    const spec = defineTool({ name: 'forecast', description: 'd', schema, handler: async () => ((ran = true), 'x') });
    const outcome = await ToolRegistry.of([spec])
      .executor()
      .execute({ kind: 'tool_call', name: 'forecast', arguments: { city: 'Oslo', days: 'many' } }, ctx);
    expect(outcome.status).toBe('not_executed');
    expect(ran).toBe(false);
  });

  it("refuses arguments that fail a zod refinement before the handler runs, with zod's message", async () => {
    let ran = false;
    const spec = defineTool({
      name: 'range',
      description: 'd',
      schema: z
        .object({ from: z.number(), to: z.number() })
        .refine((v) => v.from <= v.to, { message: 'from must not exceed to' }),
      handler: async () => ((ran = true), 'ok'),
    });
    const outcome = await ToolRegistry.of([spec])
      .executor()
      .execute({ kind: 'tool_call', name: 'range', arguments: { from: 5, to: 1 } }, ctx);
    expect(outcome).toMatchObject({
      status: 'not_executed',
      observation: 'Not executed: arguments of "range" do not match its schema: #: from must not exceed to.',
    });
    expect(ran).toBe(false);
  });

  it('reports a failed async zod refinement, which the registry cannot wait for, as a ToolArgumentsError observation', async () => {
    const spec = defineTool({
      name: 'range',
      description: 'd',
      schema: z
        .object({ from: z.number(), to: z.number() })
        .refine(async (v) => v.from <= v.to, { message: 'from must not exceed to' }),
      handler: async () => 'ok',
    });
    const tools = ToolRegistry.of([spec]);
    expect(tools.validate({ kind: 'tool_call', name: 'range', arguments: { from: 5, to: 1 } })).toEqual({ ok: true });
    expect(tools.validate({ kind: 'tool_call', name: 'range', arguments: { from: '5', to: 1 } })).toMatchObject({
      ok: false,
    });
    const outcome = await tools
      .executor()
      .execute({ kind: 'tool_call', name: 'range', arguments: { from: 5, to: 1 } }, ctx);
    expect(outcome.status).toBe('executed');
    expect(outcome.observation).toContain('ToolArgumentsError');
    expect(outcome.observation).toContain('from must not exceed to');
    expect(new ToolArgumentsError('t', 'm').name).toBe('ToolArgumentsError');
  });

  it("validates with zod's own issues, located as JSON pointers", () => {
    const tools = ToolRegistry.of([
      defineTool({ name: 'forecast', description: 'd', schema, handler: async () => 'x' }),
    ]);
    const valid = tools.validate({ kind: 'tool_call', name: 'forecast', arguments: { city: '', units: 'kelvin' } });
    expect(valid).toMatchObject({ ok: false });
    const message = valid.ok ? '' : valid.message;
    expect(message).toMatch(/^arguments of "forecast" do not match its schema: #\/city: .+; #\/units: .+/);
    expect(message).not.toContain('Instance');
  });

  it('gives the spec the zod schema as its own validator (argumentsSchema)', () => {
    const spec = defineTool({ name: 'forecast', description: 'd', schema });
    expect(spec.argumentsSchema).toBe(schema);
  });

  it('throws at once for a schema with no JSON Schema form', () => {
    expect(() => defineTool({ name: 'when', description: 'd', schema: z.object({ at: z.date() }) })).toThrow(
      /defineTool\("when"\).*no JSON Schema form/,
    );
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
    expect(spec.parameters).toEqual({
      type: 'object',
      properties: { n: { type: 'number' }, tag: { default: 'x', type: 'string' } },
      required: ['n'],
    });
    const outcome = await ToolRegistry.of([spec])
      .executor()
      .execute({ kind: 'tool_call', name: 'mini', arguments: { n: 2 } }, ctx);
    expect(outcome.observation).toBe('2:x');
  });

  it('keeps needsApproval: a zod tool that needs approval stops the run awaiting input, its handler not run', async () => {
    const sent: string[] = [];
    const sendEmail = defineTool({
      name: 'send_email',
      description: 'Send an email.',
      schema: z.object({ to: z.string() }),
      needsApproval: true,
      handler: async ({ to }) => (sent.push(to), 'sent'),
    });
    const h = harness({
      tools: [sendEmail],
      script: ['{"tool":"send_email","args":{"to":"boss@example.com"}}', '{"final":"done"}'],
    });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('awaiting_input');
    expect(result.pending).toMatchObject({ kind: 'approval', decision: { action: { name: 'send_email' } } });
    expect(sent).toEqual([]);
    expect(sendEmail.needsApproval).toBe(true);
  });

  it('keeps answeredBy: a zod tool a person answers has no handler and asks for an answer', async () => {
    const ask = defineTool({
      name: 'ask',
      description: 'Ask the user.',
      schema: z.object({ q: z.string() }),
      answeredBy: 'human',
    });
    expect(ask).toMatchObject({ name: 'ask', answeredBy: 'human' });
    expect(ask.handler).toBeUndefined();
    const h = harness({ tools: [ask], script: ['{"tool":"ask","args":{"q":"Which city?"}}', '{"final":"done"}'] });
    expect((await run(h.agent, h.request)).pending).toMatchObject({ kind: 'answer' });
  });

  it('refuses a misspelt option, naming it and the option it most likely meant', () => {
    const def = { name: 'send_email', description: 'd', schema: z.object({}), needsAproval: true };
    expect(() => defineTool(def as never)).toThrow(
      /needsAproval is not an option of defineTool\("send_email"\); did you mean `needsApproval`\?/,
    );
    try {
      defineTool(def as never);
    } catch (e) {
      expect(isPolyLoopError(e, 'invalid_request')).toBe(true);
    }
  });

  it('says to give the zod object as schema when parameters is given instead', () => {
    const def = { name: 'add', description: 'd', parameters: z.object({ a: z.number() }) };
    expect(() => defineTool(def as never)).toThrow(
      /parameters is not an option of defineTool\("add"\); give a zod object as `schema`/,
    );
  });

  it.each([
    ['null', null, /defineTool needs an options object, got null/],
    ['an array', [], /defineTool needs an options object, got an array/],
    ['a string', 'add', /defineTool needs an options object, got a string/],
    ['no schema', { name: 'add', description: 'd' }, /schema must be a zod object/],
    [
      'a plain object as schema',
      { name: 'add', description: 'd', schema: { type: 'object' } },
      /schema must be a zod object/,
    ],
  ])('refuses %s with an InvalidRequestError before zod sees it', (_label, def, message) => {
    expect(() => defineTool(def as never)).toThrow(message);
    expect(() => defineTool(def as never)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });

  it('throws PolyLoop errors only: ToolArgumentsError has a code', () => {
    const e = new ToolArgumentsError('t', 'm');
    expect(isPolyLoopError(e, 'tool_arguments')).toBe(true);
    expect(e.name).toBe('ToolArgumentsError');
    expect(() => defineTool({ name: 'when', description: 'd', schema: z.object({ at: z.date() }) })).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
  });
});
