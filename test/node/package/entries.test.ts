/**
 * The package as users get it: `npm run build`, publint, then every `exports` subpath imported by
 * plain Node through the package's own exports map, compared with the source entry it comes from.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
/** Built apart from `dist/` (which the CLI launcher prefers), so parallel tests never see a half-built tree. */
const PKG = resolve(ROOT, '.package-test');
const BUILD_CONFIGS = ['tsconfig.build.json', 'tsconfig.build-node.json', 'tsconfig.build-workers.json'];
const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, string | { types: string; default: string }> };

/** Subpath → its source entry. Workers code imports `cloudflare:*`, which plain Node cannot load. */
const SOURCES: Record<string, string> = {
  '.': 'src/core/index.ts',
  './node': 'src/platform-node/index.ts',
  './web': 'src/platform-web/index.ts',
  './workers': 'src/platform-workers/index.ts',
  './adapters/openai': 'src/adapters/openai.ts',
  './adapters/anthropic': 'src/adapters/anthropic.ts',
  './adapters/ai-sdk': 'src/adapters/ai-sdk.ts',
  './zod': 'src/zod/index.ts',
  './testing': 'src/testing/index.ts',
};
const NODE_LOADABLE = Object.keys(SOURCES).filter((s) => s !== './workers');

describe('the built package', () => {
  beforeAll(async () => {
    rmSync(PKG, { recursive: true, force: true });
    mkdirSync(PKG);
    mkdirSync(resolve(PKG, 'bin'));
    for (const f of ['package.json', 'README.md', 'bin/polyloop.mjs']) copyFileSync(resolve(ROOT, f), resolve(PKG, f));
    for (const config of BUILD_CONFIGS) await run('npx', ['tsc', '-p', config, '--outDir', resolve(PKG, 'dist')], { cwd: ROOT });
  }, 120_000);

  it('declares exactly the subpaths of SPEC §1, each with types first and both files built', () => {
    const subpaths = Object.keys(pkg.exports).filter((s) => s !== './package.json').sort();
    expect(subpaths).toEqual(Object.keys(SOURCES).sort());
    for (const s of subpaths) {
      const target = pkg.exports[s] as { types: string; default: string };
      expect(Object.keys(target)[0], s).toBe('types');
      expect(existsSync(resolve(PKG, target.types)), `${s} types`).toBe(true);
      expect(existsSync(resolve(PKG, target.default)), `${s} code`).toBe(true);
    }
  });

  it('imports nothing of the AI SDK at run time from polyloop/adapters/ai-sdk (its types only)', () => {
    const built = ['ai-sdk', 'ai-sdk-prompt', 'ai-sdk-reply', 'ai-sdk-stream'].map((f) => readFileSync(resolve(PKG, 'dist/adapters', `${f}.js`), 'utf8'));
    for (const code of built) expect(code).not.toMatch(/^\s*(import|export)\b[^;]*['"](@ai-sdk\/[^'"]*|ai)['"]|import\(\s*['"]@ai-sdk/m);
    expect(readFileSync(resolve(PKG, 'dist/adapters/ai-sdk.d.ts'), 'utf8')).toContain("from '@ai-sdk/provider'");
  });

  it('passes publint', async () => {
    const { stdout } = await run('npx', ['publint'], { cwd: PKG });
    expect(stdout).toContain('All good');
  }, 60_000);

  it('exports from each built entry, loaded by Node through the exports map, exactly what its source entry exports', async () => {
    const script = `const out = {}; for (const s of ${JSON.stringify(NODE_LOADABLE)}) { const m = await import('polyloop' + s.slice(1)); out[s] = Object.keys(m).sort(); } console.log(JSON.stringify(out));`;
    const { stdout } = await run('node', ['--input-type=module', '-e', script], { cwd: PKG });
    const built = JSON.parse(stdout) as Record<string, string[]>;
    for (const s of NODE_LOADABLE) {
      const source = (await import(resolve(ROOT, SOURCES[s] as string))) as Record<string, unknown>;
      expect(built[s], s).toEqual(Object.keys(source).sort());
      expect(built[s]?.length, s).toBeGreaterThan(0);
    }
  }, 60_000);
});
