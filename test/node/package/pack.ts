/**
 * The package as `npm pack` makes it — and so as a tarball or a git install gets it: `prepack`
 * builds `dist/` — and an empty ESM project (`npm init -y`, `"type": "module"`) that installs it.
 * Shared by the package tests and the newcomer check.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** What `npm pack` and its `prepack` build read from a checkout. */
const PACK_INPUTS = [
  'package.json',
  'README.md',
  'bin',
  'src',
  'tsconfig.base.json',
  'tsconfig.build.json',
  'tsconfig.build-node.json',
  'tsconfig.build-workers.json',
];

/**
 * `npm pack` of the checkout at `root`, its `prepack` included, into `outDir`; returns the tarball's
 * path. `stage: true` packs a copy (node_modules linked), so the checkout's own `dist/` — which the
 * CLI launcher prefers, and parallel tests use — is never removed and rebuilt under them.
 */
export async function npmPack(root: string, outDir: string, opts: { readonly stage: boolean }): Promise<string> {
  let dir = root;
  if (opts.stage) {
    dir = mkdtempSync(join(tmpdir(), 'polyloop-stage-'));
    for (const f of PACK_INPUTS) cpSync(resolve(root, f), join(dir, f), { recursive: true });
    symlinkSync(resolve(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  }
  mkdirSync(outDir, { recursive: true });
  let stdout: string;
  try {
    ({ stdout } = await exec('npm', ['pack', '--json', '--pack-destination', outDir], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    }));
  } finally {
    if (opts.stage) rmSync(dir, { recursive: true, force: true });
  }
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string }[];
  if (info === undefined) throw new Error(`npm pack printed no file: ${stdout}`);
  return join(outDir, info.filename);
}

/**
 * A new project as a newcomer makes one — `npm init -y`, then `"type": "module"` so top-level
 * await works — with the tarball installed from the npm cache (the registry only for what the
 * cache lacks). Returns its directory.
 */
export async function emptyProjectWith(tarball: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'polyloop-user-'));
  await exec('npm', ['init', '-y'], { cwd: dir });
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, type: 'module' }, null, 2));
  await exec('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir });
  return dir;
}

/**
 * Copies `file` into the project `dir` and runs it there with `node`; resolves with its stdout.
 * Copied, because Node resolves `polyloop` from the importing file's folder, not from the cwd.
 */
export async function nodeIn(dir: string, file: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const target = join(dir, basename(file));
  cpSync(file, target);
  const { stdout } = await exec('node', [target], { cwd: dir, env, timeout: 60_000 });
  return stdout;
}
