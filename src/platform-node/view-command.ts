/**
 * `polyloop view`: serve the run viewer (the page built into `dist/viewer/` and its read API)
 * over a FileStore directory or a PolyLoop Worker, on loopback unless asked otherwise.
 * @module
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { isIP } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { MissingDirectoryError } from './inspect.ts';
import { EXIT, oneLine } from './render.ts';
import type { CliIo } from './render.ts';
import { loadAgentModule } from './view-agent.ts';
import { createViewApp, newAccessKey } from './view-app.ts';
import { dirSource } from './view-dir.ts';
import { defaultPageSearch, isBuiltPage, viewerPage } from './view-page.ts';
import { ViewerRefusedError } from './view-source.ts';
import type { ViewSource } from './view-source.ts';
import { workerSource } from './view-worker.ts';

/** Options of {@link startViewer}. */
export type ViewerOptions = {
  readonly source: ViewSource;
  /** Address to bind (default `127.0.0.1`). Anything but loopback needs `allowRemote`. */
  readonly host?: string;
  /** Port (default 0: a free one). */
  readonly port?: number;
  /** Serve on a non-loopback address: anyone who can reach it and has the key can read runs and answer them. */
  readonly allowRemote?: boolean;
  /** The built page (default: `dist/viewer/` of this package; in a checkout without it, one built now with Vite). */
  readonly pageDir?: string;
  /** The access key (default: a fresh random one): 16 to 200 URL-safe characters (`[A-Za-z0-9_-]`). */
  readonly key?: string;
};

/** A running viewer: the URL to open (its access key in the fragment, `/#key=…`) and how to stop it. */
export type RunningViewer = { readonly url: string; readonly origin: string; readonly key: string; readonly server: Server; close(): Promise<void> };

export { ViewerRefusedError } from './view-source.ts';
export { loadAgentModule } from './view-agent.ts';

/** Whether `host` names this machine's loopback interface only. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** The built page: `dist/viewer` beside the compiled code, or the checkout's; null when not built. */
export function defaultPageDir(): string | null {
  return defaultPageSearch().built.find(isBuiltPage) ?? null;
}

/** Serve the viewer; resolves once it listens. */
export async function startViewer(opts: ViewerOptions): Promise<RunningViewer> {
  const host = opts.host ?? '127.0.0.1';
  const remote = !isLoopback(host);
  if (remote && opts.allowRemote !== true) {
    throw new ViewerRefusedError(`refusing to serve runs on ${host}, which other machines may reach: pass --allow-remote (allowRemote: true) if you mean it`);
  }
  // A checkout without a build gets its page built now (or a refusal saying what to run), never the TypeScript source.
  const pageDir = opts.pageDir ?? (await viewerPage());
  const key = opts.key ?? newAccessKey();
  // The page sends it as a bearer token: characters a header or a fragment would mangle never match.
  if (!/^[\w-]{16,200}$/.test(key)) throw new ViewerRefusedError('the access key must be 16 to 200 characters of A-Z, a-z, 0-9, _ and -');
  let port = 0;
  const shown = host.includes(':') ? `[${host}]` : host;
  // A rebinding page reaches a loopback server under a foreign Host: only this server's own names
  // are answered. Bound for other machines, the Host cannot be known in advance; the key guards.
  const hosts = (): readonly string[] | null => (remote ? null : [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${shown}:${port}`]);
  const app = createViewApp({ source: opts.source, pageDir, key, hosts });
  const server = createServer(getRequestListener(app.fetch));
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? 0, host, () => ok());
  });
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : 0;
  const origin = `http://${shown}:${port}`;
  return {
    // In the fragment: never sent to a server, so never in a request line, an access log or a
    // Referer; the page moves it into its own storage and out of the address bar.
    url: `${origin}/#key=${key}`,
    origin,
    key,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
      await opts.source.close?.();
    },
  };
}

const VIEW_USAGE = `usage:
  polyloop view <dir> [--agent <module>] [--port <n>] [--host <addr> [--allow-remote]]
  polyloop view --url <worker-url> --token <token> [--port <n>] [--host <addr> [--allow-remote]]`;

type ViewArgs = { dir: string | null; url: string | null; token: string | null; agent: string | null; host: string | null; port: number | null; allowRemote: boolean };

/** Parse `polyloop view` arguments; a string is the usage problem. */
export function parseViewArgs(argv: readonly string[]): ViewArgs | string {
  const a: ViewArgs = { dir: null, url: null, token: null, agent: null, host: null, port: null, allowRemote: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = (): string | null => argv[++i] ?? null;
    if (arg === '--allow-remote') a.allowRemote = true;
    else if (['--url', '--token', '--agent', '--host', '--port'].includes(arg)) {
      const v = value();
      if (v === null) return `${arg} needs a value`;
      if (arg === '--port') {
        if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) return `--port must be 0-65535, not ${v}`;
        a.port = Number(v);
      } else a[arg.slice(2) as 'url' | 'token' | 'agent' | 'host'] = v;
    } else if (arg.startsWith('-')) return `unknown option ${arg}`;
    else if (a.dir === null) a.dir = arg;
    else return `unexpected argument ${arg}`;
  }
  if ((a.dir === null) === (a.url === null)) return 'give a directory or --url (one of them)';
  if (a.url !== null && (a.token === null || a.token === '')) return '--url needs --token (the Worker refuses every request without it)';
  if (a.url !== null && a.agent !== null) return '--agent is for a directory: a Worker carries out replies with its own agent';
  if (a.url !== null && !/^https?:\/\//.test(a.url)) return `--url must be an http(s) URL, not ${a.url}`;
  return a;
}

/**
 * `polyloop view …`: start the viewer, print its URL, and serve until SIGINT or SIGTERM
 * (`untilStopped` replaces waiting for a signal in tests). Resolves with the exit code.
 */
export async function viewCommand(argv: readonly string[], io: CliIo, untilStopped?: (viewer: RunningViewer) => Promise<void>): Promise<number> {
  const args = parseViewArgs(argv);
  if (typeof args === 'string') {
    io.err(`polyloop: ${oneLine(args)}\n${VIEW_USAGE}\n`);
    return EXIT.usage;
  }
  let viewer: RunningViewer;
  try {
    const source = args.url !== null ? workerSource({ url: args.url, token: args.token as string }) : await dirSource(args.agent === null ? { dir: args.dir as string } : { dir: args.dir as string, agent: await loadAgentModule(args.agent) });
    viewer = await startViewer({ source, ...(args.host === null ? {} : { host: args.host }), ...(args.port === null ? {} : { port: args.port }), allowRemote: args.allowRemote });
  } catch (e) {
    io.err(oneLine(`polyloop: ${e instanceof Error ? e.message : String(e)}`) + '\n');
    return e instanceof MissingDirectoryError ? EXIT.notFound : EXIT.usage;
  }
  const what = args.url !== null ? `the Worker at ${args.url}` : `${args.dir}${args.agent === null ? ' (read only: no --agent)' : ` with the agent in ${args.agent}`}`;
  io.out(`polyloop view: ${oneLine(what)}\n  open ${viewer.url}\n  (Ctrl-C stops it)\n`);
  await (untilStopped ?? untilSignal)(viewer);
  await viewer.close();
  return EXIT.ok;
}

function untilSignal(): Promise<void> {
  return new Promise((ok) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      ok();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
