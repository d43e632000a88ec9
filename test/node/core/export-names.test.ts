/**
 * No two declarations in the shipped source share a name — a user who imports `RunStatus` (or
 * anything else) from two entries must never get two different shapes — and a name two entries
 * export is the very same value in both.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonActionInterpreter } from '../../../src/core/index.ts';
import * as testing from '../../../src/testing/index.ts';

const SRC = join(import.meta.dirname, '../../../src');
const DECLARATION = /^export (?:async )?(?:type|interface|class|function|const|enum|abstract class) ([A-Za-z0-9_$]+)/gm;

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

describe('exported names', () => {
  it('no exported name is declared in two source files', async () => {
    const where = new Map<string, string[]>();
    for (const file of await sourceFiles(SRC)) {
      for (const m of (await readFile(file, 'utf8')).matchAll(DECLARATION)) {
        const name = m[1] as string;
        const rel = file.slice(SRC.length + 1);
        // A function's overload signatures are one declaration, in one file.
        const seen = where.get(name) ?? [];
        if (!seen.includes(rel)) where.set(name, [...seen, rel]);
      }
    }
    expect(where.size).toBeGreaterThan(100);
    const twice = [...where]
      .filter(([, files]) => files.length > 1)
      .map(([name, files]) => `${name}: ${files.join(', ')}`);
    expect(twice).toEqual([]);
  });
});

describe('jsonActionInterpreter', () => {
  it('is exported by core, and polyloop/testing exports the very same function', () => {
    expect(testing.jsonActionInterpreter).toBe(jsonActionInterpreter);
    expect(jsonActionInterpreter().params).toEqual({ interpreter: 'json-action', version: 1 });
  });
});
