/**
 * docs/upgrades.md cannot rot: every ```ts block in it is an excerpt of a file in
 * examples/upgrades/, those files type-check as a user's strict project sees them, every ```sh
 * block runs as written (in order, in one fresh directory that looks like a checkout) and prints
 * the ```text block that follows it, and every ```json record is one the walkthrough wrote.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { exportRun } from '../../src/core/index.ts';
import { FileStore } from '../../src/platform-node/index.ts';
import { sharedTempDirs } from '../support/temp-dir.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLES = join(ROOT, 'examples/upgrades');
const DOC = join(ROOT, 'docs/upgrades.md');
const exec = promisify(execFile);

type Block = { readonly lang: string; readonly body: string };

/** The fenced blocks of a markdown text, in order. */
function fencedBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1] as string,
    body: m[2] as string,
  }));
}

/** Each ```sh block with the ```text block right after it ('' when another block follows). */
function commandsWithOutput(blocks: readonly Block[]): { command: string; output: string }[] {
  return blocks.flatMap((b, i) =>
    b.lang === 'sh'
      ? [{ command: b.body, output: blocks[i + 1]?.lang === 'text' ? (blocks[i + 1] as Block).body : '' }]
      : [],
  );
}

const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;
/** What may differ between the page and a run of it: the times, and the directory it ran in. */
const normalize = (text: string, dir: string): string =>
  text.replaceAll(dir, '/path/to/polyloop').replace(ISO_TIME, '<time>').trimEnd();

/** A json block as a pattern over one log line: `…` stands for anything, times for any time. */
function recordPattern(json: string): RegExp {
  const parts = json
    .trim()
    .replace(ISO_TIME, '\u0000')
    .split(/(…|\u0000)/);
  const pattern = parts.map((p) =>
    p === '…' ? '.*?' : p === '\u0000' ? '\\d{4}-[0-9T:.-]+Z' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  );
  return new RegExp(`^${pattern.join('')}$`);
}

describe('docs/upgrades.md', () => {
  it('finds commands and their output (a control on a planted page)', () => {
    const planted = fencedBlocks(
      '# T\n\n```sh\na\n```\n\n```text\nout\n```\n\n```ts\nx\n```\n\n```sh\nb\n```\n\n```json\n{}\n```\n',
    );
    expect(commandsWithOutput(planted)).toEqual([
      { command: 'a\n', output: 'out\n' },
      { command: 'b\n', output: '' },
    ]);
    expect(
      recordPattern('{"a":"1…","at":"2025-06-04T16:02:11.540Z"}').test('{"a":"123","at":"2026-12-01T19:41:47.071Z"}'),
    ).toBe(true);
    expect(recordPattern('{"a":"1…"}').test('{"a":"2"}')).toBe(false);
  });

  it('every ts block is an excerpt of a file in examples/upgrades', async () => {
    const files = await Promise.all(
      (await readdir(EXAMPLES)).filter((f) => f.endsWith('.mts')).map((f) => readFile(join(EXAMPLES, f), 'utf8')),
    );
    const blocks = fencedBlocks(await readFile(DOC, 'utf8')).filter((b) => b.lang === 'ts');
    expect(blocks.length).toBeGreaterThan(4);
    expect(blocks.filter((b) => !files.some((f) => f.includes(b.body))).map((b) => b.body)).toEqual([]);
  });

  it('the examples type-check in a strict project', async () => {
    const tsc = join(ROOT, 'node_modules/.bin/tsc');
    const { stdout } = await exec(tsc, ['-p', join(EXAMPLES, 'tsconfig.json')], { cwd: ROOT, timeout: 120_000 }).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? String(e) }),
    );
    expect(stdout).toBe('');
  }, 130_000);

  describe('run as written', () => {
    const dirs = sharedTempDirs();
    let dir = '';
    beforeAll(async () => {
      // A directory that looks like a checkout (the page's paths are the repository's), holding only the walkthrough's runs.
      dir = await dirs.make('polyloop-upgrades-doc-');
      for (const name of ['examples', 'src', 'bin', 'node_modules', 'package.json'])
        await symlink(join(ROOT, name), join(dir, name));
    });

    it('every command prints the output shown after it, in order', async () => {
      const commands = commandsWithOutput(fencedBlocks(await readFile(DOC, 'utf8')));
      expect(commands.length).toBeGreaterThan(6);
      for (const { command, output } of commands) {
        const { stdout } = await exec('bash', ['-eo', 'pipefail', '-c', command], { cwd: dir, timeout: 60_000 });
        expect({ command, stdout: normalize(stdout, dir) }).toEqual({ command, stdout: normalize(output, dir) });
      }
    }, 400_000);

    it('every json record on the page is one the walkthrough wrote', async () => {
      const lines = (await exportRun(new FileStore({ dir: join(dir, '.polyloop-upgrades') }), 'refund-7'))
        .trimEnd()
        .split('\n');
      const records = fencedBlocks(await readFile(DOC, 'utf8')).filter((b) => b.lang === 'json');
      expect(records.length).toBeGreaterThan(1);
      for (const { body } of records)
        expect({ body, found: lines.some((l) => recordPattern(body).test(l)) }).toEqual({ body, found: true });
    });
  });
});
