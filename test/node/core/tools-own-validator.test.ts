/**
 * Tools that bring their own validator (`argumentsSchema`, a Standard Schema): it checks the
 * arguments in place of `parameters`; a `pattern` is still matched in linear time first; a
 * plain JSON Schema tool validates as before (docs/decisions/0081-tools-with-their-own-validator.md).
 */
import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../../src/core/index.ts';
import type { JsonObject, StandardResult, StandardSchemaV1, ToolSpec } from '../../../src/core/index.ts';

/** A Standard Schema of our own (no library): `n` must be an even number. */
function evenN(calls: unknown[] = []): StandardSchemaV1 {
  return {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (value): StandardResult => {
        calls.push(value);
        const n = (value as { n?: unknown }).n;
        if (typeof n === 'number' && n % 2 === 0) return { value };
        return { issues: [{ message: 'must be even', path: [{ key: 'n' }] }] };
      },
    },
  };
}

const tool = (fields: Partial<ToolSpec> & { parameters: JsonObject }): ToolSpec => ({
  name: 't',
  description: 'd',
  handler: async () => 'ran',
  ...fields,
});
const call = (args: JsonObject) => ({ kind: 'tool_call' as const, name: 't', arguments: args });

describe('a tool with its own validator (argumentsSchema)', () => {
  it('is checked by its own validator, not by parameters, with issues located as JSON pointers', () => {
    // parameters says a string; the own validator says an even number: the own validator decides.
    const tools = ToolRegistry.of([
      tool({ parameters: { type: 'object', properties: { n: { type: 'string' } } }, argumentsSchema: evenN() }),
    ]);
    expect(tools.validate(call({ n: 4 }))).toEqual({ ok: true });
    expect(tools.validate(call({ n: 3 }))).toEqual({
      ok: false,
      message: 'arguments of "t" do not match its schema: #/n: must be even',
    });
  });

  it('needs no schema the JSON Schema validator could apply, only plain JSON for the log', () => {
    const unresolved = { type: 'object', properties: { n: { $ref: '#/$defs/nowhere' } } };
    expect(() => ToolRegistry.of([tool({ parameters: unresolved })])).toThrow(/does not resolve/);
    expect(ToolRegistry.of([tool({ parameters: unresolved, argumentsSchema: evenN() })]).names()).toEqual(['t']);
    const notJson = { type: 'object', default: Number.NaN } as unknown as JsonObject;
    expect(() => ToolRegistry.of([tool({ parameters: notJson, argumentsSchema: evenN() })])).toThrow(
      'tool "t": parameters.default is NaN, which JSON cannot hold',
    );
  });

  it('has a pattern of parameters matched in linear time first: a string that misses it never reaches the own validator', () => {
    const calls: unknown[] = [];
    const parameters = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    const tools = ToolRegistry.of([tool({ parameters, argumentsSchema: evenN(calls) })]);
    const refused = tools.validate(call({ s: `${'a'.repeat(35)}!`, n: 2 }));
    expect(refused).toMatchObject({ ok: false });
    expect(refused.ok ? '' : refused.message).toMatch(/^arguments of "t" do not match its schema: #\/s: .*pattern/);
    expect(calls).toEqual([]);
    expect(tools.validate(call({ s: 'aaa', n: 2 }))).toEqual({ ok: true });
    expect(calls).toEqual([{ s: 'aaa', n: 2 }]);
  });

  it('refuses a pattern the linear-time matcher cannot run at registration, as for a plain tool', () => {
    const parameters = { type: 'object', properties: { s: { type: 'string', pattern: '(a)\\1' } } };
    expect(() => ToolRegistry.of([tool({ parameters, argumentsSchema: evenN() })])).toThrow(/tool "t": .*pattern/);
  });

  it('falls back to parameters when the own validator answers only later (a promise), and swallows that answer', () => {
    const later: StandardSchemaV1 = {
      '~standard': { version: 1, vendor: 'test', validate: async () => Promise.reject(new Error('late')) },
    };
    const parameters = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const tools = ToolRegistry.of([tool({ parameters, argumentsSchema: later })]);
    expect(tools.validate(call({ n: 1 }))).toEqual({ ok: true });
    expect(tools.validate(call({ n: 'x' }))).toEqual({
      ok: false,
      message: 'arguments of "t" do not match its schema: #/n: Instance type "string" is invalid. Expected "integer".',
    });
  });

  it('answers "could not be checked" when the own validator throws, and never throws itself', () => {
    const broken: StandardSchemaV1 = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: () => {
          throw new Error('boom');
        },
      },
    };
    const tools = ToolRegistry.of([tool({ parameters: { type: 'object' }, argumentsSchema: broken })]);
    expect(tools.validate(call({}))).toEqual({
      ok: false,
      message: 'arguments of "t" could not be checked against its schema (Error: boom)',
    });
  });

  it('refuses an argumentsSchema that is not a Standard Schema, naming the tool', () => {
    const bad = { validate: () => ({}) } as unknown as StandardSchemaV1;
    expect(() => ToolRegistry.of([tool({ parameters: { type: 'object' }, argumentsSchema: bad })])).toThrow(
      'tool "t": argumentsSchema must be a Standard Schema (an object with ["~standard"].validate)',
    );
  });

  it('leaves the descriptor, and so the run identity, as it was: the own validator is not part of it', () => {
    const parameters = { type: 'object', properties: { n: { type: 'number' } } };
    const plain = ToolRegistry.of([tool({ parameters })]).get('t');
    const own = ToolRegistry.of([tool({ parameters, argumentsSchema: evenN() })]).get('t');
    expect(own).toEqual(plain);
  });
});

describe('a plain JSON Schema tool in Node', () => {
  it('validates as before: the same verdicts and the same messages', () => {
    const parameters = {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'string', pattern: '^[a-z]+$' } },
      required: ['a'],
    };
    const tools = ToolRegistry.of([tool({ parameters })]);
    expect(tools.validate(call({ a: 1, b: 'ok' }))).toEqual({ ok: true });
    expect(tools.validate(call({ a: 1.5, b: 'NO' }))).toEqual({
      ok: false,
      message:
        'arguments of "t" do not match its schema: #/a: Instance type "number" is invalid. Expected "integer".; ' +
        '#/b: String does not match pattern.',
    });
  });
});
