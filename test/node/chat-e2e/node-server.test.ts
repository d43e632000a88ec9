/**
 * The real `useChat` (the chat page, bundled by esbuild) in Chromium against the Node chat server
 * of examples/node-chat, run as a child process: text streams in while the model is held
 * mid-reply, tool parts show with their outputs, approve and deny from the page, approve with
 * edited arguments (one the tool refuses first), stop a turn mid-reply and one waiting for
 * approval, a reload mid-turn continues the turn, a SIGKILLed server is restarted and the page's
 * own reconnect follows the turn to its end — and `send_email`'s line in sent.log is written
 * exactly once, for the address that really went.
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../e2e-web/harness.ts';
import { bundlePage, emailTurn, nodeChat, say, sentOnce, shown, trackStatus } from './harness.ts';
import { untilAssistantText, untilStatus } from './harness.ts';
import type { NodeChat } from './harness.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

let pageDir: string;
let server: NodeChat;
let browser: Browser;

const dirs = sharedTempDirs();

beforeAll(async () => {
  pageDir = await bundlePage(dirs);
  server = await nodeChat(pageDir, dirs);
  await server.start();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.kill();
});

/** A page on chat `chatId`, ready (its conversation loaded, no turn running). */
async function open(chatId: string): Promise<{ page: Page; statuses: string[] }> {
  const page = await (await browser.newContext()).newPage();
  page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  const statuses = await trackStatus(page);
  await page.goto(server.url(chatId));
  await untilStatus(page, 'ready');
  return { page, statuses };
}

const hold = (point: 'text' | 'send'): Promise<void> => writeFile(join(server.holdDir, point), '');
const release = (point: 'text' | 'send'): Promise<void> => rm(join(server.holdDir, point), { force: true });

/** The emails sent.log holds for `to`. */
async function sentTo(to: string): Promise<number> {
  const log = join(server.dir, 'sent.log');
  if (!existsSync(log)) return 0;
  const lines = (await readFile(log, 'utf8')).split('\n').filter((line) => line !== '');
  return lines.filter((line) => (JSON.parse(line) as { to: string }).to === to).length;
}

/** Reload, and the page shows the same conversation, rebuilt from the server's logs. */
async function expectRestoredAfterReload(page: Page): Promise<void> {
  const before = await shown(page);
  await page.reload();
  await untilStatus(page, 'ready');
  expect(await shown(page)).toEqual(before);
}

describe('useChat in Chromium against the Node chat server', () => {
  it('streams text in while the model is held mid-reply, then a tool part with output; reload restores', async () => {
    const { page } = await open('weather');
    await hold('text');
    await say(page, 'weather in Oslo');
    await untilAssistantText(page, 'Let ');
    // The model is held after its first word: the page shows it, and the turn has not ended.
    expect(await page.getAttribute('#chat', 'data-status')).toBe('streaming');
    expect((await shown(page)).at(-1)).toEqual({ role: 'assistant', texts: ['Let '], tools: [], settles: [] });
    await release('text');
    await untilAssistantText(page, 'Let me look up the weather in Oslo.|Right now: Oslo: 4°C.');
    await untilStatus(page, 'ready');
    expect(await page.textContent('.tool[data-tool="weather"] .output')).toBe('Oslo: 4°C');
    expect(await shown(page)).toEqual([
      { role: 'user', texts: ['weather in Oslo'], tools: [], settles: [] },
      {
        role: 'assistant',
        texts: ['Let me look up the weather in Oslo.', 'Right now: Oslo: 4°C.'],
        tools: ['weather:output-available'],
        settles: [],
      },
    ]);
    await expectRestoredAfterReload(page);
  });

  it('approve and deny from the page: the approved email goes once, the denied one never', async () => {
    const { page } = await open('approvals');
    await say(page, 'email ann@example.com');
    await page.waitForSelector('.tool[data-tool="send_email"][data-state="approval-requested"]');
    await page.click('button.approve');
    await untilAssistantText(page, emailTurn('ann@example.com', sentOnce('ann@example.com')));
    await untilStatus(page, 'ready');
    await say(page, 'email bert@example.com');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    await page.fill('input.reason', 'not on a Sunday');
    await page.click('button.deny');
    await untilAssistantText(page, emailTurn('bert@example.com', 'I did not send the email (not on a Sunday).'));
    await untilStatus(page, 'ready');
    const tools = (await shown(page)).map((m) => m.tools);
    expect(tools).toEqual([[], ['send_email:output-available'], [], ['send_email:output-denied']]);
    expect(await page.textContent('.tool[data-state="output-denied"] .output')).toBe('denied: not on a Sunday');
    expect([await sentTo('ann@example.com'), await sentTo('bert@example.com')]).toEqual([1, 0]);
    await expectRestoredAfterReload(page);
  });

  it('edit and approve: a refused edit is asked again, the edited email goes, the part shows proposal and what ran', async () => {
    const { page } = await open('edit');
    await say(page, 'email fay@example.com');
    await page.waitForSelector('.tool[data-tool="send_email"][data-state="approval-requested"]');
    await page.click('button.edit');
    // Arguments the tool does not take: the server says why, nothing goes, the approval is asked again.
    await page.fill('textarea.edit-args', JSON.stringify({ to: 42 }));
    await page.click('button.approve-edited');
    await page.waitForSelector('#error');
    expect(await page.textContent('#error')).toContain('the edited arguments are refused');
    await page.waitForSelector('.tool[data-state="approval-requested"] textarea.edit-args');
    expect(await sentTo('fay@example.com')).toBe(0);
    const edited = { to: 'gil@example.com', subject: 'Changed by a person', body: 'Hello Gil.' };
    await page.fill('textarea.edit-args', JSON.stringify(edited));
    await page.click('button.approve-edited');
    const then = 'Done: you changed the call, and the note went to gil@example.com, exactly once.';
    await untilAssistantText(page, emailTurn('fay@example.com', then));
    await untilStatus(page, 'ready');
    expect(await page.textContent('.tool[data-tool="send_email"] .proposed')).toContain('"to":"fay@example.com"');
    expect(JSON.parse((await page.textContent('.tool .ran-with')) ?? '')).toEqual(edited);
    expect([await sentTo('gil@example.com'), await sentTo('fay@example.com')]).toEqual([1, 0]);
    await expectRestoredAfterReload(page);
    expect(JSON.parse((await page.textContent('.tool .ran-with')) ?? '')).toEqual(edited);
  });

  it('Stop mid-reply ends the turn: the page shows it stopped with the reason, so does a reload; the chat goes on', async () => {
    const { page } = await open('stop-reply');
    await hold('text');
    await say(page, 'weather in Oslo');
    await untilAssistantText(page, 'Let ');
    await page.fill('#stop-reason', 'changed my mind');
    await page.click('#stop');
    await page.waitForSelector('#messages .stopped');
    await untilStatus(page, 'ready');
    expect(await page.textContent('#stop-state')).toBe('stopped');
    expect(await page.textContent('#messages .stopped')).toBe('Stopped: changed my mind');
    await release('text');
    await page.reload();
    await untilStatus(page, 'ready');
    // The stopped model call never replied: the reloaded turn shows no words of it, only the stop.
    expect((await shown(page)).at(-1)).toEqual({ role: 'assistant', texts: [], tools: [], settles: [] });
    expect(await page.textContent('#messages .stopped')).toBe('Stopped: changed my mind');
    await say(page, 'weather in Lisbon');
    await untilAssistantText(page, 'Let me look up the weather in Lisbon.|Right now: Lisbon: 19°C.');
  });

  it('Stop while an approval waits: the turn ends at once, the approval closes refused, nothing is sent', async () => {
    const { page } = await open('stop-approval');
    await say(page, 'email hal@example.com');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    await page.fill('#stop-reason', 'wrong person');
    await page.click('#stop');
    await page.waitForSelector('.tool[data-tool="send_email"][data-state="output-denied"]');
    expect(await page.textContent('#messages .stopped')).toBe('Stopped: wrong person');
    const denied = 'denied: The turn was stopped before this tool call finished: wrong person';
    expect(await page.textContent('.tool[data-state="output-denied"] .output')).toBe(denied);
    expect(await page.$('button.approve')).toBeNull();
    expect(await sentTo('hal@example.com')).toBe(0);
    await expectRestoredAfterReload(page);
  });

  it('a reload mid-turn: the new page follows the same turn to its end, nothing shown twice', async () => {
    const { page } = await open('reload');
    await say(page, 'email cleo@example.com');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    await hold('text');
    await page.click('button.approve');
    await untilAssistantText(page, emailTurn('cleo@example.com', 'Done: '));
    expect(await sentTo('cleo@example.com')).toBe(1);
    await page.reload();
    // The held turn is still the server's: the reloaded page replays it from the start, then follows it live.
    await untilAssistantText(page, emailTurn('cleo@example.com', 'Done: '));
    expect(await page.getAttribute('#chat', 'data-status')).toBe('streaming');
    await release('text');
    await untilAssistantText(page, emailTurn('cleo@example.com', sentOnce('cleo@example.com')));
    await untilStatus(page, 'ready');
    expect((await shown(page)).map((m) => m.tools)).toEqual([[], ['send_email:output-available']]);
    expect(await sentTo('cleo@example.com')).toBe(1);
    await expectRestoredAfterReload(page);
  });

  it('a server SIGKILLed mid-reply and restarted resumes the turn; the page reconnects and follows it', async () => {
    const { page, statuses } = await open('killed');
    await say(page, 'email dora@example.com');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    await hold('text');
    await page.click('button.approve');
    await untilAssistantText(page, emailTurn('dora@example.com', 'Done: '));
    const seen = statuses.length;
    await server.kill();
    await server.start();
    // The restarted server re-issues the model call, held again after its first word.
    await untilAssistantText(page, emailTurn('dora@example.com', 'Done: '));
    await release('text');
    await untilAssistantText(page, emailTurn('dora@example.com', sentOnce('dora@example.com')));
    await untilStatus(page, 'ready');
    expect(statuses.slice(seen)).toContain('error'); // the stream broke, and the page reconnected without a reload
    expect(await sentTo('dora@example.com')).toBe(1);
    await expectRestoredAfterReload(page);
  });

  it('a server SIGKILLed while the email goes: the person settles it, and it is never sent again', async () => {
    const { page } = await open('settle');
    await say(page, 'email eve@example.com');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    await hold('send');
    await page.click('button.approve');
    await expect.poll(() => sentTo('eve@example.com')).toBe(1);
    await server.kill();
    await release('send');
    await server.start();
    await page.waitForSelector('.settle[data-state="open"] button.settle-executed');
    await untilStatus(page, 'ready');
    await page.click('button.settle-executed');
    await untilAssistantText(page, emailTurn('eve@example.com', sentOnce('eve@example.com')));
    await untilStatus(page, 'ready');
    expect((await shown(page)).at(-1)?.settles).toEqual(['settled']);
    expect(await sentTo('eve@example.com')).toBe(1);
    await expectRestoredAfterReload(page);
  });
});
