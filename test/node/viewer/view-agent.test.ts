/**
 * `polyloop view --agent <module>` with a TypeScript module, as the installed package runs it:
 * plain Node (no vitest, no tsx around the CLI), the viewer's code bundled outside any project.
 * With tsx in the user's project the module loads; without it the refusal says what to do.
 */
import { spawn } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import type { BuildOptions, PluginBuild } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTempDirs } from '../../support/temp-dir.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
let tmp: string;
let runner: string;

/** An agent module in TypeScript: types, an interface and `satisfies`, which plain Node 20 cannot load. */
const AGENT = `interface Ctx { readonly runId: string; readonly dir: string }
const kind: string = 'typed';
export default ({ runId, dir }: Ctx) => ({ kind, runId, dir } satisfies Record<string, string>);
`;

const dirs = sharedTempDirs();

beforeAll(async () => {
  tmp = await dirs.make('polyloop-view-agent-');
  // The CLI's viewer code as one plain ES module, far from this checkout's node_modules (and its tsx).
  await build({
    entryPoints: [join(ROOT, 'src/viewer/server/viewer.ts')],
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
  await writeFile(
    runner,
    `import { loadAgentModule } from './view-command.mjs';
try {
  const factory = await loadAgentModule(process.argv[2]);
  console.log(JSON.stringify(await factory({ runId: 'r-1', dir: 'runs' })));
} catch (e) {
  console.log('refused: ' + (e instanceof Error ? e.message : String(e)));
}
`,
  );
}, 60_000);

/** A user's project: the agent module, with or without tsx in its node_modules. */
async function project(name: string, file: string, tsx: boolean): Promise<string> {
  const dir = join(tmp, name);
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, type: 'module' }));
  if (tsx) await symlink(join(ROOT, 'node_modules/tsx'), join(dir, 'node_modules/tsx'), 'dir');
  await writeFile(join(dir, file), AGENT);
  return dir;
}

function load(cwd: string, file: string, args: readonly string[] = [runner]): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [...args, file], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', () => (out === '' ? fail(new Error(`no output; stderr: ${err}`)) : ok(out.trim())));
  });
}

/** Imports of the core from the rest of the package go to the package's own entry, as in its build. */
const coreExternal = {
  name: 'core-external',
  setup: (b: PluginBuild) =>
    b.onResolve({ filter: /\/core\/index\.ts$/ }, () => ({ path: 'polyloop', external: true })),
};

/** An agent in TypeScript that imports the package by name: it awaits approval of `send`, then answers. */
const TYPED_AGENT = `import { defineAgent, jsonActionInterpreter, silentSink, ToolRegistry } from 'polyloop';
import { STANDARD_SYNTHETIC_OBSERVATIONS as syntheticObservations } from 'polyloop';
import { FileStore } from 'polyloop/node';
const tools: ToolRegistry = ToolRegistry.of([{ name: 'send', description: 'Send.', replayPolicy: 'never',
  needsApproval: true, parameters: { type: 'object', properties: {} }, handler: async () => 'sent' }]);
const say = (n: number, body: unknown) => ({ callId: 'c' + n, text: JSON.stringify(body), reasoning: null });
const call = async (c: { callSeq: number }) =>
  c.callSeq === 0 ? say(0, { tool: 'send', args: {} }) : say(1, { final: 'done' });
const model = { params: { model: 'fixed' }, call };
const budget = { maxSteps: 5, maxValidActions: 5, maxContextChars: 100000 };
export default defineAgent({ model, interpreter: jsonActionInterpreter(), store: new FileStore({ dir: 'runs' }),
  events: silentSink(), syntheticObservations, defaults: { tools, executor: tools.executor(), injections: {},
  modelBinding: {}, budget, modelReplayPolicy: 'safe', observationTemplate: '{observation}',
  toolRenderStyle: 'none', cancelGraceMs: 1000 } });
`;

/** Starts a run with the module's agent, answers its approval through the viewer's source, prints where it ended. */
const RUNNER = `import { readRunLog, run } from 'polyloop';
import { dirSource, loadAgentModule } from 'polyloop/viewer';
const agent = await loadAgentModule('./agent.ts');
await run(agent, { runId: 'r-1', goal: 'send it' });
const source = await dirSource({ dir: 'runs', agent });
const answer = await source.answer('r-1', { kind: 'approve', resultId: 's0.input' });
let view = readRunLog(await agent.store.readLog('r-1'));
for (let i = 0; i < 200 && answer.status === 202 && view.state !== 'ended'; i++) {
  await new Promise((ok) => setTimeout(ok, 25));
  view = readRunLog(await agent.store.readLog('r-1'));
}
console.log(JSON.stringify({ answer, state: view.state, stopReason: view.ended?.stopReason ?? null }));
`;

/**
 * A user's project with polyloop installed as a package (its core, its Node platform and the
 * viewer built as separate files, as \`npm run build\` lays them out) and tsx: the agent module
 * imports \`polyloop\` by name, as the viewer does.
 */
async function installedProject(): Promise<string> {
  const dir = join(tmp, 'installed');
  const pkg = join(dir, 'node_modules/polyloop');
  await mkdir(join(dir, 'runs'), { recursive: true });
  await mkdir(pkg, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'installed', type: 'module' }));
  await symlink(join(ROOT, 'node_modules/tsx'), join(dir, 'node_modules/tsx'), 'dir');
  const exports = { '.': './core.mjs', './node': './node.mjs', './viewer': './viewer.mjs' };
  await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'polyloop', type: 'module', exports }));
  const common: BuildOptions = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['vite'],
    logLevel: 'warning',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  };
  await build({ ...common, entryPoints: [join(ROOT, 'src/core/index.ts')], outfile: join(pkg, 'core.mjs') });
  const nodeEntry = join(ROOT, 'src/platform-node/index.ts');
  await build({ ...common, entryPoints: [nodeEntry], outfile: join(pkg, 'node.mjs'), plugins: [coreExternal] });
  const viewer = `export { loadAgentModule } from './view-agent.ts';\nexport { dirSource } from './view-dir.ts';\n`;
  const stdin = { contents: viewer, resolveDir: join(ROOT, 'src/viewer/server'), loader: 'ts' } as const;
  await build({ ...common, stdin, outfile: join(pkg, 'viewer.mjs'), plugins: [coreExternal] });
  await writeFile(join(dir, 'agent.ts'), TYPED_AGENT);
  await writeFile(join(dir, 'runner.mjs'), RUNNER);
  return dir;
}

const nodeStripsTypes = Boolean((process.features as { typescript?: unknown }).typescript);

describe('a TypeScript --agent module', () => {
  it.each(['agent.mts', 'agent.ts'])(
    "loads %s through the tsx of the user's project",
    async (file) => {
      const dir = await project(`with-tsx-${file.replace('.', '-')}`, file, true);
      expect(JSON.parse(await load(dir, `./${file}`))).toEqual({ kind: 'typed', runId: 'r-1', dir: 'runs' });
    },
    30_000,
  );

  it('without tsx (and a Node that cannot strip types) is refused with what to run instead', async () => {
    const dir = await project('without-tsx', 'agent.mts', false);
    const out = await load(dir, './agent.mts');
    if (nodeStripsTypes) expect(JSON.parse(out)).toEqual({ kind: 'typed', runId: 'r-1', dir: 'runs' });
    else {
      expect(out).toMatch(/^refused: \.\/agent\.mts is TypeScript/);
      expect(out).toContain('install tsx (`npm i -D tsx`) or point --agent at a .js/.mjs build');
    }
  }, 30_000);

  it("that exports the agent carries out a reply with the installed package's own classes (one copy of polyloop, not two)", async () => {
    const dir = await installedProject();
    type Out = { answer: { status: number; message: string }; state: string; stopReason: string | null };
    const out = JSON.parse(await load(dir, './runner.mjs', [])) as Out;
    expect(out.answer).toMatchObject({ status: 202 });
    expect(out).toMatchObject({ state: 'ended', stopReason: 'final_answer' });
  }, 60_000);

  it('loads a plain .mjs module as before, without tsx', async () => {
    const dir = join(tmp, 'plain');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'agent.mjs'), 'export default ({ runId, dir }) => ({ kind: "plain", runId, dir });\n');
    expect(JSON.parse(await load(dir, './agent.mjs'))).toEqual({ kind: 'plain', runId: 'r-1', dir: 'runs' });
  }, 30_000);
});
