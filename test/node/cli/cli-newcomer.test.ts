/**
 * The `polyloop` command as a newcomer meets it, in real processes: piped into `head`, asked for
 * help. The log under test is written as bytes (thousands of steps: more than a pipe holds).
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeRecord } from '../../../src/core/index.ts';
import type { LogRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import {
  actionIntent,
  ended,
  modelIntent,
  modelResult,
  started,
  stepWrite,
} from '../../contract/run-store.contract.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { polyloop } from '../platform-node/helpers.ts';

const BIN = join(import.meta.dirname, '../../../bin/polyloop.mjs');
const STEPS = 2_000;
const dirs = sharedTempDirs();
let dir = '';

beforeAll(async () => {
  dir = await dirs.make();
  const store = new FileStore({ dir });
  const records: LogRecord[] = [started('long')];
  for (let i = 0; i < STEPS; i++)
    records.push(modelIntent(i), modelResult(i), actionIntent(i), stepWrite(i, 'x'.repeat(200)));
  records.push(ended(STEPS));
  await writeFile(store.logPath('long'), `${records.map(encodeRecord).join('\n')}\n`);
});

/** `polyloop <args> | head -n 2` in bash with pipefail: the exit status is polyloop's when head succeeded. */
function pipedIntoHead(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('bash', ['-c', `set -o pipefail; ${quoted} | head -n 2`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('polyloop piped into a reader that stops early', () => {
  it.each([[['show', 'long']], [['show', 'long', '--json']], [['export', 'long']]])(
    'polyloop %j | head -n 2 prints two lines and exits 0 without an EPIPE trace',
    async (args) => {
      const [command, ...rest] = args;
      const r = await pipedIntoHead([command as string, dir, ...rest]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    },
    60_000,
  );

  it('still prints the whole long run when nobody stops reading', async () => {
    const r = await polyloop(['show', dir, 'long']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`#${STEPS - 1} `);
  }, 60_000);
});

describe('polyloop help', () => {
  it.each([['--help'], ['-h'], ['help']])('polyloop %s prints the usage on stdout and exits 0', async (flag) => {
    const r = await polyloop([flag]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^usage:\n/);
    for (const command of ['runs', 'show', 'export', 'import', 'help'])
      expect(r.stdout).toContain(`polyloop ${command} `);
  });

  it('prints the usage on stderr and exits 2 when no command is given', async () => {
    const r = await polyloop([]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('usage:');
  });
});
