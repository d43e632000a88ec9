/** The checks behind tools.ts (tool-schema.ts): parameter schemas and plain JSON, table-driven. */
import { describe, expect, it } from 'vitest';
import { jsonProblem, MAX_JSON_DEPTH } from '../../../src/core/internal/values.ts';
import { MAX_ARGUMENTS_DEPTH, MAX_SCHEMA_DEPTH, plainJsonProblem } from '../../../src/core/plain-json.ts';
import { regexProblem, schemaProblem } from '../../../src/core/tool-schema.ts';

describe('schemaProblem', () => {
  it.each([
    { label: 'true', schema: true },
    { label: 'an empty schema', schema: {} },
    {
      label: 'an object schema with typed properties',
      schema: {
        type: 'object',
        properties: { a: { type: 'integer', minimum: 0 }, b: { type: ['string', 'null'] } },
        required: ['a'],
      },
    },
    {
      label: 'composition keywords',
      schema: { anyOf: [{ type: 'string' }, false], allOf: [{}], oneOf: [true], not: { type: 'null' } },
    },
    { label: 'if/then/else', schema: { if: { required: ['a'] }, then: { required: ['b'] }, else: true } },
    {
      label: 'array keywords',
      schema: {
        type: 'array',
        prefixItems: [{ type: 'string' }],
        items: false,
        contains: { const: 1 },
        minContains: 0,
        uniqueItems: true,
      },
    },
    { label: 'the tuple form of items', schema: { items: [{ type: 'string' }, true] } },
    {
      label: 'string keywords',
      schema: { type: 'string', minLength: 1, maxLength: 9, pattern: '^[a-z]+$', format: 'email' },
    },
    {
      label: 'annotations',
      schema: { title: 't', description: 'd', default: { x: 1 }, examples: [1], deprecated: false, $comment: 'c' },
    },
    { label: 'unknown keywords, whatever they hold', schema: { 'x-anything': { type: 'banana' }, nullable: 5 } },
    {
      label: 'dependentRequired and dependentSchemas',
      schema: { dependentRequired: { a: ['b'] }, dependentSchemas: { c: { required: ['d'] } } },
    },
    {
      label: 'patternProperties with valid keys',
      schema: { patternProperties: { '^x-': { type: 'string' }, '\\p{Lu}': true } },
    },
    {
      label: 'numbers of every kind',
      schema: { minimum: -1.5, maximum: 2, exclusiveMinimum: -2, exclusiveMaximum: 3, multipleOf: 0.5 },
    },
  ])('accepts $label', ({ schema }) => {
    expect(schemaProblem(schema, 'p')).toBeNull();
  });

  it.each([
    {
      label: 'a string schema',
      schema: 'object',
      problem: 'p must be a schema (an object or a boolean), got a string',
    },
    { label: 'null', schema: null, problem: 'p must be a schema (an object or a boolean), got null' },
    { label: 'an array schema', schema: [], problem: 'p must be a schema (an object or a boolean), got an array' },
    {
      label: 'properties: 5',
      schema: { properties: 5 },
      problem: 'p.properties must be an object of schemas, got a number',
    },
    {
      label: 'a property that is a number',
      schema: { properties: { a: 1 } },
      problem: 'p.properties.a must be a schema',
    },
    { label: 'an unknown type', schema: { type: 'banana' }, problem: 'p.type must be one of' },
    { label: 'an empty type list', schema: { type: [] }, problem: 'p.type must be one of' },
    { label: 'a repeated type', schema: { type: ['string', 'string'] }, problem: 'p.type must be one of' },
    {
      label: 'required as a string',
      schema: { required: 'x' },
      problem: 'p.required must be an array of property names, got "x"',
    },
    { label: 'required holding a number', schema: { required: ['a', 1] }, problem: 'p.required must be an array' },
    { label: 'an invalid pattern', schema: { pattern: '[' }, problem: 'p.pattern is not a valid regular expression' },
    { label: 'a numeric pattern', schema: { pattern: 5 }, problem: 'p.pattern must be a string' },
    {
      label: 'an invalid patternProperties key',
      schema: { patternProperties: { '*': {} } },
      problem: 'p.patternProperties key "*" is not a valid regular expression',
    },
    { label: 'enum as an object', schema: { enum: { a: 1 } }, problem: 'p.enum must be an array, got an object' },
    {
      label: 'minLength 1.5',
      schema: { minLength: 1.5 },
      problem: 'p.minLength must be a non-negative integer, got 1.5',
    },
    { label: 'maxItems "3"', schema: { maxItems: '3' }, problem: 'p.maxItems must be a non-negative integer, got "3"' },
    { label: 'minimum "0"', schema: { minimum: '0' }, problem: 'p.minimum must be a number, got "0"' },
    {
      label: 'a draft-4 boolean exclusiveMinimum',
      schema: { exclusiveMinimum: true },
      problem: 'p.exclusiveMinimum must be a number',
    },
    { label: 'multipleOf 0', schema: { multipleOf: 0 }, problem: 'p.multipleOf must be a number above 0' },
    { label: 'uniqueItems "yes"', schema: { uniqueItems: 'yes' }, problem: 'p.uniqueItems must be a boolean' },
    { label: 'anyOf: []', schema: { anyOf: [] }, problem: 'p.anyOf must be a non-empty array of schemas' },
    {
      label: 'allOf as a schema',
      schema: { allOf: {} },
      problem: 'p.allOf must be a non-empty array of schemas, got an object',
    },
    {
      label: 'a bad schema inside oneOf',
      schema: { oneOf: [{}, { type: 7 }] },
      problem: 'p.oneOf[1].type must be one of',
    },
    {
      label: 'a bad schema deep inside',
      schema: { properties: { a: { items: { properties: { b: { required: 1 } } } } } },
      problem: 'p.properties.a.items.properties.b.required must be an array',
    },
    {
      label: 'additionalProperties "no"',
      schema: { additionalProperties: 'no' },
      problem: 'p.additionalProperties must be a schema',
    },
    { label: 'a numeric $ref', schema: { $ref: 1 }, problem: 'p.$ref must be a string' },
    {
      label: 'dependentRequired with a string value',
      schema: { dependentRequired: { a: 'b' } },
      problem: 'p.dependentRequired must be a map of property names to arrays of them',
    },
    {
      label: 'dependencies with a numeric value',
      schema: { dependencies: { a: 1 } },
      problem: 'p.dependencies.a must be a schema',
    },
    { label: '$dynamicRef', schema: { $dynamicRef: '#node' }, problem: 'p.$dynamicRef is not supported' },
  ])('refuses $label', ({ schema, problem }) => {
    expect(schemaProblem(schema, 'p')).toContain(problem);
  });

  it.each([
    { resolves: true, problem: null },
    { resolves: false, problem: 'p.properties.a.$ref "#/$defs/x" does not resolve to a schema' },
  ])('asks the caller whether a $ref resolves (answer $resolves)', ({ resolves, problem }) => {
    const asked: unknown[] = [];
    const refResolves = (s: Readonly<Record<string, unknown>>): boolean => (asked.push(s['$ref']), resolves);
    expect(schemaProblem({ properties: { a: { $ref: '#/$defs/x' } } }, 'p', { refResolves })).toBe(problem);
    expect(asked).toEqual(['#/$defs/x']);
  });
});

describe('regexProblem', () => {
  it.each([
    { source: '^[a-z]+$', ok: true },
    { source: '\\p{L}', ok: true },
    { source: '', ok: true },
    { source: '(', ok: false },
    { source: '\\-', ok: false },
    { source: 'a{2,1}', ok: false },
  ])('$source → ok: $ok (compiled with the u flag, as the validator does)', ({ source, ok }) => {
    const problem = regexProblem(source, 'where');
    expect(problem === null).toBe(ok);
    if (!ok) expect(problem).toMatch(/^where is not a valid regular expression \(.+\)$/);
  });
});

describe('plainJsonProblem (the copy of jsonProblem that tools.ts uses, since it may not import internal/values)', () => {
  const cyclic = (): unknown => {
    const o: Record<string, unknown> = {};
    o['x'] = [o];
    return o;
  };
  const nested = (levels: number): unknown => {
    let v: unknown = 0;
    for (let i = 0; i < levels; i++) v = [v];
    return v;
  };
  class Box {}

  it.each([
    { label: 'plain JSON', value: { a: [1, 'x', true, null, { b: -0.5 }] } },
    { label: 'a BigInt', value: { a: 1n } },
    { label: 'undefined', value: [undefined] },
    { label: 'a function', value: { f: () => 1 } },
    { label: 'NaN', value: { n: Number.NaN } },
    { label: 'a Date', value: { d: new Date(0) } },
    { label: 'a class instance', value: [new Box()] },
    { label: 'a cycle', value: cyclic() },
    { label: 'nesting at the limit', value: nested(10) },
    { label: 'nesting past the limit', value: nested(11) },
    { label: 'a shared, acyclic object', value: ((s) => [s, s])({ k: 1 }) },
  ])('agrees with jsonProblem on $label (found or not, same sentence)', ({ value }) => {
    expect(plainJsonProblem(value, 'v', 10)).toBe(jsonProblem(value, 'v', 10));
  });

  it('keeps its depth limits in step with the record limit', () => {
    expect(MAX_ARGUMENTS_DEPTH).toBe(MAX_JSON_DEPTH);
    // record → snapshot → tools → [i] → parameters
    expect(MAX_SCHEMA_DEPTH).toBe(MAX_JSON_DEPTH - 4);
  });
});
