/**
 * The real `useChat` (the chat page, bundled by esbuild) in Chromium with the turns in the tab:
 * `localChatTransport` over IndexedDB and the examples' deterministic model. Text streams in
 * while the model is held mid-reply, tool parts show with their outputs, approve and deny from
 * the page, a reload mid-turn resumes the turn in the new page with nothing shown twice, a reload
 * while the email goes asks the person to settle it, a sub-agent's approval is answered on the
 * tool part that runs it, an approval with edited arguments sends the edited email, Stop ends a
 * turn mid-reply — and the outbox (localStorage, outside the run) gets each approved email
 * exactly once.
 */
import type { Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, serve } from '../e2e-web/harness.ts';
import { bundlePage, emailTurn, sentOnce, say, shown, untilAssistantText, untilStatus } from './harness.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

let pageDir: string;
let server: Server;
let origin: string;
let browser: Browser;

const dirs = sharedTempDirs();

beforeAll(async () => {
  pageDir = await bundlePage(dirs);
  server = await serve(pageDir);
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((ok) => server?.close(ok));
});

/** A page in a new browser context (its own IndexedDB and localStorage) on chat `chatId`, ready. */
async function open(chatId: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  await page.goto(`${origin}/?mode=local&delay=5&chat=${chatId}`);
  await untilStatus(page, 'ready');
  return page;
}

/** Hold the tab's turns at `point` (the page's model and tool read the flag in localStorage). */
const hold = (page: Page, point: 'text' | 'send'): Promise<void> =>
  page.evaluate((p) => localStorage.setItem(`polyloop-chat-hold:${p}`, '1'), point);
const release = (page: Page, point: 'text' | 'send'): Promise<void> =>
  page.evaluate((p) => localStorage.removeItem(`polyloop-chat-hold:${p}`), point);

/** The emails the tab's outbox holds for `to`. */
function sentTo(page: Page, to: string): Promise<number> {
  return page.evaluate((address) => {
    const sent = JSON.parse(localStorage.getItem('polyloop-chat-outbox') ?? '[]') as { to: string }[];
    return sent.filter((e) => e.to === address).length;
  }, to);
}

/** Reload, and the page shows the same conversation, rebuilt by loadChat from IndexedDB. */
async function expectRestoredAfterReload(page: Page): Promise<void> {
  const before = await shown(page);
  await page.reload();
  await untilStatus(page, 'ready');
  expect(await shown(page)).toEqual(before);
}

describe('useChat in Chromium with the turns in the tab (localChatTransport, IndexedDB)', () => {
  it('streams text in while the model is held mid-reply, then a tool part with output; reload restores', async () => {
    const page = await open('weather');
    await hold(page, 'text');
    await say(page, 'weather in Lisbon');
    await untilAssistantText(page, 'Let ');
    expect(await page.getAttribute('#chat', 'data-status')).toBe('streaming');
    expect((await shown(page)).at(-1)).toEqual({ role: 'assistant', texts: ['Let '], tools: [], settles: [] });
    await release(page, 'text');
    await untilAssistantText(page, 'Let me look up the weather in Lisbon.|Right now: Lisbon: 19°C.');
    await untilStatus(page, 'ready');
    expect(await page.textContent('.tool[data-tool="weather"] .output')).toBe('Lisbon: 19°C');
    await expectRestoredAfterReload(page);
  });

  it('approve and deny from the page: the approved email goes once, the denied one never', async () => {
    const page = await open('approvals');
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
    expect([await sentTo(page, 'ann@example.com'), await sentTo(page, 'bert@example.com')]).toEqual([1, 0]);
    expect(await page.textContent('#outbox-count')).toBe('1');
    await expectRestoredAfterReload(page);
  });

  it('two approvals in one turn: the second approved first, then the first denied; each reaches its own call', async () => {
    const page = await open('two-approvals');
    await say(page, 'email eve@example.com and finn@example.com');
    const asked = '.tool[data-tool="send_email"][data-state="approval-requested"]';
    await expect.poll(() => page.locator(asked).count()).toBe(2);
    await page.locator('.tool[data-tool="send_email"]').nth(1).locator('button.approve').click();
    await page.waitForSelector('.tool[data-tool="send_email"][data-state="approval-responded"]');
    await untilStatus(page, 'ready');
    expect(await page.locator(asked).count()).toBe(1);
    expect(await sentTo(page, 'finn@example.com')).toBe(0);
    const first = page.locator('.tool[data-tool="send_email"]').nth(0);
    await first.locator('input.reason').fill('not eve');
    await first.locator('button.deny').click();
    const announced = 'I will email eve@example.com and finn@example.com once you approve each.';
    await untilAssistantText(
      page,
      `${announced}|Done: the note went to finn@example.com, not to eve@example.com (not eve).`,
    );
    await untilStatus(page, 'ready');
    expect((await shown(page)).at(-1)?.tools).toEqual(['send_email:output-denied', 'send_email:output-available']);
    expect([await sentTo(page, 'eve@example.com'), await sentTo(page, 'finn@example.com')]).toEqual([0, 1]);
    await expectRestoredAfterReload(page);
  });

  it("a sub-agent's approval shows on the helper's tool part; approved from the page, its email goes once", async () => {
    const page = await open('helper');
    await say(page, 'ask the helper to email gus@example.com');
    await page.waitForSelector('.tool[data-tool="helper"][data-state="approval-requested"]');
    const asks = 'The sub-agent run chat:helper:1.s0.action asks to run send_email.';
    expect(await page.textContent('.tool[data-tool="helper"] .asks')).toBe(asks);
    expect(await sentTo(page, 'gus@example.com')).toBe(0);
    await page.click('button.approve');
    const done = `The helper says: ${sentOnce('gus@example.com')}`;
    await untilAssistantText(page, `I will ask a helper to do that.|${done}`);
    await untilStatus(page, 'ready');
    expect((await shown(page)).at(-1)?.tools).toEqual(['helper:output-available']);
    expect(await page.textContent('.tool[data-tool="helper"] .output')).toBe(sentOnce('gus@example.com'));
    expect(await sentTo(page, 'gus@example.com')).toBe(1);
    await expectRestoredAfterReload(page);
  });

  it('a reload mid-reply: the new page resumes the turn from IndexedDB to its end, nothing shown twice', async () => {
    const page = await open('reload');
    await say(page, 'email cleo@example.com');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    await hold(page, 'text');
    await page.click('button.approve');
    await untilAssistantText(page, emailTurn('cleo@example.com', 'Done: '));
    expect(await sentTo(page, 'cleo@example.com')).toBe(1);
    // The tab that drove the turn is gone; the new one resumes it (the model call is re-issued, held again).
    await page.reload();
    await untilAssistantText(page, emailTurn('cleo@example.com', 'Done: '));
    expect(await page.getAttribute('#chat', 'data-status')).toBe('streaming');
    await release(page, 'text');
    await untilAssistantText(page, emailTurn('cleo@example.com', sentOnce('cleo@example.com')));
    await untilStatus(page, 'ready');
    expect((await shown(page)).map((m) => m.tools)).toEqual([[], ['send_email:output-available']]);
    expect(await sentTo(page, 'cleo@example.com')).toBe(1);
    await expectRestoredAfterReload(page);
  });

  it('a reload while the email goes: the turn asks the person to settle it, and it is never sent again', async () => {
    const page = await open('settle');
    await say(page, 'email dora@example.com');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    await hold(page, 'send');
    await page.click('button.approve');
    await expect.poll(() => sentTo(page, 'dora@example.com')).toBe(1);
    // Still held while the tab goes: the tool never returned, so its step is in doubt.
    await page.reload();
    await release(page, 'send');
    await page.waitForSelector('.settle[data-state="open"] button.settle-executed');
    await untilStatus(page, 'ready');
    await page.click('button.settle-executed');
    await untilAssistantText(page, emailTurn('dora@example.com', sentOnce('dora@example.com')));
    await untilStatus(page, 'ready');
    expect((await shown(page)).at(-1)?.settles).toEqual(['settled']);
    expect(await sentTo(page, 'dora@example.com')).toBe(1);
    await expectRestoredAfterReload(page);
  });

  it('edit and approve in the tab: a refused edit is asked again, the edited email goes; Stop ends the next turn', async () => {
    const page = await open('edit-stop');
    await say(page, 'email ivy@example.com');
    await page.waitForSelector('.tool[data-state="approval-requested"]');
    await page.click('button.edit');
    await page.fill('textarea.edit-args', JSON.stringify({ to: 'jay@example.com' }));
    await page.click('button.approve-edited');
    await page.waitForSelector('#error');
    expect(await page.textContent('#error')).toContain('the edited arguments are refused');
    await page.waitForSelector('.tool[data-state="approval-requested"] textarea.edit-args');
    const edited = { to: 'jay@example.com', subject: 'Changed here', body: 'Hello Jay.' };
    await page.fill('textarea.edit-args', JSON.stringify(edited));
    await page.click('button.approve-edited');
    const then = 'Done: you changed the call, and the note went to jay@example.com, exactly once.';
    await untilAssistantText(page, emailTurn('ivy@example.com', then));
    await untilStatus(page, 'ready');
    expect(JSON.parse((await page.textContent('.tool .ran-with')) ?? '')).toEqual(edited);
    expect([await sentTo(page, 'jay@example.com'), await sentTo(page, 'ivy@example.com')]).toEqual([1, 0]);
    await hold(page, 'text');
    await say(page, 'weather in Cairo');
    await untilAssistantText(page, 'Let ');
    await page.fill('#stop-reason', 'too hot');
    await page.click('#stop');
    await page.waitForSelector('#messages .stopped');
    await untilStatus(page, 'ready');
    expect(await page.textContent('#messages .stopped')).toBe('Stopped: too hot');
    await release(page, 'text');
    await page.reload();
    await untilStatus(page, 'ready');
    expect(await page.textContent('#messages .stopped')).toBe('Stopped: too hot');
    expect(JSON.parse((await page.textContent('.tool .ran-with')) ?? '')).toEqual(edited);
  });
});
