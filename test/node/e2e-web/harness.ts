/**
 * Harness of the web end-to-end test: builds examples/web with Vite (and the quota page with
 * esbuild), serves the output on 127.0.0.1 and launches Debian's Chromium with playwright-core.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';
import { build as esbuild } from 'esbuild';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { createServer as viteServer, build as viteBuild } from 'vite';

const ROOT = resolve(import.meta.dirname, '../../..');

/**
 * Headless Chromium in a container (no sandbox, no GPU, no /dev/shm, nothing fetched in the
 * background), plus no timer throttling for hidden tabs.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
];

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
};

/** The built example and quota page, served; close it when done. */
export type Served = { readonly origin: string; readonly browser: Browser; close(): Promise<void> };

async function buildInto(dir: string): Promise<void> {
  await viteBuild({
    configFile: join(ROOT, 'examples/web/vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: dir, emptyOutDir: true },
  });
  await esbuild({
    entryPoints: [join(ROOT, 'test/node/e2e-web/quota-page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    outfile: join(dir, 'quota.js'),
    logLevel: 'warning',
  });
  await writeFile(
    join(dir, 'quota.html'),
    '<!doctype html><meta charset="utf-8"><body><script type="module" src="/quota.js"></script></body>',
  );
}

/** Serve the files of `dir` on 127.0.0.1 (a free port). */
export function serve(dir: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const file = join(dir, path === '/' ? 'index.html' : path);
    readFile(file).then(
      (body) => {
        res.writeHead(200, {
          'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
          'cache-control': 'no-store',
        });
        res.end(body);
      },
      () => {
        res.writeHead(404);
        res.end('not found');
      },
    );
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

/** Debian's Chromium (or `CHROMIUM_PATH`), headless, with {@link CHROMIUM_ARGS}. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    throw new Error(
      `no Chromium at ${executablePath}: run \`apt-get install -y chromium\` (Debian) or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

/** Build, serve and launch. */
export function startServed(): Promise<Served> {
  return servedFrom('polyloop-web-e2e-', buildInto);
}

/**
 * A one-page site for a test's own page module: `entry` bundled with esbuild as `page.js` under an
 * `index.html` that loads it, served and opened in Chromium (each test's tabs share its context).
 */
export function startBundledPage(entry: string, prefix: string): Promise<Served> {
  return servedFrom(prefix, async (dir) => {
    await esbuild({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      outfile: join(dir, 'page.js'),
      logLevel: 'warning',
    });
    await writeFile(
      join(dir, 'index.html'),
      '<!doctype html><meta charset="utf-8"><script type="module" src="/page.js"></script>',
    );
  });
}

/** A fresh folder filled by `fill`, served on loopback, and a Chromium; `close` undoes all three. */
async function servedFrom(prefix: string, fill: (dir: string) => Promise<void>): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await fill(dir);
  const server = await serve(dir);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const browser = await launchChromium();
  return {
    origin: `http://127.0.0.1:${port}`,
    browser,
    async close() {
      await browser.close();
      await new Promise((ok) => server.close(ok));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** What a page reported: `state=…`, `phase=…`, `resumed=…`, in order, across reloads. */
export type PageLog = {
  readonly entries: readonly string[];
  /** Resolves when `entry` is reported at or after position `since` (default: any time). */
  until(entry: string, opts?: { readonly since?: number; readonly timeoutMs?: number }): Promise<void>;
};

/**
 * Have a page push every change of its `data-state`, `data-phase` and `data-resumed` to the test
 * (a binding plus a MutationObserver installed before the page's own scripts, on every load):
 * no polling in the page, so a phase that lasts a few hundred milliseconds is never missed.
 */
export async function trackPage(page: Page): Promise<PageLog> {
  const entries: string[] = [];
  const waiters = new Set<() => void>();
  await page.exposeBinding('polyloopTrack', (_source, entry: string) => {
    entries.push(entry);
    for (const w of waiters) w();
  });
  await page.addInitScript(() => {
    const report = (globalThis as unknown as { polyloopTrack: (e: string) => void }).polyloopTrack;
    new MutationObserver((records) => {
      for (const r of records) {
        const name = r.attributeName ?? '';
        const value = (r.target as HTMLElement).getAttribute(name);
        if (value !== null) void report(`${name.slice(5)}=${value}`);
      }
    }).observe(document, {
      attributes: true,
      subtree: true,
      attributeFilter: ['data-state', 'data-phase', 'data-resumed'],
    });
  });
  return {
    entries,
    until(entry, opts = {}) {
      const since = opts.since ?? 0;
      const found = (): boolean => entries.indexOf(entry, since) >= 0;
      if (found()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`page never reported ${entry}; it reported: ${entries.slice(since).join(', ')}`));
        }, opts.timeoutMs ?? 30_000);
        const check = (): void => {
          if (!found()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
  };
}

/** The example under the Vite dev server, `/worker/*` proxied to `workerURL` (its `server.proxy`, as `npm run example:web` runs it). */
export type DevServed = { readonly origin: string; readonly browser: Browser; close(): Promise<void> };

/** Serve examples/web with the Vite dev server (a free port), proxying `/worker` to `workerURL`, and launch Chromium. */
export async function startDevServed(workerURL: string): Promise<DevServed> {
  // Only the proxy target changes: the rest of `server.proxy['/worker']` (the path rewrite) is the example's own.
  const server = await viteServer({
    configFile: join(ROOT, 'examples/web/vite.config.ts'),
    logLevel: 'warn',
    server: { port: 0, strictPort: true, proxy: { '/worker/': { target: workerURL } } },
  });
  await server.listen();
  const address = server.httpServer?.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const browser = await launchChromium();
  return {
    origin: `http://127.0.0.1:${port}`,
    browser,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
