/**
 * The tree stays readable a file at a time: no source file under `src/` is over 400 lines — one
 * that grows past it is split by what it holds — and no line is wider than the formatter's 120
 * characters (it leaves long strings and comments as written; they are broken by hand). Third-party
 * code copied in as published is exempt by name, and each such file says in its header where it
 * comes from.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const MAX_LINES = 400;
/** Biome's `lineWidth` (biome.jsonc): the formatter wraps code at it, and this holds comments and strings to it. */
const MAX_LINE_CHARS = 120;

/**
 * Vendored files, exempt from the size limits: kept as upstream has them, so that a later release
 * diffs against them line by line. Each maps to what its header must name as its origin.
 */
const VENDORED: Readonly<Record<string, string>> = {
  'src/core/schema-validate.ts': '@cfworker/json-schema',
};

/** Every `.ts` and `.tsx` file under `src/`, as a path from the repository root with `/`. */
function sourceFiles(): string[] {
  const names = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' });
  return names
    .filter((name) => /\.tsx?$/.test(name))
    .map((name) => `src/${name.split(sep).join('/')}`)
    .sort();
}

/** Lines as an editor numbers them: a final newline ends the last line, it starts no other. */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** The source files the limits hold for (not vendored), with their text. */
function ownSources(): { readonly path: string; readonly text: string }[] {
  return sourceFiles()
    .filter((path) => !(path in VENDORED))
    .map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
}

/** `path: N lines` for each file over `max` lines. */
function overLimit(files: readonly { readonly path: string; readonly text: string }[], max: number): string[] {
  return files.filter((f) => lineCount(f.text) > max).map((f) => `${f.path}: ${lineCount(f.text)} lines`);
}

/** `path:N: M characters` for each line over `max` characters (code points, as an editor counts them). */
function longLines(files: readonly { readonly path: string; readonly text: string }[], max: number): string[] {
  return files.flatMap((f) =>
    f.text.split('\n').flatMap((line, i) => {
      const chars = [...line.replace(/\r$/, '')].length;
      return chars > max ? [`${f.path}:${i + 1}: ${chars} characters`] : [];
    }),
  );
}

describe('the shape of the source tree', () => {
  it(`has no source file under src/ over ${MAX_LINES} lines, vendored files aside`, () => {
    const files = ownSources();
    expect(files.length).toBeGreaterThan(100);
    expect(overLimit(files, MAX_LINES)).toEqual([]);
  });

  it(`has no source line under src/ longer than ${MAX_LINE_CHARS} characters, vendored files aside`, () => {
    const files = ownSources();
    expect(files.length).toBeGreaterThan(100);
    expect(longLines(files, MAX_LINE_CHARS)).toEqual([]);
  });

  it('exempts only vendored files that exist and name their origin in their header', () => {
    for (const [path, origin] of Object.entries(VENDORED)) {
      expect(existsSync(join(ROOT, path)), path).toBe(true);
      const header = readFileSync(join(ROOT, path), 'utf8').split('\n').slice(0, 12).join('\n');
      expect(header, path).toContain(origin);
    }
  });

  it('counts lines as an editor numbers them and names each file over the limit (a control on planted files)', () => {
    const lines = (n: number): string => 'x\n'.repeat(n);
    expect(lineCount('')).toBe(0);
    expect(lineCount('a')).toBe(1);
    expect(lineCount('a\nb\n')).toBe(2);
    expect(lineCount('a\nb\n\n')).toBe(3);
    const planted = [
      { path: 'src/at-limit.ts', text: lines(400) },
      { path: 'src/over.ts', text: lines(401) },
      { path: 'src/over-unterminated.ts', text: `${lines(400)}x` },
    ];
    expect(overLimit(planted, 400)).toEqual(['src/over.ts: 401 lines', 'src/over-unterminated.ts: 401 lines']);
  });

  it('measures a line in characters, not bytes, and names each line over the limit (a control on planted files)', () => {
    const planted = [
      { path: 'src/fits.ts', text: `${'x'.repeat(120)}\n${'—'.repeat(120)}\r\n` },
      { path: 'src/wide.ts', text: `ok\n${'x'.repeat(121)}\nok\n${'→'.repeat(130)}` },
    ];
    expect(longLines(planted, 120)).toEqual(['src/wide.ts:2: 121 characters', 'src/wide.ts:4: 130 characters']);
  });
});
