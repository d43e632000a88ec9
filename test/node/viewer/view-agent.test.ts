/**
 * `polyloop view --agent <module>` with a TypeScript module, as the installed package runs it:
 * plain Node (no vitest, no tsx around the CLI), the viewer's code bundled outside any project.
 * With tsx in the user's project the module loads; without it the refusal says what to do.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
let tmp: string;
let runner: string;

/** An agent module in TypeScript: types, an interface and `satisfies`, which plain Node 20 cannot load. */
const AGENT = `interface Ctx { readonly runId: string; readonly dir: string }
const kind: string = 'typed';
export default ({ runId, dir }: Ctx) => ({ kind, runId, dir } satisfies Record<string, string>);
`;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'polyloop-view-agent-'));
  // The CLI's viewer code as one plain ES module, far from this checkout's node_modules (and its tsx).
  await build({
    entryPoints: [join(ROOT, 'src/platform-node/view-command.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: join(tmp, 'cli/view-command.mjs'),
    external: ['vite'],
    logLevel: 'warning',
    // Bundled CommonJS dependencies call require(): an ES module has none of its own.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  runner = join(tmp, 'cli/runner.mjs');
  await writeFile(runner, `import { loadAgentModule } from './view-command.mjs';
try {
  const factory = await loadAgentModule(process.argv[2]);
  console.log(JSON.stringify(await factory({ runId: 'r-1', dir: 'runs' })));
} catch (e) {
  console.log('refused: ' + (e instanceof Error ? e.message : String(e)));
}
`);
}, 60_000);

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A user's project: the agent module, with or without tsx in its node_modules. */
async function project(name: string, file: string, tsx: boolean): Promise<string> {
  const dir = join(tmp, name);
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, type: 'module' }));
  if (tsx) await symlink(join(ROOT, 'node_modules/tsx'), join(dir, 'node_modules/tsx'), 'dir');
  await writeFile(join(dir, file), AGENT);
  return dir;
}

function load(cwd: string, file: string): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [runner, file], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', () => (out === '' ? fail(new Error(`no output; stderr: ${err}`)) : ok(out.trim())));
  });
}

const nodeStripsTypes = Boolean((process.features as { typescript?: unknown }).typescript);

describe('a TypeScript --agent module', () => {
  it.each(['agent.mts', 'agent.ts'])('loads %s through the tsx of the user\'s project', async (file) => {
    const dir = await project(`with-tsx-${file.replace('.', '-')}`, file, true);
    expect(JSON.parse(await load(dir, `./${file}`))).toEqual({ kind: 'typed', runId: 'r-1', dir: 'runs' });
  }, 30_000);

  it('without tsx (and a Node that cannot strip types) is refused with what to run instead', async () => {
    const dir = await project('without-tsx', 'agent.mts', false);
    const out = await load(dir, './agent.mts');
    if (nodeStripsTypes) expect(JSON.parse(out)).toEqual({ kind: 'typed', runId: 'r-1', dir: 'runs' });
    else {
      expect(out).toMatch(/^refused: \.\/agent\.mts is TypeScript/);
      expect(out).toContain('install tsx (`npm i -D tsx`) or point --agent at a .js/.mjs build');
    }
  }, 30_000);

  it('loads a plain .mjs module as before, without tsx', async () => {
    const dir = join(tmp, 'plain');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'agent.mjs'), 'export default ({ runId, dir }) => ({ kind: "plain", runId, dir });\n');
    expect(JSON.parse(await load(dir, './agent.mjs'))).toEqual({ kind: 'plain', runId: 'r-1', dir: 'runs' });
  }, 30_000);
});
