/**
 * The real `useChat` (the chat page of examples/web/chat, bundled by esbuild and served on its own
 * loopback origin) in Chromium against the Worker template of examples/worker, copied as it is
 * and served by `wrangler dev` (its `polyloop/*` imports pointed at this source): each turn is a
 * chat turn Durable Object, the page calls it cross-origin (the template's `PAGE_ORIGINS` lets it
 * in) with the bearer token in the transport's headers, and the model is an OpenAI-compatible
 * policy on loopback. Proves: text streams in, a tool part shows with its output, approve and
 * deny from the page, a reload mid-turn continues the turn with nothing shown twice, the
 * conversation is restored from the turns' logs after a reload, and the `notify` webhook (a
 * `never` tool) is called once.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, serve } from '../e2e-web/harness.ts';
import { bundlePage, ROOT, say, shown, untilAssistantText, untilStatus } from './harness.ts';
import { startPolicyFake } from './openai-policy.ts';
import type { PolicyFake } from './openai-policy.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

const TOKEN = 'worker-chat-token';
/** The template's `polyloop/*` imports, resolved to this source (a copy gets them from the installed package). */
const ALIASES: Record<string, string> = {
  polyloop: join(ROOT, 'src/core/index.ts'),
  'polyloop/workers': join(ROOT, 'src/platform-workers/index.ts'),
  'polyloop/adapters/openai': join(ROOT, 'src/adapters/openai.ts'),
  'polyloop/chat': join(ROOT, 'src/chat/index.ts'),
};

let fake: PolicyFake;
let pages: Server;
let pageOrigin = '';
let workerOrigin = '';
let wrangler: ChildProcess | null = null;
let output = '';
let browser: Browser;
// Removed after the afterAll below has stopped wrangler dev and closed the servers that used them.
const dirs = sharedTempDirs();

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => ok(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The template copied into a project of its own, with its secrets in .dev.vars; serve it with wrangler dev. */
async function startWorker(): Promise<void> {
  const project = await dirs.make('polyloop-worker-chat-');
  for (const file of ['worker.ts', 'wrangler.toml'])
    copyFileSync(join(ROOT, 'examples/worker', file), join(project, file));
  const aliases = Object.entries(ALIASES).map(([name, file]) => `${JSON.stringify(name)} = ${JSON.stringify(file)}`);
  appendFileSync(join(project, 'wrangler.toml'), `\n[alias]\n${aliases.join('\n')}\n`);
  writeFileSync(join(project, '.dev.vars'), `POLYLOOP_TOKEN=${TOKEN}\nOPENAI_API_KEY=sk-worker-chat\n`);
  const port = await freePort();
  workerOrigin = `http://127.0.0.1:${port}`;
  const vars = [`OPENAI_BASE_URL:${fake.baseURL}`, `PAGE_ORIGINS:${pageOrigin}`, `NOTIFY_URL:${fake.notifyURL}`];
  const args = [
    join(ROOT, 'node_modules/wrangler/bin/wrangler.js'),
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
  ];
  args.push('--persist-to', await dirs.make('polyloop-worker-chat-do-'), ...vars.flatMap((v) => ['--var', v]));
  const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', NO_COLOR: '1' };
  const child = spawn(process.execPath, args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  wrangler = child;
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`wrangler dev was not ready after 90 s:\n${output}`)), 90_000);
    const onData = (d: Buffer): void => {
      output += d.toString();
      if (!/Ready on http/.test(output)) return;
      clearTimeout(timer);
      ok();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => fail(new Error(`wrangler dev exited (${code}) before it was ready:\n${output}`)));
  });
}

beforeAll(async () => {
  fake = await startPolicyFake();
  const pageDir = await bundlePage(dirs);
  pages = await serve(pageDir);
  pageOrigin = `http://127.0.0.1:${(pages.address() as { port: number }).port}`;
  await startWorker();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (wrangler !== null && wrangler.exitCode === null) {
    const exited = new Promise((ok) => wrangler?.once('exit', ok));
    wrangler.kill('SIGTERM');
    await exited;
  }
  await new Promise((ok) => pages?.close(ok));
  await fake?.close();
});

/** A page on chat `chatId`, ready: its conversation loaded from the Worker, no turn running. */
async function open(chatId: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  const api = encodeURIComponent(`${workerOrigin}/chat`);
  await page.goto(`${pageOrigin}/?api=${api}&token=${TOKEN}&chat=${chatId}`);
  await untilStatus(page, 'ready');
  return page;
}

/** Reload, and the page shows the same conversation, rebuilt by the Worker from the turns' logs. */
async function expectRestoredAfterReload(page: Page): Promise<void> {
  const before = await shown(page);
  await page.reload();
  await untilStatus(page, 'ready');
  expect(await shown(page)).toEqual(before);
}

const ASK = 'I will tell the team once you approve.';

describe('useChat in Chromium against the Worker template (wrangler dev)', () => {
  it('streams text in while the model is held mid-reply, then shows the add tool part with its output; a reload restores it', async () => {
    const page = await open('w-add');
    fake.hold();
    await say(page, 'add 2 and 3');
    await untilAssistantText(page, 'Let ');
    expect(await page.getAttribute('#chat', 'data-status')).toBe('streaming');
    fake.release();
    await untilAssistantText(page, 'Let me add them.|The sum is 5.');
    await untilStatus(page, 'ready');
    expect(await page.textContent('.tool[data-tool="add"] .output')).toBe('5');
    expect(await shown(page)).toEqual([
      { role: 'user', texts: ['add 2 and 3'], tools: [], settles: [] },
      { role: 'assistant', texts: ['Let me add them.', 'The sum is 5.'], tools: ['add:output-available'], settles: [] },
    ]);
    await expectRestoredAfterReload(page);
  });

  it('approve and deny from the page: the approved message reaches the team once, the denied one never', async () => {
    const page = await open('w-approvals');
    await say(page, 'notify lunch at noon');
    await page.waitForSelector('.tool[data-tool="notify"][data-state="approval-requested"]');
    await page.click('button.approve');
    await untilAssistantText(page, `${ASK}|Done: the team has it.`);
    await untilStatus(page, 'ready');
    await say(page, 'notify fire drill');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    await page.fill('input.reason', 'not today');
    await page.click('button.deny');
    await untilAssistantText(page, `${ASK}|I did not send it (not today).`);
    await untilStatus(page, 'ready');
    expect((await shown(page)).map((m) => m.tools)).toEqual([
      [],
      ['notify:output-available'],
      [],
      ['notify:output-denied'],
    ]);
    expect([fake.notified('lunch at noon'), fake.notified('fire drill')]).toEqual([1, 0]);
    await expectRestoredAfterReload(page);
  });

  it('a reload mid-turn: the new page follows the same turn to its end, nothing shown twice, the message sent once', async () => {
    const page = await open('w-reload');
    await say(page, 'notify coffee is ready');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    fake.hold();
    await page.click('button.approve');
    await untilAssistantText(page, `${ASK}|Done`);
    expect(fake.notified('coffee is ready')).toBe(1);
    await page.reload();
    // The held turn goes on in its Durable Object: the reloaded page restores it and follows it live.
    await untilAssistantText(page, `${ASK}|Done`);
    expect(await page.getAttribute('#chat', 'data-status')).toBe('streaming');
    fake.release();
    await untilAssistantText(page, `${ASK}|Done: the team has it.`);
    await untilStatus(page, 'ready');
    expect((await shown(page)).map((m) => m.tools)).toEqual([[], ['notify:output-available']]);
    expect(fake.notified('coffee is ready')).toBe(1);
    await expectRestoredAfterReload(page);
  });
});
