/**
 * The user's agent module of `polyloop view --agent <module>` (decisions 0039, 0060): it exports
 * the agent (or, in the older form, a function of `{ runId, dir }` giving `{ agent, request }`). JavaScript is
 * imported as it is; TypeScript (`.ts`, `.mts`, `.cts`, `.tsx`) through the tsx of the user's
 * project when it resolves there, else by Node's own type stripping when this Node has it, else
 * refused with what to do instead (decision 0054).
 * @module
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isAgentDefinition } from './view-reply.ts';
import type { ViewerAgent } from './view-reply.ts';
import { ViewerRefusedError } from './view-source.ts';

/** tsx's `register`: load TypeScript for the whole process; resolves with how to stop. */
type TsRegister = () => () => Promise<void>;

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

/**
 * tsx's `register` from the first of `dirs` that has it (the module's directory, the working
 * directory, this package).
 */
async function findTsRegister(dirs: readonly string[]): Promise<TsRegister | null> {
  for (const dir of dirs) {
    const file = await tsxApiFrom(dir);
    if (file === null) continue;
    const api = (await import(pathToFileURL(file).href)) as { register?: unknown };
    if (typeof api.register === 'function') return api.register as TsRegister;
  }
  return null;
}

let registered = false;

/** Whether this Node loads TypeScript by itself (type stripping: Node 22.6 behind a flag, 23.6 by default). */
function nodeStripsTypes(): boolean {
  return Boolean((process.features as { typescript?: unknown }).typescript);
}

/** Import `file`, through tsx or Node's type stripping when it is TypeScript. */
async function importModule(file: string): Promise<unknown> {
  const url = pathToFileURL(resolve(file)).href;
  if (!TYPESCRIPT.test(file)) return import(url);
  if (registered) return import(url);
  const here = dirname(fileURLToPath(import.meta.url));
  const register = await findTsRegister([dirname(resolve(file)), process.cwd(), here]);
  if (register !== null) {
    // For the whole process, not scoped to the module (tsx's tsImport): a scoped import loads its
    // own copy of every module it reaches, polyloop included, and the viewer's resume would not
    // know that copy's ToolRegistry. Registered, `import 'polyloop'` is the viewer's own copy.
    register();
    registered = true;
    return import(url);
  }
  if (nodeStripsTypes()) return import(url);
  throw new ViewerRefusedError(
    `${file} is TypeScript, and neither tsx (from its project) nor this Node (${process.version}) can load it: ` +
      'install tsx (`npm i -D tsx`) or point --agent at a .js/.mjs build',
  );
}

/**
 * Load the user's agent module: its default export (or `agent` export) is the agent
 * (`defineAgent`'s result), or — the older form — a function `({ runId, dir }) => ({ agent, request })`.
 */
export async function loadAgentModule(file: string): Promise<ViewerAgent> {
  type Exports = { default?: unknown; agent?: unknown } | null | undefined;
  const mod = (await importModule(file)) as Exports;
  let given = mod?.default ?? mod?.agent;
  // TypeScript outside an ES module package is loaded as CommonJS: its exports arrive as the default.
  if (typeof given === 'object' && !isAgentDefinition(given)) {
    given = (given as Exports)?.default ?? (given as Exports)?.agent ?? given;
  }
  if (typeof given === 'function' || isAgentDefinition(given)) return given as ViewerAgent;
  throw new ViewerRefusedError(
    `${file} must export the agent: export default defineAgent({ …, store: new FileStore({ dir }), ` +
      'defaults: { tools, executor: tools.executor() } }) ' +
      '(or, the older form, a function ({ runId, dir }) => ({ agent, request }))',
  );
}
