/**
 * The user's agent module of `polyloop view --agent <module>` (decision 0039): JavaScript is
 * imported as it is; TypeScript (`.ts`, `.mts`, `.cts`, `.tsx`) through the tsx of the user's
 * project when it resolves there, else by Node's own type stripping when this Node has it, else
 * refused with what to do instead (decision 0054).
 * @module
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AgentFactory } from './view-dir.ts';
import { ViewerRefusedError } from './view-source.ts';

/** tsx's `tsImport`: import a module through tsx without registering it for the whole process. */
type TsImport = (specifier: string, parentURL: string) => Promise<unknown>;

const TYPESCRIPT = /\.(?:[cm]?ts|tsx)$/i;

/**
 * The ES module file of tsx's `tsx/esm/api` as resolved from `dir`, or null. Read from tsx's
 * `exports` by hand: a resolve from another directory only has `require`'s conditions, and the
 * CommonJS build of that API registers its loader at a path that does not exist.
 */
async function tsxApiFrom(dir: string): Promise<string | null> {
  let manifest: string;
  try {
    manifest = createRequire(join(dir, 'noop.js')).resolve('tsx/package.json');
  } catch {
    return null;
  }
  const pkg = JSON.parse(await readFile(manifest, 'utf8')) as { exports?: Record<string, unknown> };
  const entry = pkg.exports?.['./esm/api'] as { import?: string | { default?: string } } | undefined;
  const file = typeof entry?.import === 'string' ? entry.import : entry?.import?.default;
  return typeof file === 'string' ? resolve(dirname(manifest), file) : null;
}

/** tsx's `tsImport` from the first of `dirs` that has it (the module's directory, the working directory, this package). */
async function findTsImport(dirs: readonly string[]): Promise<TsImport | null> {
  for (const dir of dirs) {
    const file = await tsxApiFrom(dir);
    if (file === null) continue;
    const api = (await import(pathToFileURL(file).href)) as { tsImport?: unknown };
    if (typeof api.tsImport === 'function') return api.tsImport as TsImport;
  }
  return null;
}

/** Whether this Node loads TypeScript by itself (type stripping: Node 22.6 behind a flag, 23.6 by default). */
function nodeStripsTypes(): boolean {
  return Boolean((process.features as { typescript?: unknown }).typescript);
}

/** Import `file`, through tsx or Node's type stripping when it is TypeScript. */
async function importModule(file: string): Promise<unknown> {
  const url = pathToFileURL(resolve(file)).href;
  if (!TYPESCRIPT.test(file)) return import(url);
  const here = dirname(fileURLToPath(import.meta.url));
  const tsImport = await findTsImport([dirname(resolve(file)), process.cwd(), here]);
  if (tsImport !== null) return tsImport(url, import.meta.url);
  if (nodeStripsTypes()) return import(url);
  throw new ViewerRefusedError(
    `${file} is TypeScript, and neither tsx (from its project) nor this Node (${process.version}) can load it: ` +
      'install tsx (`npm i -D tsx`) or point --agent at a .js/.mjs build',
  );
}

/** Load the user's agent module: its default export (or `agent` export) must be a function of `{ runId, dir }`. */
export async function loadAgentModule(file: string): Promise<AgentFactory> {
  const mod = (await importModule(file)) as { default?: unknown; agent?: unknown };
  const factory = mod.default ?? mod.agent;
  if (typeof factory !== 'function') {
    throw new ViewerRefusedError(`${file} must export a default function ({ runId, dir }) => ({ agent, request })`);
  }
  return factory as AgentFactory;
}
