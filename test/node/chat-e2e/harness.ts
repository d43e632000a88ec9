/**
 * Harness of the chat end-to-end tests: the chat page bundled once per file, the Node chat
 * server of examples/node-chat as a child process (SIGKILLed and restarted on the same port and
 * directory), and what a test reads from the page: the messages as shown, the statuses it went
 * through.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { buildChatPage } from '../../../examples/web/chat/build.ts';
import type { SharedTempDirs } from '../../support/temp-dir.ts';

export const ROOT = resolve(import.meta.dirname, '../../..');

/** Bundle the page into a new temporary directory of `dirs`. */
export async function bundlePage(dirs: SharedTempDirs): Promise<string> {
  return buildChatPage(await dirs.make('polyloop-chat-page-'));
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => ok(port));
    });
  });
}

/** The Node chat server as a child process: `start` it, `kill` it (SIGKILL), start it again. */
export type NodeChat = {
  readonly origin: string;
  readonly token: string;
  /** The server's directory: runs/, sent.log. */
  readonly dir: string;
  /** Hold points: a turn waits at `text` or `send` while the file of that name exists here. */
  readonly holdDir: string;
  /** The page URL for chat `chatId`. */
  url(chatId: string): string;
  start(): Promise<void>;
  /** SIGKILL: no cleanup, no flush, the lock file left behind. */
  kill(): Promise<void>;
  /** Its output so far (stdout and stderr). */
  output(): string;
};

/** A Node chat server over fresh directories of `dirs`, serving the page bundled in `pageDir`. */
export async function nodeChat(pageDir: string, dirs: SharedTempDirs): Promise<NodeChat> {
  const dir = await dirs.make('polyloop-chat-server-');
  const holdDir = await dirs.make('polyloop-chat-hold-');
  const port = await freePort();
  const token = 'e2e-token';
  let child: ChildProcess | null = null;
  let out = '';
  const env = {
    ...process.env,
    PORT: String(port),
    CHAT_DIR: dir,
    CHAT_TOKEN: token,
    CHAT_PAGE_DIR: pageDir,
    CHAT_HOLD_DIR: holdDir,
    CHAT_DELAY_MS: '5',
  };
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    token,
    dir,
    holdDir,
    url: (chatId) => `${origin}/?api=/api/chat&token=${token}&chat=${chatId}`,
    output: () => out,
    start() {
      // node itself (not npx): the pid SIGKILLed is the one holding the turn's lock file.
      const args = ['--import', 'tsx', 'examples/node-chat/server.ts'];
      const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      return new Promise((ok, fail) => {
        const onData = (b: Buffer): void => {
          out += String(b);
          if (out.includes(`listening on ${origin}`)) ok();
        };
        proc.stdout?.on('data', onData);
        proc.stderr?.on('data', (b: Buffer) => (out += String(b)));
        proc.once('exit', (code) => fail(new Error(`the chat server exited (${code}) before listening:\n${out}`)));
      });
    },
    async kill() {
      const proc = child;
      if (proc === null || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((ok) => proc.once('exit', ok));
      proc.kill('SIGKILL');
      await exited;
      child = null;
    },
  };
}

/** A message as the page shows it: its role, its text parts, its tool parts (`name:state`), its settle parts. */
export type Shown = {
  readonly role: string;
  readonly texts: string[];
  readonly tools: string[];
  readonly settles: string[];
};

/** Every message of the page, as shown (reasoning left out). */
export function shown(page: Page): Promise<Shown[]> {
  return page.$$eval('#messages > li', (items) =>
    items.map((li) => ({
      role: li.getAttribute('data-role') ?? '',
      texts: [...li.querySelectorAll('p.text')].map((p) => p.textContent ?? ''),
      tools: [...li.querySelectorAll('.tool')].map(
        (t) => `${t.getAttribute('data-tool')}:${t.getAttribute('data-state')}`,
      ),
      settles: [...li.querySelectorAll('.settle')].map((s) => s.getAttribute('data-state') ?? ''),
    })),
  );
}

/** Resolves when the last assistant message's text parts, joined by `|`, are `expected`. */
export async function untilAssistantText(page: Page, expected: string, timeout = 20_000): Promise<void> {
  try {
    await page.waitForFunction(
      (want) => {
        const items = document.querySelectorAll('#messages > li[data-role="assistant"]');
        const last = items[items.length - 1];
        return last !== undefined && [...last.querySelectorAll('p.text')].map((p) => p.textContent).join('|') === want;
      },
      expected,
      { timeout },
    );
  } catch (e) {
    const now = JSON.stringify(await shown(page));
    const want = JSON.stringify(expected);
    throw new Error(`the last assistant message never read ${want}; the page shows ${now}`, { cause: e });
  }
}

/** Resolves when the page's chat status is `status` (`ready`, `streaming`, …). */
export async function untilStatus(page: Page, status: string): Promise<void> {
  await page.waitForSelector(`#chat[data-status="${status}"]`);
}

/**
 * Every chat status the page goes through, pushed by a MutationObserver installed before the
 * page's scripts on every load (so a short `error` is never missed).
 */
export async function trackStatus(page: Page): Promise<string[]> {
  const seen: string[] = [];
  await page.exposeBinding('chatStatus', (_source, status: string) => void seen.push(status));
  await page.addInitScript(() => {
    const report = (globalThis as unknown as { chatStatus: (s: string) => void }).chatStatus;
    new MutationObserver((records) => {
      for (const r of records) {
        const value = (r.target as HTMLElement).getAttribute('data-status');
        if (value !== null) void report(value);
      }
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-status'] });
  });
  return seen;
}

/** Type `text` into the page's composer and send it. */
export async function say(page: Page, text: string): Promise<void> {
  await page.fill('#prompt', text);
  await page.click('#send');
}

/** The assistant's texts of an email turn, joined by `|`: the announcement, then what followed the reply. */
export const emailTurn = (to: string, then: string): string => `I will email ${to} once you approve.|${then}`;

/** What the model says once the email went. */
export const sentOnce = (to: string): string => `Done: the note went to ${to}, and it went exactly once.`;
