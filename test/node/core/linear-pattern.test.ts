import { describe, expect, it } from 'vitest';
import { compilePattern, MAX_PATTERN_STATES } from '../../../src/core/linear-pattern.ts';
import type { LinearPattern } from '../../../src/core/linear-pattern.ts';
import { ToolRegistry } from '../../../src/core/index.ts';

const compiled = (source: string): LinearPattern => {
  const result = compilePattern(source);
  if ('problem' in result) throw new Error(`${source} ${result.problem}`);
  return result;
};

/** Ordinary schema patterns, each with strings on both sides of it. */
const TABLE: readonly (readonly [string, readonly string[]])[] = [
  ['^[a-z]+$', ['abc', 'aBc', '', 'abc\n']],
  ['\\d{3}', ['12', 'a123b', '１２３']],
  ['^\\d{3}-\\d{4}$', ['555-1234', '555-12345', '5551234']],
  ['^[A-Z]{2}\\d{2}[A-Z0-9]{1,30}$', ['DE89370400440532013000', 'de89', 'DE8']],
  ['^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$', ['a@b.io', 'a@b', 'a b@c.de', 'x@y.z']],
  [
    '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
    ['123e4567-e89b-12d3-a456-426614174000', '123e4567e89b'],
  ],
  ['^https?://', ['https://x', 'http:/x', 'ftp://x']],
  ['^#[0-9a-fA-F]{6}$', ['#A0b1C2', '#A0b1C', 'A0b1C2']],
  ['^(?:\\+?1[-. ]?)?\\(?\\d{3}\\)?[-. ]?\\d{3}[-. ]?\\d{4}$', ['+1 (555) 123-4567', '555.123.4567', '12-34']],
  ['^\\p{L}+$', ['héllo', 'Straße', 'abc1', '日本語']],
  ['^\\p{Lu}', ['Émile', 'émile']],
  ['^\\P{L}*$', ['123 !', 'a']],
  ['^\\p{Script=Greek}+$', ['αβγ', 'abc']],
  ['^\\p{Emoji_Presentation}$', ['😀', 'a']],
  ['^.$', ['😀', 'a', '\n', '\u2028', 'ab']],
  ['^[😀-😂]$', ['😁', '😃']],
  ['^\\u{1F600}$', ['😀', '\ud83d']],
  ['^\\uD83D\\uDE00$', ['😀', '\ud83d\ude00x']],
  ['^\\ud83d$', ['\ud83d', '😀']],
  ['\\bcat\\b', ['the cat sat', 'concatenate', 'cat']],
  ['\\Bcat', ['concat', 'cat']],
  ['^\\s*$', ['', ' \t\n\u00a0\ufeff', ' x ']],
  ['^\\w+$', ['snake_case1', 'kebab-case', 'é']],
  ['^(foo|bar)+baz$', ['foobarbaz', 'baz', 'foobaz!']],
  ['^(?<year>\\d{4})-(?<month>0[1-9]|1[0-2])$', ['2024-12', '2024-13']],
  ['^a{2,4}$', ['a', 'aa', 'aaaa', 'aaaaa']],
  ['^(ab){2,}?$', ['abab', 'ab', 'ababab']],
  ['[\\]\\\\\\-]', ['a]', 'b\\', '-', 'x']],
  ['^[^]+$', ['\n\r', '']],
  ['^\\x41\\u0042\\cJ\\0$', ['AB\n\0', 'AB\n']],
  ['^\\.\\*\\/\\$$', ['.*/$', 'a*/$']],
  ['', ['', 'anything']],
  ['^$', ['', ' ']],
  ['x*', ['', 'y']],
  ['(?:)*$', ['abc']],
];

describe('compilePattern: the same verdict as new RegExp(p, "u").test(s)', () => {
  it.each(TABLE.map(([p, strings]) => [p, strings] as const))('%s', (source, strings) => {
    const native = new RegExp(source, 'u');
    const linear = compiled(source);
    for (const s of strings) expect([s, linear.test(s)]).toEqual([s, native.test(s)]);
  });

  it('agrees with the native engine on 4,000 generated patterns × 8 strings (astral, lone surrogates, line breaks)', () => {
    let seed = 20261201;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const atoms = [
      'a',
      'b',
      '.',
      '[ab]',
      '[^a]',
      '\\d',
      '\\D',
      '\\w',
      '\\W',
      '\\s',
      '\\S',
      '\\p{L}',
      '\\P{Lu}',
      '😀',
      '[😀a]',
      '\\n',
      '[\\d\\-]',
      '\\.',
      '\\u0061',
      '[^]',
    ];
    const assertions = ['^', '$', '\\b', '\\B'];
    const quantifiers = ['', '', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?', '??', '{2,}?'];
    const pattern = (depth: number): string => {
      const k = depth > 3 ? 2 : rnd(6);
      if (k === 0) return Array.from({ length: 1 + rnd(3) }, () => pattern(depth + 1)).join('');
      if (k === 1)
        return `(${rnd(2) ? '?:' : ''}${pattern(depth + 1)}|${pattern(depth + 1)})${quantifiers[rnd(quantifiers.length)]}`;
      if (k === 5) return assertions[rnd(assertions.length)] as string;
      return `${atoms[rnd(atoms.length)]}${quantifiers[rnd(quantifiers.length)]}`;
    };
    const alphabet = ['a', 'b', 'x', '1', ' ', '\n', '😀', 'A', '-', '.', 'é', '\ud800'];
    const mismatches: string[] = [];
    for (let i = 0; i < 4_000; i++) {
      const source = pattern(0);
      const native = new RegExp(source, 'u');
      const linear = compiled(source);
      for (let j = 0; j < 8; j++) {
        const s = Array.from({ length: rnd(7) }, () => alphabet[rnd(alphabet.length)]).join('');
        if (linear.test(s) !== native.test(s)) mismatches.push(`${source} on ${JSON.stringify(s)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});

describe('compilePattern: what it refuses', () => {
  it.each([
    ['(a)\\1', /backreference \(\\1\)/],
    ['(?<x>a)\\k<x>', /backreference \(\\k<name>\)/],
    ['a(?=b)', /lookahead/],
    ['a(?!b)', /lookahead/],
    ['(?<=a)b', /lookbehind/],
    ['(?<!a)b', /lookbehind/],
    ['(a', /is not a valid regular expression/],
    ['\\-', /is not a valid regular expression/],
    ['a{1000}{1000}', /is not a valid regular expression/],
    ['(?:a{1000}){1000}', new RegExp(`expands to more than ${MAX_PATTERN_STATES} states`)],
    [`${'('.repeat(300)}a${')'.repeat(300)}`, /nests groups more than 250 deep/],
  ])('refuses %s', (source, reason) => {
    const result = compilePattern(source);
    expect('problem' in result ? result.problem : 'compiled').toMatch(reason);
  });

  it('refuses such a pattern at ToolRegistry.of, naming the tool and the schema path', () => {
    const parameters = {
      type: 'object',
      $defs: { w: { type: 'string', pattern: '^(\\w)\\1$' } },
      properties: { w: { $ref: '#/$defs/w' } },
    };
    expect(() => ToolRegistry.of([{ name: 'pair', description: '', parameters, handler: async () => '' }])).toThrow(
      'tool "pair": parameters.$defs.w.pattern uses a backreference (\\1), which needs a backtracking matcher; patterns are matched in linear time',
    );
    const keys = { type: 'object', patternProperties: { '^x-(?=y)': {} } };
    expect(() =>
      ToolRegistry.of([{ name: 'ext', description: '', parameters: keys, handler: async () => '' }]),
    ).toThrow(/^tool "ext": parameters\.patternProperties key "\^x-\(\?=y\)" uses a lookahead/);
  });

  it('answers a 10,000-character adversarial string for the patterns that backtrack exponentially', () => {
    const long = `${'a'.repeat(10_000)}!`;
    for (const source of ['^(a+)+$', '^(a|aa)*$', '^(a|a)*b', '(\\w+\\s?)+$', '^(a{1,3})+$', '^(a?){30}a{30}$']) {
      expect([source, compiled(source).test(long)]).toEqual([source, false]);
    }
    expect(compiled('^(a+)+$').test('a'.repeat(10_000))).toBe(true);
  });
});
