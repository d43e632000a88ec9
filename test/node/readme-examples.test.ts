/**
 * The README's examples cannot rot. The first two ```ts blocks of its "## Example"
 * section are the files in examples/readme/ byte for byte; both type-check as a user's strict
 * project sees them (examples/readme/tsconfig.json maps `polyloop` to this source), and the
 * offline one runs as written and prints its final answer.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLES = join(ROOT, 'examples/readme');
const TSCONFIG = join(EXAMPLES, 'tsconfig.json');
const run = promisify(execFile);
const bin = (name: string): string => join(ROOT, 'node_modules/.bin', name);

/** The ```ts blocks of the README section headed `heading`, in order. */
function tsBlocks(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) return [];
  const next = readme.indexOf('\n## ', start + heading.length + 2);
  const section = readme.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

describe('the README examples', () => {
  it('finds ts blocks by section (a control on a planted README)', () => {
    const planted =
      '# T\n\n## Other\n\n```ts\nnot me\n```\n\n## Example\n\ntext\n\n```sh\nnpm i\n```\n\n```ts\nfirst\n```\n\n```ts\nsecond\n```\n\n## Next\n\n```ts\nlater\n```\n';
    expect(tsBlocks(planted, '## Example')).toEqual(['first\n', 'second\n']);
  });

  it('the first block of "## Example" is examples/readme/offline.mts, the second examples/readme/openai.mts', async () => {
    const blocks = tsBlocks(await readFile(join(ROOT, 'README.md'), 'utf8'), '## Example');
    expect(blocks[0]).toBe(await readFile(join(EXAMPLES, 'offline.mts'), 'utf8'));
    expect(blocks[1]).toBe(await readFile(join(EXAMPLES, 'openai.mts'), 'utf8'));
  });

  it('both examples type-check in a strict project', async () => {
    const { stdout } = await run(bin('tsc'), ['-p', TSCONFIG], { cwd: ROOT, timeout: 120_000 }).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? String(e) }),
    );
    expect(stdout).toBe('');
  }, 130_000);

  it('the offline example runs as written, with no key and no network, and prints its answer', async () => {
    const cwd = await tempDir('polyloop-readme-');
    const env = { ...process.env, OPENAI_API_KEY: '' };
    const { stdout } = await run(bin('tsx'), ['--tsconfig', TSCONFIG, join(EXAMPLES, 'offline.mts')], {
      cwd,
      env,
      timeout: 60_000,
    });
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('[sum-1] run started');
    expect(lines).toContain('[sum-1] #0 running add({"a":2,"b":40})');
    expect(lines.at(-1)).toBe('final_answer 2 + 40 = 42 null');
  }, 70_000);

  it('the OpenAI example without a key is refused at once, naming the key, before the store is made', async () => {
    const cwd = await tempDir('polyloop-readme-');
    const env = { ...process.env, OPENAI_API_KEY: '' };
    const failure = await run(bin('tsx'), ['--tsconfig', TSCONFIG, join(EXAMPLES, 'openai.mts')], {
      cwd,
      env,
      timeout: 60_000,
    }).then(
      () => null,
      (e: { stderr?: string }) => e.stderr ?? '',
    );
    expect(failure).toMatch(/InvalidRequestError: openAIModel: apiKey is required/);
    expect(await readFile(join(cwd, 'runs'), 'utf8').catch((e: { code?: string }) => e.code)).toBe('ENOENT');
  }, 70_000);
});
