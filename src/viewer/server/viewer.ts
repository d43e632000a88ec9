/**
 * The run viewer's server: the page built into `dist/viewer/page/` and its read API, over a
 * FileStore directory or a PolyLoop Worker, on loopback unless asked otherwise. `polyloop view`
 * (src/cli/view-command.ts) parses its arguments and starts it through {@link openViewSource} and
 * {@link startViewer}; this module knows nothing of the command line.
 * @module
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { isIP } from 'node:net';
import { getRequestListener } from '@hono/node-server';
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
  /**
   * The built page (default: `dist/viewer/page/` of this package; in a checkout without it, one built now with Vite).
   */
  readonly pageDir?: string;
  /** The access key (default: a fresh random one): 16 to 200 URL-safe characters (`[A-Za-z0-9_-]`). */
  readonly key?: string;
};

/** A running viewer: the URL to open (its access key in the fragment, `/#key=…`) and how to stop it. */
export type RunningViewer = {
  readonly url: string;
  readonly origin: string;
  readonly key: string;
  readonly server: Server;
  close(): Promise<void>;
};

export { ViewerRefusedError } from './view-source.ts';
export { loadAgentModule } from './view-agent.ts';

/** Whether `host` names this machine's loopback interface only. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** The built page: `dist/viewer/page` beside the compiled code, or the checkout's; null when not built. */
export function defaultPageDir(): string | null {
  return defaultPageSearch().built.find(isBuiltPage) ?? null;
}

/** Serve the viewer; resolves once it listens. */
export async function startViewer(opts: ViewerOptions): Promise<RunningViewer> {
  const host = opts.host ?? '127.0.0.1';
  const remote = !isLoopback(host);
  if (remote && opts.allowRemote !== true) {
    throw new ViewerRefusedError(
      `refusing to serve runs on ${host}, which other machines may reach: ` +
        'pass --allow-remote (allowRemote: true) if you mean it',
    );
  }
  // A checkout without a build gets its page built now (or a refusal saying what to run), never the TypeScript source.
  const pageDir = opts.pageDir ?? (await viewerPage());
  const key = opts.key ?? newAccessKey();
  // The page sends it as a bearer token: characters a header or a fragment would mangle never match.
  if (!/^[\w-]{16,200}$/.test(key))
    throw new ViewerRefusedError('the access key must be 16 to 200 characters of A-Z, a-z, 0-9, _ and -');
  let port = 0;
  const shown = host.includes(':') ? `[${host}]` : host;
  // A rebinding page reaches a loopback server under a foreign Host: only this server's own names
  // are answered. Bound for other machines, the Host cannot be known in advance; the key guards.
  const hosts = (): readonly string[] | null =>
    remote ? null : [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${shown}:${port}`];
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

/**
 * Where the viewer reads runs: a FileStore directory (replies carried out by the agent the module
 * at `agentModule` exports, or read only without one) or a PolyLoop Worker with its token.
 */
export type ViewSourceOptions =
  | { readonly dir: string; readonly agentModule?: string }
  | { readonly url: string; readonly token: string };

/**
 * The source {@link startViewer} serves. Rejects with `MissingDirectoryError` (code
 * `missing_directory`) for a directory that is not there, and `ViewerRefusedError` for an agent
 * module or a Worker address it will not use.
 */
export async function openViewSource(opts: ViewSourceOptions): Promise<ViewSource> {
  if ('url' in opts) return workerSource({ url: opts.url, token: opts.token });
  if (opts.agentModule === undefined) return dirSource({ dir: opts.dir });
  return dirSource({ dir: opts.dir, agent: await loadAgentModule(opts.agentModule) });
}
