/**
 * Where the tab app's first load goes (decision 0086): `npx tsx bench/bundle-modules.ts`. Prints, as
 * Markdown, the bytes each module leaves in what the `tab` bundle of `bench/bundle.ts` loads first
 * (esbuild, minified; gzip estimated by the module's share of the minified bytes) and whether
 * `src/core/index.ts` reaches the module by static imports, which decides whether esbuild can move
 * it to a chunk loaded by `import()`; then the first load with groups of modules cut out (each
 * exported name a stub), a ceiling on what loading them on demand could save; then the same app
 * built by Vite (on Rolldown) as a page ships it, chunk by chunk.
 * @module
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { Metafile, Plugin } from 'esbuild';
import { build as vite } from 'vite';
import type { Rollup } from 'vite';
import { bundleOptions, firstLoad } from './bundle.ts';

const ROOT = join(import.meta.dirname, '..');
const gz = (bytes: Uint8Array | string): number => gzipSync(bytes, { level: 9 }).byteLength;

/**
 * What a run of a new run never executes, by the user action that needs it (the brief's candidates):
 * a group's stubs keep its names, so the rest still builds, but not its code.
 */
const GROUPS: Readonly<Record<string, readonly string[]>> = {
  'reading a log with records, trust, upgrades, stop (resume; listRuns)': [
    'src/core/internal/recovery.ts',
    'src/core/run-log.ts',
    'src/core/log-trust.ts',
    'src/core/upgrade.ts',
    'src/core/control.ts',
    'src/platform-web/run-info.ts',
  ],
  'a person asked, edits (a gate, an approval)': [
    'src/core/session-input.ts',
    'src/core/internal/input.ts',
    'src/core/edits.ts',
  ],
  'several calls a step (parallelToolCalls)': [
    'src/core/session-calls.ts',
    'src/core/call-record.ts',
    'src/core/internal/step-calls.ts',
  ],
  'sub-agents, takeover marks, snapshot differences': [
    'src/core/child-runs.ts',
    'src/core/takeover.ts',
    'src/core/internal/json-compare.ts',
  ],
};

/** A plugin that replaces each of `paths` by a module exporting its names as `undefined`. */
function stubs(paths: readonly string[]): Plugin {
  const stubbed = new Set(paths.map((p) => join(ROOT, p)));
  return {
    name: 'stubs',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        if (!stubbed.has(args.path)) return undefined;
        const src = readFileSync(args.path, 'utf8');
        const declared = [...src.matchAll(/^export (?:async )?(?:function|const|class|let) ([\w$]+)/gm)];
        const reexported = [...src.matchAll(/^export \{([^}]+)\} from/gm)].flatMap((m) =>
          (m[1] as string).split(',').map((s) => s.trim().split(' as ').pop() as string),
        );
        const names = new Set([...declared.map((m) => m[1] as string), ...reexported]);
        const contents = [...names].map((n) => `export const ${n} = globalThis.__stub;`).join('\n');
        return { contents, loader: 'ts' };
      });
    },
  };
}

/** The tab's first load built by esbuild as `bench/bundle.ts` builds it, with `cut` stubbed out. */
async function esbuildFirstLoad(cut: readonly string[] = []) {
  const opts = bundleOptions('tab');
  if (!opts) throw new Error('bench/tab-app.ts is missing');
  const result = await build({ ...opts, plugins: [stubs(cut)] });
  const meta = result.metafile as Metafile;
  const first = firstLoad(meta);
  const files = (result.outputFiles ?? []).filter((f) => first.has(relative(ROOT, f.path)));
  const minified = files.reduce((n, f) => n + f.contents.byteLength, 0);
  const gzipped = files.reduce((n, f) => n + gz(f.contents), 0);
  const modules = new Map<string, number>();
  for (const key of first)
    for (const [path, info] of Object.entries(meta.outputs[key]?.inputs ?? {}))
      if (info.bytesInOutput > 0) modules.set(path, (modules.get(path) ?? 0) + info.bytesInOutput);
  return { meta, minified, gzipped, modules };
}

/** Files `from`'s static import records reach: what esbuild's code splitting gives `from`'s chunk. */
function staticallyReached(meta: Metafile, from: string): Set<string> {
  const seen = new Set<string>();
  const visit = (p: string): void => {
    if (seen.has(p)) return;
    seen.add(p);
    for (const i of meta.inputs[p]?.imports ?? []) if (i.kind !== 'dynamic-import' && !i.external) visit(i.path);
  };
  visit(from);
  return seen;
}

const base = await esbuildFirstLoad();
const fromIndex = staticallyReached(base.meta, 'src/core/index.ts');
console.log(`esbuild first load: ${base.minified} B minified, ${base.gzipped} B gzipped\n`);
console.log('| module | minified | ~gzip | reached from `src/core/index.ts` |\n|---|--:|--:|---|');
for (const [path, bytes] of [...base.modules].sort((a, b) => b[1] - a[1])) {
  const share = Math.round((bytes / base.minified) * base.gzipped);
  console.log(
    `| \`${path.replace(/^.*node_modules\//, '')}\` | ${bytes} | ${share} | ${fromIndex.has(path) ? 'yes' : 'no'} |`,
  );
}

console.log('\n| cut out (stubs) | minified | gzipped | saved |\n|---|--:|--:|--:|');
const cuts: [string, readonly string[]][] = [...Object.entries(GROUPS), ['all four', Object.values(GROUPS).flat()]];
for (const [name, paths] of cuts) {
  const cut = await esbuildFirstLoad(paths);
  console.log(`| ${name} | ${cut.minified} | ${cut.gzipped} | ${base.gzipped - cut.gzipped} |`);
}

// Vite (8, on Rolldown), as it builds a page: the entry chunk and the chunks it imports statically load first.
const built = await vite({
  configFile: false,
  root: ROOT,
  logLevel: 'silent',
  build: {
    write: false,
    minify: true,
    modulePreload: false,
    rollupOptions: {
      input: join(ROOT, 'bench/tab-app.ts'),
      external: [/^zod(\/|$)/],
      // The app's `start` is what its page calls: kept, as the page's own script would keep it.
      preserveEntrySignatures: 'exports-only',
    },
  },
});
const out = (Array.isArray(built) ? built[0] : built) as Rollup.RollupOutput;
const chunks = out.output.filter((o): o is Rollup.OutputChunk => o.type === 'chunk');
const byName = new Map(chunks.map((c) => [c.fileName, c]));
const first = new Set<string>();
const visit = (name: string): void => {
  if (first.has(name) || !byName.has(name)) return;
  first.add(name);
  for (const i of byName.get(name)?.imports ?? []) visit(i);
};
for (const c of chunks) if (c.isEntry) visit(c.fileName);
const loaded = chunks.filter((c) => first.has(c.fileName));
const sum = (cs: readonly Rollup.OutputChunk[], f: (c: Rollup.OutputChunk) => number): number =>
  cs.reduce((n, c) => n + f(c), 0);
console.log(
  `\nvite first load: ${loaded.length} chunk(s), ${sum(loaded, (c) => Buffer.byteLength(c.code))} B minified,` +
    ` ${sum(loaded, (c) => gz(c.code))} B gzipped chunk by chunk (${gz(loaded.map((c) => c.code).join('\n'))} B as one file);` +
    ` on demand: ${chunks
      .filter((c) => !first.has(c.fileName))
      .map((c) => `${c.fileName} ${gz(c.code)} B`)
      .join(', ')}`,
);
