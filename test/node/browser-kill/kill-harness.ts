/**
 * Harness of the browser-kill suite: bundles the kill page, serves it on 127.0.0.1 together with
 * the endpoints that stand for the world outside the browser (side effects, write
 * acknowledgements, reports, and `/settle`: did this side effect happen?), and starts / SIGKILLs Debian's Chromium on a persistent profile.
 * Chromium is spawned directly (not through Playwright) so the test holds the real browser pid and
 * its process group, and nothing but the page itself drives the run after a relaunch.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { build as esbuild } from 'esbuild';
import { CHROMIUM_ARGS } from '../e2e-web/harness.ts';

/** One message the page sent to the server, stamped on arrival (`performance.now()`). */
export type Message = {
  readonly path: '/effect' | '/ack' | '/report' | '/settle';
  readonly runId: string;
  readonly launch: number;
  readonly at: number;
  readonly body: Readonly<Record<string, unknown>>;
};

/** The page, served, and everything it told the server. */
export type KillServer = {
  readonly origin: string;
  readonly messages: readonly Message[];
  /** Messages of one run (optionally one launch), in arrival order. */
  of(runId: string, launch?: number): Message[];
  /**
   * Resolves with the first message matching `pred` (already received or still to come); rejects
   * after `timeoutMs`, or with `signal.reason` when the caller stops waiting.
   */
  until(pred: (m: Message) => boolean, timeoutMs: number, what: string, signal?: AbortSignal): Promise<Message>;
  /** Called synchronously on every message, before the server answers it (a kill trigger). */
  onMessage: ((m: Message) => void) | null;
  close(): Promise<void>;
};

const PAGE =
  '<!doctype html><meta charset="utf-8"><title>browser kill</title><script type="module" src="/page.js"></script>';

async function buildPage(dir: string): Promise<void> {
  await esbuild({
    entryPoints: [join(import.meta.dirname, 'kill-page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outfile: join(dir, 'page.js'),
    logLevel: 'warning',
  });
  await writeFile(join(dir, 'index.html'), PAGE);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok, fail) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => ok(text));
    // A browser killed mid-request leaves an incomplete body: that message never happened.
    req.on('close', () => {
      if (!req.complete) fail(new Error('request cut short'));
    });
    req.on('error', fail);
  });
}

/** Bundle the page and serve it with the outside-world endpoints; close it when done. */
export async function startKillServer(): Promise<KillServer> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-browser-kill-page-'));
  await buildPage(dir);
  const files: Record<string, { type: string; body: Buffer }> = {
    '/': { type: 'text/html', body: await readFile(join(dir, 'index.html')) },
    '/page.js': { type: 'text/javascript', body: await readFile(join(dir, 'page.js')) },
  };
  const messages: Message[] = [];
  const waiters = new Set<() => void>();
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'POST' && (path === '/effect' || path === '/ack' || path === '/report' || path === '/settle')) {
      const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
      const m: Message = {
        path,
        runId: String(body['runId']),
        launch: Number(body['launch']),
        at: performance.now(),
        body,
      };
      // Asked to settle an action in doubt, the outside world answers from its own record of side effects.
      const happened =
        path === '/settle'
          ? messages.some(
              (e) =>
                e.path === '/effect' &&
                e.runId === m.runId &&
                e.body['tool'] === body['tool'] &&
                isDeepStrictEqual(e.body['args'], body['args']),
            )
          : null;
      messages.push(happened === null ? m : { ...m, body: { ...body, happened } });
      server.onMessage?.(m);
      for (const w of waiters) w();
      if (happened !== null)
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ happened }));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    const file = req.method === 'GET' ? files[path] : undefined;
    if (!file) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body);
  };
  const http: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(400);
      res.end();
    });
  });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const server: KillServer = {
    origin: `http://127.0.0.1:${port}`,
    messages,
    onMessage: null,
    of: (runId, launch) => messages.filter((m) => m.runId === runId && (launch === undefined || m.launch === launch)),
    until(pred, timeoutMs, what, signal) {
      const hit = messages.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((ok, fail) => {
        const settle = (how: () => void): void => {
          clearTimeout(timer);
          waiters.delete(check);
          signal?.removeEventListener('abort', stop);
          how();
        };
        const check = (): void => {
          const found = messages.find(pred);
          if (found) settle(() => ok(found));
        };
        const stop = (): void => settle(() => fail(signal?.reason));
        const timer = setTimeout(
          () => settle(() => fail(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))),
          timeoutMs,
        );
        waiters.add(check);
        signal?.addEventListener('abort', stop, { once: true });
      });
    },
    async close() {
      http.closeAllConnections();
      await new Promise((ok) => http.close(ok));
      await rm(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A Chromium we started: its pid leads its own process group. */
export type Browser = {
  readonly pid: number;
  readonly profile: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
};

/** Debian's Chromium (or `CHROMIUM_PATH`), or a clear error when it is missing. */
export function chromiumPath(): string {
  const path = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
  if (!existsSync(path))
    throw new Error(`no Chromium at ${path}: run \`apt-get install -y chromium\` (Debian) or set CHROMIUM_PATH`);
  return path;
}

/** Process groups of browsers still running, killed if this process exits before its cleanup. */
const live = new Set<number>();
process.once('exit', () => {
  // A detached browser outlives its parent: never leave one behind (exit handlers must be sync).
  for (const pgid of live) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
});

/**
 * Start Chromium headless on `profile` (a persistent user-data-dir) with `url` as its only tab.
 * Detached, so the browser leads a process group its zygotes, renderers and the storage service
 * (where IndexedDB lives) belong to.
 */
export function launchBrowser(profile: string, url: string): Browser {
  const child = spawn(
    chromiumPath(),
    [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, '--disable-crash-reporter', url],
    { detached: true, stdio: 'ignore' },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('Chromium did not start');
  live.add(pid);
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  void exited.then(() => live.delete(pid));
  return { pid, profile, child, exited };
}

/** Pids alive (not zombies) in process group `pgid` (if > 0) or whose command line names `profile`. */
export function survivors(pgid: number, profile: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z') continue;
      if ((pgid > 0 && Number(group) === pgid) || readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(profile))
        found.push(Number(entry));
    } catch {
      // The process ended between listing /proc and reading it: not a survivor.
    }
  }
  return found;
}

/** Poll until no process of `b` is left or `ms` passed; the pids still there. */
async function drained(b: Browser, ms: number): Promise<number[]> {
  const until = performance.now() + ms;
  for (;;) {
    const left = survivors(b.pid, b.profile);
    if (left.length === 0 || performance.now() > until) return left;
    await new Promise((ok) => setTimeout(ok, 20));
  }
}

/**
 * SIGKILL the whole browser at once (its process group), then make sure no process of it is
 * left. Killed processes take a moment to be torn down after the browser itself was reaped, so
 * only a process still there after a grace period counts as a straggler; stragglers (none
 * expected) are killed one by one. Resolves with how many there were.
 */
export async function killBrowser(b: Browser): Promise<number> {
  try {
    process.kill(-b.pid, 'SIGKILL');
  } catch {
    // The group is already gone (the browser died on its own): the sweep below still checks.
  }
  await b.exited;
  const stragglers = await drained(b, 2000);
  for (const pid of stragglers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  const left = stragglers.length > 0 ? await drained(b, 5000) : [];
  if (left.length > 0) throw new Error(`Chromium processes of ${b.profile} survive SIGKILL: ${left.join(', ')}`);
  return stragglers.length;
}

/** Profiles this process made and has not removed yet (for {@link cleanUpProfiles}). */
const profiles = new Set<string>();

/** A fresh persistent profile directory. */
export async function makeProfile(): Promise<string> {
  const profile = await mkdtemp(join(tmpdir(), 'polyloop-browser-kill-profile-'));
  profiles.add(profile);
  return profile;
}

/** Remove a profile once no process of it is left. */
export async function removeProfile(profile: string): Promise<void> {
  await rm(profile, { recursive: true, force: true, maxRetries: 3 });
  profiles.delete(profile);
}

/** Browser processes still running on a profile this process made (none expected between trials). */
export function leftoverProcesses(): number[] {
  return [...profiles].flatMap((p) => survivors(0, p));
}

/**
 * Last-resort cleanup for `afterAll` and scripts: SIGKILL any process still running on a profile
 * this process made (a trial that threw half-way), then remove those profiles.
 */
export async function cleanUpProfiles(): Promise<void> {
  for (const pid of leftoverProcesses()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  await new Promise((ok) => setTimeout(ok, 200));
  for (const p of [...profiles]) await removeProfile(p);
}
