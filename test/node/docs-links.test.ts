/**
 * The README and docs are read in a fresh clone, with nothing outside the repository: every
 * relative link in them must resolve to a file or folder of the repository, and a link to a heading
 * of a Markdown page (`page.md#anchor`, `#anchor`) to a heading that page has. Source comments
 * point readers at `docs/…` pages and their headings too; those must resolve as well.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(name)) out.push(path);
  }
  return out;
}

const markdownFiles = (dir: string): string[] => filesUnder(dir, (name) => name.endsWith('.md'));

/**
 * The anchors GitHub gives a page's headings: lower case, characters other than letters, digits,
 * spaces, `-` and `_` dropped, spaces made `-`, a repeated slug suffixed `-1`, `-2`… Headings
 * inside code fences are not headings; `<a id="…">` / `<a name="…">` count too.
 */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (opener !== undefined) {
      if (fence === null) fence = opener[0] as string;
      else if (opener[0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1] as string);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Why `target` (a path, with an optional `#anchor`) does not resolve inside the repository, or null. */
function unresolved(target: string, anchor: string | undefined): string | null {
  if (!target.startsWith(ROOT) || !existsSync(target)) return 'no such file';
  if (anchor === undefined || anchor === '' || !target.endsWith('.md')) return null;
  return anchorsOf(readFileSync(target, 'utf8')).has(decodeURIComponent(anchor)) ? null : `no heading #${anchor}`;
}

describe('documentation links', () => {
  it('every relative link in README.md, CONTRIBUTING.md, docs/, test/README.md and the examples resolves, anchors included', () => {
    const files = [
      join(ROOT, 'README.md'),
      join(ROOT, 'CONTRIBUTING.md'),
      join(ROOT, 'test/README.md'),
      ...markdownFiles(join(ROOT, 'docs')),
      ...markdownFiles(join(ROOT, 'examples')),
    ];
    expect(files.length).toBeGreaterThan(30);
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1] as string;
        if (/^(https?:|mailto:)/.test(link)) continue;
        const [path, anchor] = link.split('#') as [string, string | undefined];
        checked++;
        const target = path === '' ? file : normalize(join(dirname(file), decodeURI(path)));
        const why = unresolved(target, anchor);
        if (why !== null) broken.push(`${relative(ROOT, file)}: ${link} (${why})`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  it('every docs/ page a source comment names exists, with the heading it names', () => {
    const sources = ['src', 'test', 'examples', 'scripts', 'bench'].flatMap((dir) =>
      filesUnder(join(ROOT, dir), (name) => /\.(ts|mts|mjs|tsx)$/.test(name)),
    );
    const broken: string[] = [];
    let checked = 0;
    for (const file of sources) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\bdocs\/[\w./-]*\.md(?:#[\w-]+)?/g)) {
        const [path, anchor] = m[0].split('#') as [string, string | undefined];
        checked++;
        const why = unresolved(join(ROOT, path), anchor);
        if (why !== null) broken.push(`${relative(ROOT, file)}: ${m[0]} (${why})`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  it('finds the anchors GitHub gives headings, and none inside code fences', () => {
    const page = [
      '# Records and recovery',
      '## `run_started` — always the first record',
      '## Log states',
      '## Log states',
      '```sh',
      '# not a heading',
      '```',
      '<a id="custom"></a>',
      '### What `readRunLog` says (read-only)',
    ].join('\n');
    expect([...anchorsOf(page)].sort()).toEqual(
      [
        'custom',
        'log-states',
        'log-states-1',
        'records-and-recovery',
        'run_started--always-the-first-record',
        'what-readrunlog-says-read-only',
      ].sort(),
    );
  });
});
