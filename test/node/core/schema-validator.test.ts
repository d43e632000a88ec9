import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { format, Validator } from '@cfworker/json-schema';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { formatCheck, SchemaValidator } from '../../../src/core/schema-validator.ts';

/** cfworker's published validate.js: the package's `exports` hide the file, so it is found beside the entry. */
function cfworkerValidateSource(): string {
  const entry = createRequire(import.meta.url).resolve('@cfworker/json-schema');
  return readFileSync(join(dirname(entry), '..', 'esm', 'validate.js'), 'utf8');
}

/** Whitespace and comments out, types erased: what the code says, not how it is laid out. */
const normalized = (code: string, loader: 'ts' | 'js'): string => {
  const out = transformSync(code, { loader, format: 'esm', minifyWhitespace: true, target: 'es2022' }).code;
  return out.slice(out.indexOf('function hasOwnProperty'));
};

/** The only edits `schema-validate.ts` makes to cfworker 4.1.6's validate, as they read once normalized. */
const EDITS: readonly (readonly [string, string])[] = [
  ['draft="2019-09",ctx=dereference(schema),shortCircuit=true,', 'draft,ctx,shortCircuit,'],
  ['new RegExp(pattern,"u")', 'ctx.pattern(pattern)'],
  ['new RegExp($pattern,"u").test(instance)', 'ctx.pattern($pattern).test(instance)'],
  [
    'if($format!==void 0&&format[$format]&&!format[$format](instance)){',
    'const formatCheck=$format===void 0?void 0:ctx.format($format);if(formatCheck!==void 0&&!formatCheck(instance)){',
  ],
];

describe('schema-validate.ts, the copy of cfworker’s validate', () => {
  it('says what the installed @cfworker/json-schema says, but for the pattern, patternProperties and format lines', () => {
    // `lookup` travels as `ctx.lookup`, beside the pattern and format checks.
    let expected = cfworkerValidateSource()
      .replace(/\blookup\b/g, 'ctx')
      .replace(/ctx\[/g, 'ctx.lookup[')
      .replace('Object.keys(ctx)', 'Object.keys(ctx.lookup)');
    expected = normalized(expected, 'js');
    for (const [from, to] of EDITS) {
      expect(expected).toContain(from);
      expected = expected.replace(from, to);
    }
    const ours = normalized(
      readFileSync(new URL('../../../src/core/schema-validate.ts', import.meta.url), 'utf8'),
      'ts',
    );
    expect(ours).toBe(expected);
  });
});

describe('SchemaValidator', () => {
  const schemas: readonly (readonly [object, readonly unknown[]])[] = [
    [
      { type: 'object', properties: { s: { type: 'string', pattern: '^[a-z]+$', minLength: 2 } }, required: ['s'] },
      [{ s: 'ab' }, { s: 'a' }, { s: 'A1' }, {}],
    ],
    [
      {
        type: 'object',
        patternProperties: { '^x-': { type: 'number' }, '\\d$': { minimum: 3 } },
        additionalProperties: false,
      },
      [{ 'x-a': 1 }, { 'x-1': 2 }, { y: 1 }, { 'x-': 'a' }],
    ],
    [
      {
        type: 'object',
        propertyNames: { pattern: '^[a-z_]+$', maxLength: 5 },
        unevaluatedProperties: false,
        properties: { a: {} },
      },
      [{ a: 1 }, { bad_name1: 1 }, { b: 2 }],
    ],
    [{ type: 'string', format: 'email' }, ['a@b.co', 'not an email']],
    [{ type: 'string', format: 'date-time' }, ['2024-01-02T03:04:05Z', '2024-13-02T03:04:05Z']],
    [
      {
        anyOf: [
          { type: 'string', pattern: '^\\d+$' },
          { type: 'number', multipleOf: 0.1 },
        ],
      },
      ['123', 'x', 0.3, 0.35],
    ],
    [
      { $defs: { id: { type: 'string', pattern: '^[A-Z]{3}-\\d{3}$' } }, type: 'array', items: { $ref: '#/$defs/id' } },
      [['ABC-123'], ['abc-123', 'ABC-12']],
    ],
  ];

  it.each(schemas.map(([schema, instances]) => [JSON.stringify(schema), schema, instances] as const))(
    'answers as cfworker’s Validator for %s',
    (_name, schema, instances) => {
      const theirs = new Validator(structuredClone(schema), '2020-12', false);
      const ours = new SchemaValidator(structuredClone(schema));
      for (const instance of instances) expect(ours.validate(instance)).toEqual(theirs.validate(instance));
    },
  );

  it('checks format "url" as cfworker does, on 20,000 generated URLs', () => {
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pick = <T>(list: readonly T[]): T => list[rnd(list.length)] as T;
    const octet = (): string =>
      pick([
        String(rnd(256)),
        '10',
        '127',
        '169',
        '172',
        '192',
        '254',
        '168',
        '16',
        '31',
        '32',
        '015',
        '0',
        '224',
        '223',
        '00',
      ]);
    const label = (): string => pick(['a', 'ex-ample', 'b-', '-c', 'é', 'COM', 'io', 'x1', 'ſ', 'a_b', '1', 'Ω', '😀']);
    const host = (): string =>
      rnd(2) === 0
        ? Array.from({ length: 3 + rnd(2) }, octet).join('.')
        : Array.from({ length: 1 + rnd(3) }, label).join('.');
    const schemes = ['http://', 'https://', 'ftp://', 'HTTP://', 'httpſ://', 'ftps://', 'mailto:'];
    const users = ['', 'u@', 'u:p@', ':@', 'a b@', '@'];
    const tails = ['', '/', '/path?x=1', ':80', ':8', ':123456', ':8080/a b', '#f', ' '];
    const url = formatCheck('url');
    const differ: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const s = pick(schemes) + pick(users) + host() + pick(tails);
      if (url?.(s) !== format.url?.(s)) differ.push(s);
    }
    expect(differ).toEqual([]);
  });

  it('takes every other format from cfworker’s table, and none it does not know', () => {
    for (const name of Object.keys(format).filter((n) => n !== 'url')) expect(formatCheck(name)).toBe(format[name]);
    expect(formatCheck('toString')).toBeUndefined();
    expect(formatCheck('x-custom')).toBeUndefined();
  });
});
