/**
 * The package as users get it: `npm pack` (whose `prepack` builds `dist/`, as for a tarball or a
 * git install), publint, every `exports` subpath imported by plain Node through the package's own
 * exports map and compared with the source entry it comes from, then the tarball installed into an
 * empty ESM project that imports every subpath and runs a first agent.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { emptyProjectWith, nodeIn, npmPack } from './pack.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
/** The tarball's content, unpacked inside the checkout so its dependencies resolve from node_modules. */
const PKG = resolve(ROOT, '.package-test');
const OUT = await sharedTempDirs().make('polyloop-pack-');
let tarball = '';
const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string; default: string }>;
};

/** Subpath → its source entry. Workers code imports `cloudflare:*`, which plain Node cannot load. */
const SOURCES: Record<string, string> = {
  '.': 'src/core/index.ts',
  './internal': 'src/core/internal-entry.ts',
  './node': 'src/platform-node/index.ts',
  './web': 'src/platform-web/index.ts',
  './workers': 'src/platform-workers/index.ts',
  './postgres': 'src/platform-postgres/index.ts',
  './adapters/openai': 'src/adapters/openai.ts',
  './adapters/anthropic': 'src/adapters/anthropic.ts',
  './adapters/ai-sdk': 'src/adapters/ai-sdk.ts',
  './mcp': 'src/mcp/index.ts',
  './chat': 'src/chat/index.ts',
  './zod': 'src/zod/index.ts',
  './otel': 'src/otel/index.ts',
  './testing': 'src/testing/index.ts',
};
const NODE_LOADABLE = Object.keys(SOURCES).filter((s) => s !== './workers');

describe('the built package', () => {
  beforeAll(async () => {
    // Packed from a staged copy: the checkout's own dist/ (which the CLI launcher prefers) is never rebuilt under parallel tests.
    tarball = await npmPack(ROOT, OUT, { stage: true });
    rmSync(PKG, { recursive: true, force: true });
    mkdirSync(PKG);
    await run('tar', ['xzf', tarball, '-C', PKG, '--strip-components=1']);
  }, 300_000);

  it('declares exactly the subpaths of the layers, each with types first and both files built', () => {
    const subpaths = Object.keys(pkg.exports)
      .filter((s) => s !== './package.json')
      .sort();
    expect(subpaths).toEqual(Object.keys(SOURCES).sort());
    for (const s of subpaths) {
      const target = pkg.exports[s] as { types: string; default: string };
      expect(Object.keys(target)[0], s).toBe('types');
      expect(existsSync(resolve(PKG, target.types)), `${s} types`).toBe(true);
      expect(existsSync(resolve(PKG, target.default)), `${s} code`).toBe(true);
    }
  });

  it('imports nothing of the AI SDK at run time from polyloop/adapters/ai-sdk (its types only)', () => {
    const built = ['ai-sdk', 'ai-sdk-prompt', 'ai-sdk-reply', 'ai-sdk-stream'].map((f) =>
      readFileSync(resolve(PKG, 'dist/adapters', `${f}.js`), 'utf8'),
    );
    for (const code of built)
      expect(code).not.toMatch(/^\s*(import|export)\b[^;]*['"](@ai-sdk\/[^'"]*|ai)['"]|import\(\s*['"]@ai-sdk/m);
    expect(readFileSync(resolve(PKG, 'dist/adapters/ai-sdk.d.ts'), 'utf8')).toContain("from '@ai-sdk/provider'");
  });

  it("ships the run viewer's page built (prepack): index.html and every asset it names, where the built `polyloop view` looks", async () => {
    const html = readFileSync(resolve(PKG, 'dist/viewer/page/index.html'), 'utf8');
    const assets = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const a of assets) expect(existsSync(resolve(PKG, 'dist/viewer/page', a)), a).toBe(true);
    const { defaultPageDir } = (await import(resolve(PKG, 'dist/viewer/server/viewer.js'))) as {
      defaultPageDir: () => string | null;
    };
    expect(defaultPageDir()).toBe(resolve(PKG, 'dist/viewer/page'));
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

  it('installs from its tarball into an empty ESM project, which imports every subpath and runs a first agent', async () => {
    const project = await emptyProjectWith(tarball);
    try {
      const stdout = await nodeIn(project, resolve(import.meta.dirname, 'smoke.mjs'));
      const report = JSON.parse(stdout) as {
        imports: Record<string, number | string>;
        stopReason: string;
        finalAnswer: string;
      };
      expect(Object.keys(report.imports).sort()).toEqual(
        Object.keys(SOURCES)
          .map((s) => `polyloop${s.slice(1)}`)
          .sort(),
      );
      for (const [entry, names] of Object.entries(report.imports)) expect(names, entry).not.toBe(0);
      expect(report.imports['polyloop/workers']).toBe('resolved');
      expect(report.imports['polyloop/mcp']).toBe('resolved');
      expect(report.imports['polyloop/otel']).toBe('resolved');
      expect(report).toMatchObject({ stopReason: 'final_answer', finalAnswer: '42' });
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 120_000);
});
