/**
 * The newcomer path, end to end on a fresh clone, as the README tells it: `git clone`, the
 * README's `npm install` (the lockfile stays as cloned), `npm run demo`, `npm pack` and an install
 * into an empty ESM project that runs the README example offline, and the Worker template under
 * `wrangler dev` (copied into that project, as its README says) driving one run over HTTP against a
 * loopback fake model.
 * Slow (a clone, an install, a build): runs in CI (`CI=true`) or with `POLYLOOP_NEWCOMER=1`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { machineHas } from '../../support/machine.ts';
import { emptyProjectWith, npmPack } from '../package/pack.ts';
import { runWorkerTemplate } from './worker-template.ts';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const ENABLED = process.env['CI'] === 'true' || process.env['POLYLOOP_NEWCOMER'] === '1';
/** A newcomer's shell: no provider key (the demo then uses its local model), no CI flags of ours. */
const SHELL: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(OPENAI_|ANTHROPIC_|VITEST|POLYLOOP_)/.test(k)),
);

/** Fails unless `path` is in the commit a clone gets (a file still being written in this checkout is not). */
function expectCommitted(path: string): void {
  let found = true;
  try {
    execFileSync('git', ['cat-file', '-e', `HEAD:${path}`], { cwd: ROOT, stdio: 'ignore' });
  } catch {
    found = false;
  }
  expect(found, `${path} is not committed, so a fresh clone lacks it`).toBe(true);
}

let work = '';
let clone = '';

async function sh(cmd: string, args: readonly string[], cwd: string, timeout = 150_000): Promise<string> {
  const { stdout, stderr } = await exec(cmd, args, { cwd, env: SHELL, timeout, maxBuffer: 64 * 1024 * 1024 });
  return stdout + stderr;
}

const slowRunsHere = machineHas(
  ENABLED,
  'the newcomer path on a fresh clone is slow: it runs in CI (CI=true) or with POLYLOOP_NEWCOMER=1',
);

describe.runIf(slowRunsHere)('the newcomer path on a fresh clone', () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'polyloop-newcomer-'));
    clone = join(work, 'polyloop');
    await sh('git', ['clone', '--quiet', ROOT, clone], work);
  }, 60_000);

  // A fresh clone's node_modules (react, ai, wrangler, …) is hundreds of MB: removing it takes
  // longer than the default hook timeout on a busy 2-core machine.
  afterAll(() => {
    if (work !== '') rmSync(work, { recursive: true, force: true });
  }, 180_000);

  it("installs with the README's npm install and leaves the clone as it was cloned", async () => {
    await sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], clone);
    expect(await sh('git', ['status', '--porcelain'], clone)).toBe('');
  }, 180_000);

  it("leaves the lockfile as cloned under npm 10 too (Node 20's and 22's own npm)", async () => {
    await sh(
      'npx',
      [
        '--yes',
        'npm@10.8.2',
        'install',
        '--package-lock-only',
        '--ignore-scripts',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      clone,
    );
    expect(await sh('git', ['status', '--porcelain'], clone)).toBe('');
  }, 120_000);

  it('runs the demo to a final answer with the local model', async () => {
    const out = await sh('npm', ['run', 'demo'], clone);
    expect(out).toMatch(/run demo: ended \(final_answer\)/);
    expect(out).toMatch(/answer: src\/core\/index\.ts exports the most names/);
  }, 120_000);

  describe('as a package in an empty ESM project', () => {
    let project = '';
    beforeAll(async () => {
      project = await emptyProjectWith(await npmPack(clone, join(work, 'tarballs'), { stage: false }));
    }, 240_000);

    afterAll(() => {
      if (project !== '') rmSync(project, { recursive: true, force: true });
    });

    it('runs the README example offline, as written, to its final answer', async () => {
      expectCommitted('examples/readme/offline.mts');
      const tsx = join(clone, 'node_modules/.bin/tsx');
      copyFileSync(join(clone, 'examples/readme/offline.mts'), join(project, 'offline.mts'));
      const out = await sh(tsx, ['offline.mts'], project, 60_000);
      expect(out).toContain('final_answer 2 + 40 = 42 null');
    }, 90_000);

    it('serves the Worker template under wrangler dev and carries one run over HTTP to its answer', async () => {
      expectCommitted('examples/worker/wrangler.toml');
      const { status, listed, modelRequests } = await runWorkerTemplate(clone, project, SHELL);
      expect(status).toMatchObject({
        status: 'ended',
        stopReason: 'final_answer',
        finalAnswer: '1234 + 4321 = 5555.',
        steps: 2,
        validActions: 1,
      });
      expect(modelRequests).toBe(2);
      expect(listed).toEqual([expect.objectContaining({ runId: 'sum-1' })]);
    }, 120_000);
  });
});
