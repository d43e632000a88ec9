/**
 * The browser bundle of `polyloop` + `polyloop/web` (esbuild, platform 'browser') carries no
 * Node-only code. A control bundle of `polyloop/node` shows the check sees `node:` imports.
 * Size is measured for docs/performance.md, not asserted (see the command there).
 */
import { gzipSync } from 'node:zlib';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

type Bundle = { readonly text: string; readonly nodeImports: readonly string[]; readonly gzipBytes: number };

/** Bundle entries the way a browser app would, keeping any `node:` import visible (external). */
async function browserBundle(entries: readonly string[]): Promise<Bundle> {
  const contents = entries.map((e) => `export * from ${JSON.stringify(e)};`).join('\n');
  const out = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'ts', sourcefile: 'entry.ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    metafile: true,
    external: ['node:*'],
    logLevel: 'silent',
  });
  const text = out.outputFiles[0]?.text ?? '';
  const imports = Object.values(out.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  const inText = [...text.matchAll(/["'](node:[\w/]+)["']/g)].map((m) => m[1] as string);
  return {
    text,
    nodeImports: [...new Set([...imports.filter((p) => p.startsWith('node:')), ...inText])],
    gzipBytes: gzipSync(text, { level: 9 }).length,
  };
}

describe('the browser bundle', () => {
  it('of polyloop + polyloop/web contains no node: import', async () => {
    const bundle = await browserBundle(['./src/core/index.ts', './src/platform-web/index.ts']);
    expect(bundle.text).toContain('IndexedDBStore');
    expect(bundle.nodeImports).toEqual([]);
    console.log(
      `polyloop + polyloop/web, esbuild browser minified: ${bundle.text.length} B, gzip -9: ${bundle.gzipBytes} B`,
    );
  });

  it('finds the node: imports of polyloop/node, so the check above can fail', async () => {
    const bundle = await browserBundle(['./src/platform-node/index.ts']);
    expect(bundle.nodeImports.length).toBeGreaterThan(0);
  });
});
