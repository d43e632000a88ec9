/**
 * A fresh clone stays clean: `npm install` leaves package-lock.json byte-identical (decision 0033).
 * It did not when package.json changed without the lockfile (a `bin` added), and it would not
 * for Node 20's and 22's npm 10 if the lockfile carried npm 11's `libc` fields.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp-dir.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const LOCK = readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8');

describe('package-lock.json', () => {
  it('is what npm install writes for package.json as it is (npm install in a fresh clone changes nothing)', async () => {
    const dir = await tempDir('polyloop-lock-');
    for (const f of ['package.json', 'package-lock.json', '.npmrc']) copyFileSync(resolve(ROOT, f), join(dir, f));
    await run(
      'npm',
      ['install', '--package-lock-only', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'],
      { cwd: dir },
    );
    expect(
      readFileSync(join(dir, 'package-lock.json'), 'utf8') === LOCK,
      'npm install rewrote package-lock.json: run `npm install` and commit the lockfile',
    ).toBe(true);
  }, 120_000);

  it('has no libc fields, which npm 10 (Node 20 and 22) deletes and npm 11 writes', () => {
    expect(LOCK).not.toContain('"libc"');
  });

  it('has no download addresses, which depend on the registry of the machine that wrote it', () => {
    expect(LOCK).not.toContain('"resolved"');
  });
});
