/**
 * Section 6: bundle sizes (esbuild, minified, then gzipped) of the browser builds of `polyloop`
 * and `polyloop` + `polyloop/web`, of the Worker bundle, of `polyloop/adapters/ai-sdk`, of `polyloop/mcp`
 * (with the MCP SDK client it pulls in), of `polyloop/otel` (without `@opentelemetry/api`) and of a tab app
 * (`bench/tab-app.ts`: an agent with a zod tool on IndexedDB, zod left out), checked against
 * `bench/budgets.json`. Sizes are deterministic, so the size test runs this in `npm test`.
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

/** The build of each bundle; null when its entry does not exist in this checkout. */
function options(name: BundleName): BuildOptions | null {
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
      // ships: zod is the app's own and not counted.
      return existsSync(tab) ? { ...BROWSER, entryPoints: [tab], external: ['zod', 'zod/*'] } : null;
  }
}

function thirdPartyBytes(meta: Metafile): number {
  let total = 0;
  for (const out of Object.values(meta.outputs)) {
    for (const [path, info] of Object.entries(out.inputs))
      if (path.includes('node_modules/')) total += info.bytesInOutput;
  }
  return total;
}

/** Build and measure every bundle whose entry exists. */
export async function measureBundles(): Promise<BundleSize[]> {
  const sizes: BundleSize[] = [];
  for (const name of BUNDLES) {
    const opts = options(name);
    if (!opts) continue;
    const result = await build(opts);
    const file = result.outputFiles?.[0];
    if (!file || !result.metafile) throw new Error(`esbuild produced no output for ${name}`);
    const rel = (p: string): string => relative(ROOT, join(ROOT, p));
    const inputs = Object.keys(result.metafile.inputs).map(rel).sort();
    // A file tree-shaking emptied is in the metafile still, with its imports: those pulled nothing in.
    const kept = new Set<string>();
    for (const out of Object.values(result.metafile.outputs))
      for (const [path, info] of Object.entries(out.inputs)) if (info.bytesInOutput > 0) kept.add(path);
    const imports: Record<string, string[]> = {};
    for (const [path, info] of Object.entries(result.metafile.inputs))
      if (kept.has(path)) imports[rel(path)] = info.imports.filter((i) => !i.external).map((i) => rel(i.path));
    sizes.push({
      name,
      minified: file.contents.byteLength,
      gzipped: gzipSync(file.contents, { level: 9 }).byteLength,
      thirdParty: thirdPartyBytes(result.metafile),
      inputs,
      imports,
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
