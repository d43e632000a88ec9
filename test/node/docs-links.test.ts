/**
 * The README and docs are read in a fresh clone without ../shared: every relative link in them
 * must resolve to a file or folder of the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...markdownFiles(path));
    else if (name.endsWith('.md')) out.push(path);
  }
  return out;
}

describe('documentation links', () => {
  it('every relative link in README.md, docs/ and the examples resolves inside the repository', () => {
    const files = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs')), ...markdownFiles(join(ROOT, 'examples'))];
    expect(files.length).toBeGreaterThan(30);
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1] as string;
        if (/^(https?:|mailto:|#)/.test(link)) continue;
        const path = link.split('#')[0] as string;
        if (path === '') continue;
        checked++;
        const target = normalize(join(dirname(file), decodeURI(path)));
        if (!target.startsWith(ROOT) || !existsSync(target)) broken.push(`${relative(ROOT, file)}: ${link}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });
});
