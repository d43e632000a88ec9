/**
 * Where `polyloop view` finds its page. An installed package has it built in `dist/viewer/page/`
 * (`prepack` runs `npm run build`); a checkout may have no build at all, and its `src/viewer/page/`
 * holds the page's TypeScript source, which no browser can run. There the page is built on
 * demand with Vite — a dev checkout has it — into `node_modules/.cache/polyloop-viewer/<hash of
 * the sources>/`, once per change of the sources; without Vite the viewer refuses and says what
 * to run (decision 0054).
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ViewerRefusedError } from './view-source.ts';

/** Vite's `build`, as much of it as the viewer uses. */
export type ViteBuild = (config: {
  readonly configFile: string;
  readonly logLevel: 'warn';
  readonly build: { readonly outDir: string; readonly emptyOutDir: boolean };
}) => Promise<unknown>;

/** Where to look for the page, and how to build it when no built one is found. */
export type PageSearch = {
  /** Directories that may hold the built page, in order. */
  readonly built: readonly string[];
  /** The page's sources with their `vite.config.ts` (a checkout's `src/viewer/page`), or null. */
  readonly source: string | null;
  /** Where a page built on demand is kept, one directory per version of the sources. */
  readonly cacheDir: string;
  /** Vite's build, or null when Vite cannot be loaded. */
  readonly vite: () => Promise<ViteBuild | null>;
};

/** Whether `dir` holds a built page: its `index.html` and the `assets/` Vite writes (the source has none). */
export function isBuiltPage(dir: string): boolean {
  return existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'assets'));
}

/** Vite from this package's own dependencies, or null when it is not installed. */
async function loadVite(): Promise<ViteBuild | null> {
  try {
    return (await import('vite')).build as unknown as ViteBuild;
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') return null;
    throw e;
  }
}

/** This package's search: `dist/viewer/page` beside the compiled code or in the checkout, then `src/viewer/page`. */
export function defaultPageSearch(): PageSearch {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const root = resolve(here, '../../..');
  const source = resolve(root, 'src/viewer/page');
  return {
    built: [...new Set([resolve(here, '../page'), resolve(root, 'dist/viewer/page')])].filter((d) => d !== source),
    source: existsSync(join(source, 'vite.config.ts')) ? source : null,
    // Inside the checkout, never a shared temporary directory: a page planted there by another
    // user would run with the viewer's access key.
    cacheDir: resolve(root, 'node_modules/.cache/polyloop-viewer'),
    vite: loadVite,
  };
}

/** A digest of every file of the page's sources (names and bytes), naming its build in the cache. */
async function sourceDigest(source: string): Promise<string> {
  const hash = createHash('sha256');
  for (const name of (await readdir(source, { recursive: true })).sort()) {
    const file = join(source, name);
    if ((await lstat(file)).isFile())
      hash
        .update(`${name}\0`)
        .update(await readFile(file))
        .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The directory of the page to serve: a built one, else one built now from the sources (kept in
 * the cache for the next start), else a {@link ViewerRefusedError} that says what to run.
 */
export async function viewerPage(search: PageSearch = defaultPageSearch()): Promise<string> {
  const built = search.built.find(isBuiltPage);
  if (built !== undefined) return built;
  const build = search.source === null ? null : await search.vite();
  if (search.source === null || build === null) {
    const why =
      search.source === null ? 'its sources are not here either' : 'vite, which would build it now, is not installed';
    throw new ViewerRefusedError(
      `the viewer page is not built: run \`npm run build\` in the polyloop checkout (${why})`,
    );
  }
  const target = join(search.cacheDir, await sourceDigest(search.source));
  if (isBuiltPage(target)) return target;
  // Built aside, then renamed into place: a viewer starting at the same moment never serves half a build.
  const aside = `${target}.${process.pid}-${randomBytes(4).toString('hex')}`;
  await mkdir(search.cacheDir, { recursive: true });
  try {
    const configFile = join(search.source, 'vite.config.ts');
    await build({ configFile, logLevel: 'warn', build: { outDir: aside, emptyOutDir: true } });
    await rename(aside, target).catch((e: unknown) => {
      if (!isBuiltPage(target)) throw e; // another viewer put the same build there first
    });
  } finally {
    await rm(aside, { recursive: true, force: true });
  }
  if (!isBuiltPage(target)) {
    throw new ViewerRefusedError(`building the viewer page into ${target} left no index.html and assets/`);
  }
  return target;
}
