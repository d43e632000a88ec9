/**
 * The proof a user would believe: examples/web in real Chromium (Debian's, via playwright-core).
 * A run reloaded at several points finishes with the trajectory of an uninterrupted run; the
 * person's question and approval survive a reload and a closed tab (the new tab shows the same
 * request, and the email goes once after the click); an email in flight when the tab closed is
 * settled from the outbox; two tabs on one run have one driver; a full quota is a StoreError that
 * loses nothing.
 */
import { mkdir } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepRecord } from '../../../src/core/index.ts';
import { startServed, trackPage } from './harness.ts';
import type { PageLog, Served } from './harness.ts';

const PACE = 'think=150&tool=250';
/**
 * Slower, for a page opened or reloaded that must land while the run is still mid-way: a loaded
 * machine may take a second or more to load a page, while the run, at `PACE`, reaches the question
 * at step 5 in under two seconds (a second tab then finds it awaiting, never waiting on a driver).
 */
const RELOAD_PACE = 'think=700&tool=1000';
const FINISH_MS = 30_000;
let served: Served;
let baseline: unknown[];

type ExamplePage = {
  polyloopExample: { executions(): number; emails(): unknown[]; trajectory(): Promise<StepRecord[]> };
};
type Tab = { readonly page: Page; readonly log: PageLog };

async function open(context: BrowserContext, runId: string, extra = '', pace = PACE): Promise<Tab> {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[${runId}] page error: ${e.message}`));
  const log = await trackPage(page);
  await page.goto(`${served.origin}/?run=${runId}&${pace}${extra}`);
  return { page, log };
}

const finished = (tab: Tab): Promise<void> => tab.log.until('state=finished', { timeoutMs: FINISH_MS });
const executions = (tab: Tab): Promise<number> =>
  tab.page.evaluate(() => (globalThis as unknown as ExamplePage).polyloopExample.executions());
/** Emails of this run in the page's outbox (localStorage: the world outside the run). */
const emails = (tab: Tab): Promise<unknown[]> =>
  tab.page.evaluate(() => (globalThis as unknown as ExamplePage).polyloopExample.emails());

/** The person: answers who gets the report (step 5). */
async function answerQuestion(tab: Tab, since = 0): Promise<void> {
  await tab.log.until('phase=answer:5', { since });
  await tab.page.fill('#answer-text', 'ana@example.com');
  await tab.page.click('#answer');
}

/** The person: approves the email (step 6). */
async function approveEmail(tab: Tab, since = 0): Promise<void> {
  await tab.log.until('phase=approval:6', { since });
  await tab.page.click('#approve');
}

/** The trajectory from the page's IndexedDB, timestamps aside. */
async function trajectory(tab: Tab): Promise<unknown[]> {
  const steps = await tab.page.evaluate(() => (globalThis as unknown as ExamplePage).polyloopExample.trajectory());
  return steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);
}

beforeAll(async () => {
  served = await startServed();
  const context = await served.browser.newContext();
  const tab = await open(context, 'uninterrupted');
  await tab.page.click('#start');
  await answerQuestion(tab);
  await approveEmail(tab);
  await finished(tab);
  baseline = await trajectory(tab);
  expect(await executions(tab)).toBe(5);
  expect(await emails(tab)).toEqual([
    {
      runId: 'uninterrupted',
      to: 'ana@example.com',
      subject: 'The warmest city',
      body: 'Cairo is the warmest at 31°C.',
    },
  ]);
  await context.close();
}, 90_000);

afterAll(async () => {
  await served?.close();
});

describe('the web example in real Chromium', () => {
  it('an uninterrupted run visits five cities, asks whom to tell, emails them once approved, and answers', () => {
    expect(baseline).toHaveLength(8);
    expect(baseline.slice(5, 7)).toMatchObject([
      { actionRepr: expect.stringContaining('ask_user'), observation: 'ana@example.com' },
      { actionRepr: expect.stringContaining('send_email'), observation: 'Sent to ana@example.com.' },
    ]);
    expect(baseline.at(-1)).toMatchObject({
      decision: 'final',
      finalAnswer: 'Cairo is the warmest at 31°C; the report went to ana@example.com.',
    });
  });

  it('resumes after reloads mid-model-call, mid-action, as a step starts and twice in a row, ending with the uninterrupted trajectory; reopened after the end it executes nothing', async () => {
    const context = await served.browser.newContext();
    const tab = await open(context, 'reloaded', '', RELOAD_PACE);
    await tab.page.click('#start');
    await mkdir('test-artifacts', { recursive: true });
    let since = 0;
    for (const point of ['phase=model:1', 'phase=action:2', 'phase=model:3']) {
      await tab.log.until(point, { since });
      since = tab.log.entries.length;
      await tab.page.reload();
      await tab.log.until('resumed=true', { since });
      expect(await tab.page.textContent('#banner')).toMatch(/Resumed after reopening/);
      if (point === 'phase=action:2')
        await tab.page.screenshot({ path: 'test-artifacts/web-example-resumed.png', fullPage: true });
    }
    await tab.log.until('phase=action:4', { since });
    await tab.page.reload();
    await tab.page.reload();
    await answerQuestion(tab, since);
    await approveEmail(tab, since);
    await finished(tab);
    expect(await trajectory(tab)).toEqual(baseline);
    expect(await tab.page.textContent('#answer')).toMatch(/is the warmest at/);
    expect(await tab.page.locator('#steps li.done').count()).toBe(8);
    expect(await emails(tab)).toHaveLength(1);
    await tab.page.screenshot({ path: 'test-artifacts/web-example-finished.png', fullPage: true });
    // Reopened after the end: the stored result, nothing executed.
    since = tab.log.entries.length;
    await tab.page.reload();
    await tab.log.until('state=finished', { since });
    expect(await executions(tab)).toBe(0);
    expect(await trajectory(tab)).toEqual(baseline);
    await context.close();
  }, 90_000);

  it('with two tabs on one run, only one drives it while the other waits and watches', async () => {
    const context = await served.browser.newContext();
    const first = await open(context, 'two-tabs', '', RELOAD_PACE);
    await first.page.click('#start');
    await first.log.until('phase=action:1');
    const second = await open(context, 'two-tabs', '', RELOAD_PACE);
    await second.log.until('state=waiting');
    // Both tabs show the question; the person answers in the first, and the second follows.
    await second.log.until('phase=answer:5');
    await answerQuestion(first);
    await approveEmail(first);
    await finished(first);
    await finished(second);
    expect(await executions(first)).toBe(5);
    expect(await executions(second)).toBe(0);
    expect(await emails(second)).toHaveLength(1);
    expect(second.log.entries.filter((e) => /^phase=(model|action):/.test(e))).toEqual([]);
    expect(await trajectory(second)).toEqual(baseline);
    await context.close();
  }, 60_000);

  it('hands the run over when the driving tab closes, and the waiting tab finishes it', async () => {
    const context = await served.browser.newContext();
    const first = await open(context, 'handover', '', RELOAD_PACE);
    await first.page.click('#start');
    const second = await open(context, 'handover', '', RELOAD_PACE);
    await second.log.until('state=waiting');
    await first.log.until('phase=action:2');
    expect(await executions(second)).toBe(0);
    await first.page.close();
    await answerQuestion(second);
    await approveEmail(second);
    await finished(second);
    expect(await executions(second)).toBeGreaterThan(0);
    expect(await emails(second)).toHaveLength(1);
    expect(await trajectory(second)).toEqual(baseline);
    await context.close();
  }, 60_000);

  it('keeps the question and then the approval on screen across a reload, and sends the email once after the click', async () => {
    const context = await served.browser.newContext();
    const tab = await open(context, 'reload-pending');
    await tab.page.click('#start');
    await tab.log.until('phase=answer:5');
    let since = tab.log.entries.length;
    await tab.page.reload();
    await tab.log.until('phase=answer:5', { since });
    expect(await tab.page.textContent('#pending')).toContain('Who should get the weather report?');
    await answerQuestion(tab, since);
    await tab.log.until('phase=approval:6', { since });
    since = tab.log.entries.length;
    await tab.page.reload();
    await approveEmail(tab, since);
    await finished(tab);
    expect(await emails(tab)).toHaveLength(1);
    expect(await trajectory(tab)).toEqual(baseline);
    await context.close();
  }, 60_000);

  it('shows the same pending approval in a new tab after the tab that asked was closed, and finishes the run after approve with the email sent exactly once', async () => {
    const context = await served.browser.newContext();
    const first = await open(context, 'closed-tab');
    await first.page.click('#start');
    await answerQuestion(first);
    await first.log.until('phase=approval:6');
    const asked = await first.page.textContent('#pending');
    await first.page.close();
    const second = await open(context, 'closed-tab');
    await second.log.until('phase=approval:6');
    expect(await second.page.textContent('#pending')).toBe(asked);
    expect(asked).toContain('ana@example.com');
    expect(await second.page.isVisible('#deny')).toBe(true);
    expect(await emails(second)).toEqual([]);
    await mkdir('test-artifacts', { recursive: true });
    await second.page.screenshot({ path: 'test-artifacts/web-example-approval.png', fullPage: true });
    await second.page.click('#approve');
    await finished(second);
    expect(await emails(second)).toHaveLength(1);
    expect(await executions(second)).toBe(0);
    expect(await trajectory(second)).toEqual(baseline);
    await context.close();
  }, 60_000);

  it('asks to settle an email that was being sent when the tab closed, and once settled from the outbox it went exactly once', async () => {
    const context = await served.browser.newContext();
    const first = await open(context, 'closed-mid-send');
    await first.page.click('#start');
    await answerQuestion(first);
    await approveEmail(first);
    await first.log.until('phase=action:6');
    await first.page.close();
    const second = await open(context, 'closed-mid-send');
    await second.log.until('phase=settle:6');
    for (const id of ['#executed', '#retry', '#deny', '#cancel'])
      expect(await second.page.isVisible(id), id).toBe(true);
    // The person looks at the outbox: the email is there (it went) or not (send it again).
    const sent = (await emails(second)).length;
    await second.page.click(sent > 0 ? '#executed' : '#retry');
    await finished(second);
    expect(await emails(second)).toHaveLength(1);
    expect(await trajectory(second)).toEqual(baseline);
    await context.close();
  }, 60_000);

  it('shows two approvals of one reply side by side, answered in any order, and sends only the approved email', async () => {
    const context = await served.browser.newContext();
    const tab = await open(context, 'two-approvals', '&goal=pair');
    await tab.page.click('#start');
    await tab.log.until('phase=approval:0');
    const panels = tab.page.locator('#pending .request');
    expect(await panels.count()).toBe(2);
    expect(await panels.nth(0).textContent()).toContain('email ana@example.com');
    expect(await panels.nth(1).textContent()).toContain('email bo@example.com');
    await mkdir('test-artifacts', { recursive: true });
    await tab.page.screenshot({ path: 'test-artifacts/web-example-two-approvals.png', fullPage: true });
    await tab.page.click('#s0-a1-approve');
    // Nothing is sent while the other approval is open; the page shows that one alone.
    await tab.page.waitForSelector('#s0-a1-approve', { state: 'detached' });
    await tab.page.waitForSelector('#s0-a0-deny');
    expect(await panels.count()).toBe(1);
    expect(await emails(tab)).toEqual([]);
    await tab.page.click('#s0-a0-deny');
    await finished(tab);
    expect(await emails(tab)).toEqual([
      { runId: 'two-approvals', to: 'bo@example.com', subject: 'The weather', body: 'Cairo: 31°C.' },
    ]);
    const steps = await tab.page.evaluate(() => (globalThis as unknown as ExamplePage).polyloopExample.trajectory());
    expect(steps).toHaveLength(2);
    expect(steps[0]?.calls?.map((c) => c.status)).toEqual(['denied', 'executed']);
    expect(steps[1]?.finalAnswer).toMatch(/Not now\.[\s\S]*Sent to bo@example\.com\./);
    await context.close();
  }, 60_000);

  it('surfaces a full quota as StoreError with QuotaExceededError as cause, writing nothing, and goes on once space is back', async () => {
    const context = await served.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${served.origin}/quota.html`);
    await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
    type QuotaCase = {
      quotaCase: {
        prepare(): Promise<string[]>;
        attempt(): Promise<{ storeError: boolean; causeName: string | null; kinds: string[] }>;
        after(): Promise<string[]>;
      };
    };
    // Chromium applies a quota override only to an origin that has not written yet: set it first.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: served.origin, quotaSize: 4_000_000 });
    expect(await page.evaluate(() => (globalThis as unknown as QuotaCase).quotaCase.prepare())).toEqual([
      'run_started',
      'intent',
    ]);
    const attempt = await page.evaluate(() => (globalThis as unknown as QuotaCase).quotaCase.attempt());
    expect(attempt).toEqual({ storeError: true, causeName: 'QuotaExceededError', kinds: ['run_started', 'intent'] });
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: served.origin });
    expect(await page.evaluate(() => (globalThis as unknown as QuotaCase).quotaCase.after())).toEqual([
      'run_started',
      'intent',
      'step',
    ]);
    await context.close();
  }, 60_000);
});
