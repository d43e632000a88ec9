/**
 * The proof a user would believe: examples/web in real Chromium (Debian's, via playwright-core).
 * A run reloaded at several points finishes with the trajectory of an uninterrupted run; two tabs
 * on one run have one driver; a full quota is a StoreError that loses nothing.
 */
import { mkdir } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepRecord } from '../../../src/core/index.ts';
import { startServed, trackPage } from './harness.ts';
import type { PageLog, Served } from './harness.ts';

const PACE = 'think=150&tool=250';
const FINISH_MS = 30_000;
let served: Served;
let baseline: unknown[];

type ExamplePage = { polyloopExample: { executions(): number; trajectory(): Promise<StepRecord[]> } };
type Tab = { readonly page: Page; readonly log: PageLog };

async function open(context: BrowserContext, runId: string): Promise<Tab> {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[${runId}] page error: ${e.message}`));
  const log = await trackPage(page);
  await page.goto(`${served.origin}/?run=${runId}&${PACE}`);
  return { page, log };
}

const finished = (tab: Tab): Promise<void> => tab.log.until('state=finished', { timeoutMs: FINISH_MS });
const executions = (tab: Tab): Promise<number> => tab.page.evaluate(() => (globalThis as unknown as ExamplePage).polyloopExample.executions());

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
  await finished(tab);
  baseline = await trajectory(tab);
  expect(await executions(tab)).toBe(5);
  await context.close();
}, 90_000);

afterAll(async () => {
  await served?.close();
});

describe('the web example in real Chromium', () => {
  it('an uninterrupted run visits five cities and answers', () => {
    expect(baseline).toHaveLength(6);
    expect((baseline.at(-1) as StepRecord).decision).toBe('final');
  });

  it('resumes after reloads mid-model-call, mid-action, as a step starts and twice in a row, ending with the uninterrupted trajectory; reopened after the end it executes nothing', async () => {
    const context = await served.browser.newContext();
    const tab = await open(context, 'reloaded');
    await tab.page.click('#start');
    await mkdir('test-artifacts', { recursive: true });
    let since = 0;
    for (const point of ['phase=model:1', 'phase=action:2', 'phase=model:3']) {
      await tab.log.until(point, { since });
      since = tab.log.entries.length;
      await tab.page.reload();
      await tab.log.until('resumed=true', { since });
      expect(await tab.page.textContent('#banner')).toMatch(/Resumed after reopening/);
      if (point === 'phase=action:2') await tab.page.screenshot({ path: 'test-artifacts/web-example-resumed.png', fullPage: true });
    }
    await tab.log.until('phase=action:4', { since });
    await tab.page.reload();
    await tab.page.reload();
    await finished(tab);
    expect(await trajectory(tab)).toEqual(baseline);
    expect(await tab.page.textContent('#answer')).toMatch(/is the warmest at/);
    expect(await tab.page.locator('#steps li.done').count()).toBe(6);
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
    const first = await open(context, 'two-tabs');
    await first.page.click('#start');
    await first.log.until('phase=action:1');
    const second = await open(context, 'two-tabs');
    await second.log.until('state=waiting');
    await finished(first);
    await finished(second);
    expect(await executions(first)).toBe(5);
    expect(await executions(second)).toBe(0);
    expect(second.log.entries.filter((e) => e.startsWith('phase='))).toEqual(['phase=ended']);
    expect(await trajectory(second)).toEqual(baseline);
    await context.close();
  }, 60_000);

  it('hands the run over when the driving tab closes, and the waiting tab finishes it', async () => {
    const context = await served.browser.newContext();
    const first = await open(context, 'handover');
    await first.page.click('#start');
    const second = await open(context, 'handover');
    await second.log.until('state=waiting');
    await first.log.until('phase=action:2');
    expect(await executions(second)).toBe(0);
    await first.page.close();
    await finished(second);
    expect(await executions(second)).toBeGreaterThan(0);
    expect(await trajectory(second)).toEqual(baseline);
    await context.close();
  }, 60_000);

  it('surfaces a full quota as StoreError with QuotaExceededError as cause, writing nothing, and goes on once space is back', async () => {
    const context = await served.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${served.origin}/quota.html`);
    await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
    type QuotaCase = { quotaCase: { prepare(): Promise<string[]>; attempt(): Promise<{ storeError: boolean; causeName: string | null; kinds: string[] }>; after(): Promise<string[]> } };
    // Chromium applies a quota override only to an origin that has not written yet: set it first.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: served.origin, quotaSize: 4_000_000 });
    expect(await page.evaluate(() => (globalThis as unknown as QuotaCase).quotaCase.prepare())).toEqual(['run_started', 'intent']);
    const attempt = await page.evaluate(() => (globalThis as unknown as QuotaCase).quotaCase.attempt());
    expect(attempt).toEqual({ storeError: true, causeName: 'QuotaExceededError', kinds: ['run_started', 'intent'] });
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: served.origin });
    expect(await page.evaluate(() => (globalThis as unknown as QuotaCase).quotaCase.after())).toEqual(['run_started', 'intent', 'step']);
    await context.close();
  }, 60_000);
});
