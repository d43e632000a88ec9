import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ROOT } from './miniflare-harness.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

const run = promisify(execFile);
const outdir = await sharedTempDirs().make('polyloop-dry-run-');

describe('wrangler deploy --dry-run', () => {
  it('bundles the Worker from wrangler.toml offline, with the run Durable Object and the run index bound', async () => {
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir],
      {
        cwd: ROOT,
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', NO_COLOR: '1' },
        timeout: 120_000,
      },
    );
    expect(stdout).toMatch(/--dry-run: exiting now/);
    expect(stdout).toMatch(/env\.RUNS \(RunObject\)\s+Durable Object/);
    expect(stdout).toMatch(/env\.RUN_INDEX \(RunIndex\)\s+Durable Object/);
    const bundle = join(outdir, 'worker.js');
    const bytes = statSync(bundle).size;
    const gzip = gzipSync(readFileSync(bundle)).byteLength;
    console.log(`polyloop Worker bundle (wrangler --dry-run): ${bytes} bytes, ${gzip} bytes gzipped`);
    expect(bytes).toBeGreaterThan(10_000);
    expect(readFileSync(bundle, 'utf8')).toMatch(/class RunObject/);
  }, 120_000);
});
