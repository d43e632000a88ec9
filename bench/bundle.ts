/**
 * Section 6: bundle sizes (esbuild, minified, then gzipped) of the browser builds of `polyloop`
 * and `polyloop` + `polyloop/web`, of the Worker bundle, of `polyloop/adapters/ai-sdk`, of `polyloop/mcp`
 * (with the MCP SDK client it pulls in), of `polyloop/otel` (without `@opentelemetry/api`) and of a tab app
 * (`bench/tab-app.ts`: an agent with a zod tool on IndexedDB, zod left out), checked against
 * `bench/budgets.json`. Sizes are deterministic, so the size test runs this in `npm test`. The tab
 * app is built with code splitting, as a page is: its size is what loads first (the entry chunk
 * and the chunks it imports), and what loads on demand (the JSON Schema validator) is `lazy`.
 * @module
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { BuildOptions, Metafile } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The bundles measured, by the name used in `bench/budgets.json`. */
export const BUNDLES = [
  'polyloop',
  'polyloop+web',
  'worker',
  'polyloop/adapters/ai-sdk',
  'polyloop/mcp',
  'polyloop/otel',
  'tab',
] as const;
/** A bundle's name. */
export type BundleName = (typeof BUNDLES)[number];

/** One bundle's size. */
export type BundleSize = {
  readonly name: BundleName;
  /** Minified bytes. */
  readonly minified: number;
  /** Minified, then gzipped (level 9) bytes: what the budget limits. */
  readonly gzipped: number;
  /** Minified bytes that come from node_modules (third-party code). */
  readonly thirdParty: number;
  /** The files that went in, relative to the repository root. */
  readonly inputs: readonly string[];
  /** What each file with code in the output imports (bundled files only), by the same paths. */
  readonly imports: Readonly<Record<string, readonly string[]>>;
  /**
   * A split build's chunks that load only on demand (reached by a dynamic `import()` alone), not in
   * the sizes above: their bytes and the files with code in them. Null for a bundle built whole.
   */
  readonly lazy: { readonly minified: number; readonly gzipped: number; readonly inputs: readonly string[] } | null;
};

/** `bench/budgets.json`: the highest gzipped size allowed per bundle, in bytes. */
export type Budgets = { readonly gzipBytes: Readonly<Record<BundleName, number>> };

const BROWSER: BuildOptions = {
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  write: false,
  metafile: true,
  logLevel: 'silent',
};
const WORKER: BuildOptions = {
  ...BROWSER,
  platform: 'neutral',
  conditions: ['workerd', 'worker', 'browser'],
  mainFields: ['module', 'main'],
  external: ['cloudflare:*'],
};

/** Code splitting (ES modules): chunks are named, not written; paths are relative to the root. */
const SPLIT: BuildOptions = { splitting: true, outdir: join(ROOT, 'bundle-out'), absWorkingDir: ROOT };

/** The build of each bundle; null when its entry does not exist in this checkout. */
export function bundleOptions(name: BundleName): BuildOptions | null {
  const core = join(ROOT, 'src/core/index.ts');
  const web = join(ROOT, 'src/platform-web/index.ts');
  const worker = join(ROOT, 'examples/workers/worker.ts');
  const aiSdk = join(ROOT, 'src/adapters/ai-sdk.ts');
  const mcp = join(ROOT, 'src/mcp/index.ts');
  const otel = join(ROOT, 'src/otel/index.ts');
  const tab = join(ROOT, 'bench/tab-app.ts');
  switch (name) {
    case 'polyloop':
      return { ...BROWSER, entryPoints: [core] };
    case 'polyloop+web':
      if (!existsSync(web)) return null;
      // Everything both entries export, as one app importing both would keep it.
      return {
        ...BROWSER,
        stdin: {
          contents: `export * from ${JSON.stringify(core)};\nexport * from ${JSON.stringify(web)};`,
          resolveDir: ROOT,
          loader: 'ts',
        },
      };
    case 'worker':
      return existsSync(worker) ? { ...WORKER, entryPoints: [worker] } : null;
    case 'polyloop/adapters/ai-sdk':
      // The adapter with the core it needs tree-shaken in; the AI SDK is the user's, never bundled here.
      return existsSync(aiSdk) ? { ...BROWSER, entryPoints: [aiSdk] } : null;
    case 'polyloop/mcp':
      // What a page that uses MCP tools ships: the entry, the core it needs, and the SDK's client
      // (its browser build, which validates with @cfworker/json-schema, not ajv).
      return existsSync(mcp) ? { ...BROWSER, entryPoints: [mcp] } : null;
    case 'polyloop/otel':
      // The sink with the core it needs; the OpenTelemetry API is the user's (a peer dependency they
      // already ship with their SDK), never bundled here.
      return existsSync(otel) ? { ...BROWSER, entryPoints: [otel], external: ['@opentelemetry/api'] } : null;
    case 'tab':
      // A tab app (agent, run/resume, registry, JSON interpreter, IndexedDB, a zod tool) as it
      // ships: zod is the app's own and not counted. Split, as a page's bundler does: the JSON
      // Schema validator, loaded by import() when a tool needs it, is a chunk of its own.
      if (!existsSync(tab)) return null;
      return { ...BROWSER, entryPoints: [tab], external: ['zod', 'zod/*'], ...SPLIT };
  }
}

type Output = Metafile['outputs'][string];

function thirdPartyBytes(outputs: readonly Output[]): number {
  let total = 0;
  for (const out of outputs) {
    for (const [path, info] of Object.entries(out.inputs))
      if (path.includes('node_modules/')) total += info.bytesInOutput;
  }
  return total;
}

/** The chunks a page loads first: the entry, and every chunk reached from it by static imports. */
export function firstLoad(meta: Metafile): Set<string> {
  const entry = Object.keys(meta.outputs).find((k) => meta.outputs[k]?.entryPoint !== undefined);
  const first = new Set<string>();
  const visit = (key: string): void => {
    if (first.has(key)) return;
    first.add(key);
    for (const i of meta.outputs[key]?.imports ?? []) if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  if (entry !== undefined) visit(entry);
  return first;
}

/** Files whose code is in `outputs` (a file tree-shaking emptied is in the metafile still). */
function filesIn(outputs: readonly Output[]): Set<string> {
  const kept = new Set<string>();
  for (const out of outputs)
    for (const [path, info] of Object.entries(out.inputs)) if (info.bytesInOutput > 0) kept.add(path);
  return kept;
}

/** Minified and gzipped bytes of some chunks, each gzipped alone as it is served. */
function bytesOf(files: readonly Uint8Array[]): { minified: number; gzipped: number } {
  let minified = 0;
  let gzipped = 0;
  for (const f of files) {
    minified += f.byteLength;
    gzipped += gzipSync(f, { level: 9 }).byteLength;
  }
  return { minified, gzipped };
}

/** Build and measure every bundle whose entry exists. */
export async function measureBundles(): Promise<BundleSize[]> {
  const sizes: BundleSize[] = [];
  for (const name of BUNDLES) {
    const opts = bundleOptions(name);
    if (!opts) continue;
    const result = await build(opts);
    const meta = result.metafile;
    if (!result.outputFiles?.[0] || !meta) throw new Error(`esbuild produced no output for ${name}`);
    const rel = (p: string): string => relative(ROOT, join(ROOT, p));
    const inputs = Object.keys(meta.inputs).map(rel).sort();
    // A whole build is one output; a split one loads its entry's static chunks first, the rest on demand.
    const first = opts.splitting ? firstLoad(meta) : new Set(Object.keys(meta.outputs));
    const contents = (keys: readonly string[]): Uint8Array[] =>
      (result.outputFiles ?? [])
        .filter((f) => !opts.splitting || keys.includes(relative(ROOT, f.path)))
        .map((f) => f.contents);
    const firstKeys = [...first];
    const lazyKeys = Object.keys(meta.outputs).filter((k) => !first.has(k));
    const outputsOf = (keys: readonly string[]): Output[] => keys.flatMap((k) => meta.outputs[k] ?? []);
    // A file tree-shaking emptied is in the metafile still, with its imports: those pulled nothing in.
    const kept = filesIn(Object.values(meta.outputs));
    const imports: Record<string, string[]> = {};
    for (const [path, info] of Object.entries(meta.inputs))
      if (kept.has(path)) imports[rel(path)] = info.imports.filter((i) => !i.external).map((i) => rel(i.path));
    const lazy = opts.splitting
      ? { ...bytesOf(contents(lazyKeys)), inputs: [...filesIn(outputsOf(lazyKeys))].map(rel).sort() }
      : null;
    sizes.push({
      name,
      ...bytesOf(contents(firstKeys)),
      thirdParty: thirdPartyBytes(outputsOf(firstKeys)),
      inputs,
      imports,
      lazy,
    });
  }
  return sizes;
}

/** Read `bench/budgets.json`. */
export async function readBudgets(): Promise<Budgets> {
  return JSON.parse(await readFile(join(ROOT, 'bench/budgets.json'), 'utf8')) as Budgets;
}

/** The budgets a measurement exceeds, as sentences; `[]` when all fit. */
export function overBudget(sizes: readonly BundleSize[], budgets: Budgets): string[] {
  return sizes
    .filter((s) => s.gzipped > budgets.gzipBytes[s.name])
    .map(
      (s) =>
        `${s.name}: ${s.gzipped} bytes gzipped exceeds its budget of ${budgets.gzipBytes[s.name]} bytes (bench/budgets.json)`,
    );
}
