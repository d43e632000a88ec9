/** examples/mcp runs as written: its own MCP server on loopback, an approval, the final answer. */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

it('the MCP example prints the policies, pauses for approval of the destructive tool, and finishes', async () => {
  const dir = join(ROOT, 'examples/mcp');
  const { stdout } = await promisify(execFile)(
    join(ROOT, 'node_modules/.bin/tsx'),
    ['--tsconfig', join(dir, 'tsconfig.json'), join(dir, 'main.mts')],
    { cwd: ROOT, timeout: 60_000 },
  );
  expect(stdout.trimEnd().split('\n')).toEqual([
    'count_words: replayPolicy safe, needsApproval false',
    'append_note: replayPolicy never, needsApproval true',
    'awaiting_input: approval for {"kind":"tool_call","name":"append_note","arguments":{"note":"the text has 4 words"}}',
    '#0 4',
    '#1 noted (1 notes)',
    '#2 ',
    "final_answer Counted and noted. [ 'the text has 4 words' ]",
  ]);
}, 70_000);

it('the MCP example type-checks in a strict project', async () => {
  const dir = join(ROOT, 'examples/mcp');
  const { stdout } = await promisify(execFile)(
    join(ROOT, 'node_modules/.bin/tsc'),
    ['-p', join(dir, 'tsconfig.json')],
    { cwd: ROOT, timeout: 120_000 },
  ).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? String(e) }));
  expect(stdout).toBe('');
}, 130_000);
