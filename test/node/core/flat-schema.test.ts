/**
 * The quick check of flat tool schemas (docs/decisions/0087-quick-check-of-flat-schemas.md) beside
 * the JSON Schema validator: on random schemas and random arguments it says "fits" exactly where
 * the validator says valid, and a registry answers every call as the validator alone would.
 */
import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../../src/core/index.ts';
import type { JsonObject, ToolSpec } from '../../../src/core/index.ts';
import { flatSchemaCheck } from '../../../src/core/flat-schema.ts';
import { jsonSchemaArgumentsCheck } from '../../../src/core/json-schema-tools.ts';
import { SchemaValidator } from '../../../src/core/schema-validator.ts';
import { random } from '../../support/random.ts';

type Pick = <T>(xs: readonly T[]) => T;

const NAMES = ['a', 'b', 'c', 'i', '__proto__', 'constructor', 'x y', ''] as const;
const TYPE_NAMES = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'] as const;
const PRIMITIVES = [
  '',
  'a',
  'ab',
  'é',
  '😀',
  '\ud83d',
  '\ud83dx',
  'a😀b',
  0,
  -0,
  1,
  -1,
  2.5,
  1e21,
  -1e-7,
  2 ** 53,
  true,
  false,
  null,
] as const;

/** A random JSON value, shallow or nested, with the odd key (`__proto__`, a null prototype). */
function value(r: () => number, pick: Pick, depth = 0): unknown {
  const roll = r();
  if (roll < 0.7 || depth > 2) return r() < 0.5 ? pick(PRIMITIVES) : Math.round((r() - 0.5) * 20) / (r() < 0.5 ? 1 : 4);
  if (roll < 0.85) return Array.from({ length: Math.floor(r() * 3) }, () => value(r, pick, depth + 1));
  return object(r, pick, depth + 1);
}

function object(r: () => number, pick: Pick, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = r() < 0.1 ? Object.create(null) : {};
  const count = Math.floor(r() * 4);
  for (let k = 0; k < count; k++) {
    Object.defineProperty(out, pick(NAMES), { value: value(r, pick, depth), enumerable: true, writable: true });
  }
  return out;
}

/** A random property schema: mostly what the quick check states, now and then something it must leave alone. */
function propertySchema(r: () => number, pick: Pick): unknown {
  if (r() < 0.05) return r() < 0.5;
  const s: Record<string, unknown> = {};
  if (r() < 0.7) {
    s['type'] = r() < 0.7 ? pick(TYPE_NAMES) : Array.from({ length: Math.floor(r() * 3) }, () => pick(TYPE_NAMES));
  }
  if (r() < 0.2) s['enum'] = Array.from({ length: 1 + Math.floor(r() * 3) }, () => pick(PRIMITIVES));
  if (r() < 0.1) s['const'] = pick(PRIMITIVES);
  for (const bound of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])
    if (r() < 0.12) s[bound] = Math.round((r() - 0.5) * 10) / 2;
  for (const bound of ['minLength', 'maxLength']) if (r() < 0.15) s[bound] = Math.floor(r() * 4);
  if (r() < 0.2) s['description'] = 'what it is';
  if (r() < 0.04) s['pattern'] = '^a';
  if (r() < 0.04) s['format'] = 'email';
  if (r() < 0.04) s['multipleOf'] = 2;
  if (r() < 0.03) s['items'] = { type: 'integer' };
  return s;
}

function schema(r: () => number, pick: Pick): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  if (r() < 0.9) s['type'] = r() < 0.97 ? 'object' : 'string';
  const properties: Record<string, unknown> = {};
  const count = Math.floor(r() * 4);
  for (let k = 0; k < count; k++) {
    Object.defineProperty(properties, pick(NAMES), {
      value: propertySchema(r, pick),
      enumerable: true,
      writable: true,
    });
  }
  if (r() < 0.9) s['properties'] = properties;
  if (r() < 0.6) s['required'] = Array.from({ length: Math.floor(r() * 3) }, () => pick(NAMES));
  if (r() < 0.4) s['additionalProperties'] = r() >= 0.8;
  if (r() < 0.1) s['$schema'] = 'https://json-schema.org/draft/2020-12/schema';
  if (r() < 0.03) s['minProperties'] = 1;
  if (r() < 0.03) s['additionalProperties'] = { type: 'string' };
  return s;
}

/** Arguments for `s`: its named properties (with values meant to fit, or not) and now and then others. */
function argsFor(r: () => number, pick: Pick, s: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = r() < 0.1 ? Object.create(null) : {};
  const named = Object.keys((s['properties'] as object | undefined) ?? {});
  for (const name of named) {
    if (r() < 0.8) Object.defineProperty(out, name, { value: value(r, pick), enumerable: true, writable: true });
  }
  if (r() < 0.3) Object.defineProperty(out, pick(NAMES), { value: value(r, pick), enumerable: true, writable: true });
  return out;
}

const refuse = (what: string): never => {
  throw new Error(what);
};

describe('flatSchemaCheck', () => {
  it.each([
    [{ type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] }, true],
    [
      { type: 'object', properties: { u: { enum: ['c', 'f'], description: 'unit' } }, additionalProperties: false },
      true,
    ],
    [{ properties: { n: { type: ['number', 'null'], minimum: 0, exclusiveMaximum: 1 } } }, true],
    [{ type: 'object', properties: { s: { type: 'string', pattern: '^a' } } }, false],
    [{ type: 'object', properties: { s: { type: 'string', format: 'email' } } }, false],
    [{ type: 'object', properties: { o: { type: 'object', properties: {} } } }, false],
    [{ type: 'object', properties: { e: { enum: [[1]] } } }, false],
    [{ type: 'object', additionalProperties: { type: 'string' } }, false],
    [{ type: 'object', $ref: '#/$defs/x', $defs: { x: {} } }, false],
    [{ type: ['object'] }, false],
    [true, false],
  ])('states %j: %s', (s, stated) => {
    expect(flatSchemaCheck(s) !== null).toBe(stated);
  });

  it('says "fits" exactly where the validator says valid, on 3,000 random schemas and 20 arguments each', () => {
    const r = random(30);
    const pick: Pick = (xs) => xs[Math.floor(r() * xs.length)] as (typeof xs)[number];
    let stated = 0;
    let fits = 0;
    let misfits = 0;
    for (let n = 0; n < 3_000; n++) {
      const s = schema(r, pick);
      const quick = flatSchemaCheck(structuredClone(s));
      const validator = new SchemaValidator(structuredClone(s) as object);
      for (let k = 0; k < 20; k++) {
        const args = argsFor(r, pick, s);
        const valid = validator.validate(args).valid;
        if (quick === null) continue;
        stated += 1;
        if (valid) fits += 1;
        else misfits += 1;
        expect({ schema: s, args, quick: quick(args) }).toEqual({ schema: s, args, quick: valid });
      }
    }
    // Both answers were met often: the agreement is not that of a check that always says the same.
    expect(Math.min(fits, misfits)).toBeGreaterThan(5_000);
    expect(stated).toBeGreaterThan(30_000);
  });

  it('leaves a registry’s answers as the validator alone gives them, messages byte for byte', () => {
    const r = random(87);
    const pick: Pick = (xs) => xs[Math.floor(r() * xs.length)] as (typeof xs)[number];
    let compared = 0;
    for (let n = 0; n < 600; n++) {
      const s = schema(r, pick);
      let alone: ReturnType<typeof jsonSchemaArgumentsCheck>;
      try {
        alone = jsonSchemaArgumentsCheck(structuredClone(s), refuse);
      } catch {
        continue; // a schema the registry refuses too
      }
      const spec: ToolSpec = { name: 't', description: 'T', parameters: s as JsonObject, replayPolicy: 'safe' };
      const tools = ToolRegistry.of([spec]);
      for (let k = 0; k < 20; k++) {
        const args = argsFor(r, pick, s) as JsonObject;
        const detail = alone(args, 3);
        const expected =
          detail === null
            ? { ok: true }
            : { ok: false, message: `arguments of "t" do not match its schema: ${detail}` };
        expect(tools.validate({ kind: 'tool_call', name: 't', arguments: args })).toEqual(expected);
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(8_000);
  });
});
