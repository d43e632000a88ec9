/**
 * The run viewer in real Chromium (Debian's, through playwright-core): the page built by Vite,
 * served by `startViewer` over a directory of runs made by real runs of the library. One browser
 * for the whole file. Screenshots at 1280 and 390 pixels go to test-artifacts/viewer/
 * (`POLYLOOP_VIEWER_SHOTS=docs/viewer` refreshes the ones in the docs).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLog, run } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { startViewer } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { launchChromium } from '../e2e-web/harness.ts';
import agentFor, { hold, SENT } from './agent.ts';
import { everydayRuns, hostileRuns, runIn } from './runs.ts';
import { agentVersions } from './upgrade-agents.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const SHOTS = resolve(ROOT, process.env['POLYLOOP_VIEWER_SHOTS'] ?? 'test-artifacts/viewer');
let dir: string;
let pageDir: string;
let viewer: RunningViewer;
/** A viewer whose agent module exports a newer version of the agent its runs started under. */
let upgrading: RunningViewer;
let upgradeDir: string;
let browser: Browser;

async function page(width: number, hash = '#/', on: RunningViewer = viewer): Promise<Page> {
  const p = await browser.newPage({ viewport: { width, height: 860 } });
  p.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  await p.goto(on.url);
  await p.evaluate((h) => (location.hash = h), hash);
  return p;
}

const state = (p: Page, s: string): Promise<unknown> => p.waitForSelector(`#app[data-state="${s}"]`);

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-e2e-');
  pageDir = await dirs.make('polyloop-viewer-page-');
  await build({
    configFile: join(ROOT, 'src/viewer/page/vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: pageDir, emptyOutDir: true },
  });
  await everydayRuns(dir);
  await hostileRuns(dir);
  await mkdir(SHOTS, { recursive: true });
  viewer = await startViewer({ source: await dirSource({ dir, agent: agentFor, pollMs: 100 }), pageDir });
  // Every page opens on the run list first: its first read of every log (the 40 MB one takes
  // seconds, far more on a loaded machine) is done here, not inside the first test's time limit.
  const listed = await fetch(`${viewer.origin}/runs`, { headers: { authorization: `Bearer ${viewer.key}` } });
  expect(listed.status).toBe(200);
  upgradeDir = await dirs.make('polyloop-viewer-e2e-upgrade-');
  const v2 = agentVersions(upgradeDir).v2;
  upgrading = await startViewer({ source: await dirSource({ dir: upgradeDir, agent: v2, pollMs: 100 }), pageDir });
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await viewer?.close();
  await upgrading?.close();
});

describe('the run viewer in Chromium', () => {
  it("opens from the printed URL: the key leaves the address bar for this origin's sessionStorage, and no cookie is set", async () => {
    const context = await browser.newContext();
    try {
      const p = await context.newPage();
      await p.goto(viewer.url);
      await state(p, 'list');
      expect(p.url()).toBe(`${viewer.origin}/#/`);
      expect(await p.evaluate(() => sessionStorage.getItem('polyloop-view-key'))).toBe(viewer.key);
      expect(await context.cookies()).toEqual([]);
      // Without the fragment (a bookmark, another browser), the page says how to get in.
      const bare = await browser.newPage();
      await bare.goto(`${viewer.origin}/`);
      await state(bare, 'error');
      expect(await bare.locator('#app').textContent()).toContain('open the URL polyloop view printed');
      await bare.close();
    } finally {
      await context.close();
    }
  }, 30_000);

  it('gives a page on another port of 127.0.0.1, opened in the same browser, no key: no cookie reaches it, no storage holds it', async () => {
    const seen: IncomingHttpHeaders[] = [];
    // Another local server the user opens after the viewer (another user's, a dev server…).
    const other = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>');
    });
    await new Promise<void>((ok) => other.listen(0, '127.0.0.1', ok));
    const address = other.address();
    const otherOrigin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const context = await browser.newContext();
    try {
      const p = await context.newPage();
      await p.goto(viewer.url);
      await state(p, 'list');
      const q = await context.newPage();
      await q.goto(`${otherOrigin}/`);
      await p.goto(`${otherOrigin}/again`);
      expect(seen.length).toBeGreaterThanOrEqual(2);
      for (const headers of seen) {
        expect(headers.cookie).toBeUndefined();
        expect(JSON.stringify(headers)).not.toContain(viewer.key);
      }
      for (const tab of [p, q]) {
        const found = await tab.evaluate(
          () => document.cookie + JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }),
        );
        expect(found).not.toContain(viewer.key);
      }
    } finally {
      await context.close();
      await new Promise((ok) => other.close(ok));
    }
  }, 30_000);

  it('lists the runs with their status and filters them by status (1280 px)', async () => {
    const p = await page(1280);
    await state(p, 'list');
    await p.waitForSelector('a.run-link >> text=long-1', { timeout: 20_000 });
    const rows = await p.locator('table.runs tbody tr').count();
    expect(rows).toBe(8);
    expect(await p.locator('tr.status-awaiting_input a.run-link').textContent()).toBe('approve-1');
    expect(await p.locator('tr.status-interrupted a.run-link').textContent()).toBe('finished-cut');
    expect(await p.locator('tr.status-corrupt td').nth(2).textContent()).toBe('unreadable log');
    await p.screenshot({ path: join(SHOTS, 'list-1280.png') });
    await p.selectOption('#filter', 'awaiting_input');
    expect(await p.locator('table.runs tbody tr').count()).toBe(1);
    await p.selectOption('#filter', '');
    await p.close();
  }, 30_000);

  it("shows a finished run: step count, usage, reasoning collapsed, and a model's <script> as text", async () => {
    const p = await page(1280, '#/run/finished-1');
    await state(p, 'run');
    expect(await p.locator('#steps-count').textContent()).toBe('3');
    expect(await p.locator('#usage-total').textContent()).toBe('360 (in 300, out 60)');
    expect(await p.locator('#final-answer').textContent()).toContain('<script>window.__pwned = 1</script>');
    expect(await p.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    await p.focus('#timeline');
    await p.keyboard.press('ArrowDown');
    await p.waitForSelector('#detail h2 >> text=Step #0 — action');
    expect(await p.locator('#detail details').first().getAttribute('open')).toBeNull();
    expect(await p.locator('#detail .tool-name').textContent()).toBe('lookup');
    expect(await p.locator('#detail pre.obs').textContent()).toBe('Oslo: 21°C <b>sunny</b>');
    await p.screenshot({ path: join(SHOTS, 'run-1280.png') });
    await p.keyboard.press('Escape');
    await state(p, 'list');
    await p.close();
  }, 30_000);

  it("saves a run's log from the page, fetched with the key", async () => {
    const p = await browser.newPage({ acceptDownloads: true });
    await p.goto(viewer.url);
    await p.evaluate(() => (location.hash = '#/run/finished-1'));
    await state(p, 'run');
    const [download] = await Promise.all([p.waitForEvent('download'), p.click('#log-download')]);
    expect(download.suggestedFilename()).toBe('finished-1.ndjson');
    const saved = await readFile(await download.path(), 'utf8');
    expect(saved.split('\n')[0]).toContain('"kind":"run_started"');
    await p.close();
  }, 30_000);

  it('answers an approval from the page: the buttons its kind accepts, and the run finishes', async () => {
    const p = await page(1280, '#/run/approve-1');
    await state(p, 'run');
    expect(
      await p.locator('#pending button[data-reply]').evaluateAll((bs) => bs.map((b) => b.getAttribute('data-reply'))),
    ).toEqual(['approve', 'deny', 'cancel']);
    expect(await p.locator('#pending-args').textContent()).toContain('ana@example.com');
    expect(await p.locator('#tail-row').textContent()).toContain('waiting for a person: approval of send');
    await p.screenshot({ path: join(SHOTS, 'approval-1280.png') });
    await p.click('#pending button[data-reply="approve"]');
    await p.waitForSelector('#app[data-status="ended"]', { timeout: 15_000 });
    expect(await p.locator('#steps-count').textContent()).toBe('2');
    expect(SENT.filter((s) => s.runId === 'approve-1')).toEqual([{ runId: 'approve-1', to: 'ana@example.com' }]);
    await p.close();
  }, 30_000);

  it('answers each of several open requests from its own panel, in any order, and shows each call of the step', async () => {
    await runIn(dir, 'several-e2e');
    const p = await page(1280, '#/run/several-e2e');
    await state(p, 'run');
    const panel = (id: string): string => `#pending .pending-panel[data-result-id="${id}"]`;
    await p.waitForSelector(panel('s0.a1.input'));
    const ids = (): Promise<(string | null)[]> =>
      p.locator('#pending .pending-panel').evaluateAll((ps) => ps.map((x) => x.getAttribute('data-result-id')));
    expect(await ids()).toEqual(['s0.a0.input', 's0.a1.input']);
    expect(await p.locator(`${panel('s0.a0.input')} .args`).textContent()).toContain('ana@example.com');
    expect(await p.locator(`${panel('s0.a1.input')} .args`).textContent()).toContain('bo@example.com');
    expect(
      await p
        .locator(`${panel('s0.a1.input')} button[data-reply]`)
        .evaluateAll((bs) => bs.map((b) => b.getAttribute('data-reply'))),
    ).toEqual(['approve', 'deny', 'cancel']);
    expect(await p.locator('#tail-row').textContent()).toContain('waiting for a person: 2 requests');
    await p.click('#tail-row');
    await p.waitForSelector('#detail .call-row');
    expect(await p.locator('#detail .call-row').allTextContents()).toEqual([
      expect.stringMatching(/s0\.a0.*send.*awaiting approval: s0\.a0\.input/),
      expect.stringMatching(/s0\.a1.*send.*awaiting approval: s0\.a1\.input/),
      expect.stringMatching(/s0\.a2.*lookup.*not run yet/),
    ]);
    await p.screenshot({ path: join(SHOTS, 'several-1280.png') });
    // The second first, with a reason: the first panel stays, as it was.
    await p.fill(`${panel('s0.a1.input')} input[name="reason"]`, 'Not Bo.');
    await p.click(`${panel('s0.a1.input')} button[data-reply="deny"]`);
    await p.waitForFunction(() => document.querySelectorAll('#pending .pending-panel').length === 1, undefined, {
      timeout: 15_000,
    });
    expect(await ids()).toEqual(['s0.a0.input']);
    await p.click(`${panel('s0.a0.input')} button[data-reply="approve"]`);
    await p.waitForSelector('#app[data-status="ended"]', { timeout: 15_000 });
    expect(SENT.filter((s) => s.runId === 'several-e2e')).toEqual([{ runId: 'several-e2e', to: 'ana@example.com' }]);
    await p.click('.row[data-index="0"]');
    await p.waitForSelector('#detail .call-row');
    expect(await p.locator('#detail .call-row').allTextContents()).toEqual([
      expect.stringMatching(/s0\.a0.*send.*executed.*sent/),
      expect.stringMatching(/s0\.a1.*send.*denied.*Not Bo\./),
      expect.stringMatching(/s0\.a2.*lookup.*executed.*Oslo/),
    ]);
    await p.close();
  }, 45_000);

  it("links a parent run to its sub-agent run, and answers the sub-agent's approval from the parent's page", async () => {
    await runIn(dir, 'family-e2e');
    const child = 'family-e2e.s0.action';
    const p = await page(1280, `#/run/${child}`);
    // The sub-agent run's own page: its parent, and a reply routed to the parent's request.
    await p.waitForSelector('#parent-run a');
    expect(await p.locator('#parent-run a').getAttribute('href')).toBe('#/run/family-e2e');
    expect(await p.locator('#pending .route-note').textContent()).toContain('its request s0.c0');
    await p.evaluate(() => (location.hash = '#/run/family-e2e'));
    await p.waitForSelector(`#children li[data-run-id="${child}"][data-state="awaiting_input"]`);
    expect(await p.locator('#pending h2').textContent()).toBe(
      `Waiting for a person: approval at step #0 of sub-agent run ${child}`,
    );
    expect(await p.locator('#asked-run').getAttribute('href')).toBe(`#/run/${child}`);
    expect(await p.locator('#pending-args').textContent()).toContain('found it');
    expect(
      await p.locator('#pending button[data-reply]').evaluateAll((bs) => bs.map((b) => b.getAttribute('data-reply'))),
    ).toEqual(['approve', 'deny', 'cancel']);
    expect(await p.locator('#tail-row').textContent()).toContain(
      `approval of note({"text":"found it"}) in sub-agent run ${child}`,
    );
    await p.screenshot({ path: join(SHOTS, 'sub-agent-1280.png') });
    await p.click('#pending button[data-reply="approve"]');
    await p.waitForSelector('#app[data-status="ended"]', { timeout: 15_000 });
    await p.waitForSelector(`#children li[data-run-id="${child}"][data-state="finished"]`);
    await p.click('.row[data-index="0"]');
    await p.waitForSelector('#detail #child-run-link');
    expect(await p.locator('.row[data-index="0"] .tag.t-sub-agent').count()).toBe(1);
    await p.click('#detail #child-run-link');
    await p.waitForFunction((id) => document.getElementById('run-title')?.textContent === id, child);
    await p.waitForSelector('#app[data-status="ended"]', { timeout: 15_000 });
    expect(await p.locator('#steps-count').textContent()).toBe('2');
    await p.evaluate(() => (location.hash = '#/'));
    await p.waitForSelector(`tr.child-run a.run-link >> text=${child}`);
    const listed = await p.locator('a.run-link').allTextContents();
    expect(listed[listed.indexOf(child) - 1]).toBe('family-e2e');
    const childLog = readRunLog(await new FileStore({ dir }).readLog(child));
    expect(childLog.trajectory[0]?.observation).toBe('noted found it');
    expect(childLog.ended?.finalAnswer).toBe('the answer is 42');
    await p.close();
  }, 45_000);

  it('offers an upgrade when the agent no longer fits the run: the mismatch, a reason, and the upgrade marked where it took effect', async () => {
    await run(agentVersions(upgradeDir).v1, { runId: 'changed-e2e', goal: 'Tell Ana the weather in Oslo.' });
    const p = await page(1280, '#/run/changed-e2e', upgrading);
    await state(p, 'run');
    expect(await p.locator('#upgrade-form').count()).toBe(0);
    await p.click('#pending button[data-reply="approve"]');
    await p.waitForSelector('#upgrade-form');
    const refused = await p.locator('#reply-status').textContent();
    expect(refused).toMatch(/your agent module does not fit this run: .*differing keys: .*tools/);
    expect(await p.locator('#upgrade-submit').textContent()).toBe('Upgrade and approve');
    await p.fill('#upgrade-reason', 'deploy 42: search added');
    await p.screenshot({ path: join(SHOTS, 'upgrade-offer-1280.png') });
    await p.click('#upgrade-submit');
    await p.waitForSelector('#app[data-status="ended"]', { timeout: 15_000 });
    expect(await p.locator('#steps-count').textContent()).toBe('3');
    await p.waitForSelector('.row[data-index="1"] .tag.t-upgrade');
    expect(await p.locator('.row[data-index="0"] .tag.t-upgrade').count()).toBe(0);
    await p.click('.row[data-index="1"]');
    await p.waitForSelector('#detail .upgrade-note');
    const marker = await p.locator('#detail .upgrade-note').textContent();
    expect(marker).toMatch(
      /^── upgrade before step 1: deploy 42: search added \(changed: context, tools \+search\) at ./,
    );
    await p.screenshot({ path: join(SHOTS, 'upgrade-1280.png') });
    await p.close();
  }, 30_000);

  it("shows a live run's steps as they land, without a reload", async () => {
    // The run waits at its second model call until released: the page opens on a run that is
    // certainly running, with step #0 written, however slow the machine.
    const held = hold('held-live');
    const live = runIn(dir, 'held-live');
    await held.reached;
    const p = await page(1280, '#/run/held-live');
    await p.waitForSelector('#app[data-state="run"][data-steps="1"]');
    expect(await p.locator('#run-status').textContent()).toBe('running');
    const navigations: string[] = [];
    p.on('framenavigated', (f) => navigations.push(f.url()));
    held.release();
    const moreSteps = (): boolean => Number(document.getElementById('app')?.dataset['steps']) > 2;
    await p.waitForFunction(moreSteps, undefined, { timeout: 15_000 });
    await p.waitForSelector('#app[data-status="ended"]', { timeout: 15_000 });
    await live;
    expect(await p.locator('#steps-count').textContent()).toBe('9');
    expect(navigations).toEqual([]);
    await p.close();
  }, 30_000);

  it('is readable at 390 px: the list, and a run resumed after a crash with its mark', async () => {
    const p = await page(390, '#/run/never-settled');
    await state(p, 'run');
    await p.click('.row[data-index="0"]');
    await p.waitForSelector('#detail .resumed-note');
    expect(await p.locator('.row[data-index="0"] .tag.t-resumed').count()).toBe(1);
    expect(await p.locator('#detail .resumed-note').textContent()).toMatch(/settled by a person \(executed\)/);
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await p.screenshot({ path: join(SHOTS, 'run-390.png'), fullPage: true });
    await p.evaluate(() => (location.hash = '#/'));
    await p.waitForSelector('a.run-link >> text=long-1');
    await p.screenshot({ path: join(SHOTS, 'list-390.png') });
    await p.close();
  }, 30_000);

  it('says what is wrong with hostile logs instead of a blank page: torn tail, corrupt line, 5 MB observation', async () => {
    const p = await page(1280, '#/run/finished-torn');
    await state(p, 'run');
    expect(await p.locator('#log-warning').textContent()).toMatch(/torn last line/);
    await p.evaluate(() => (location.hash = '#/run/finished-corrupt'));
    await p.waitForSelector('#log-error');
    expect(await p.locator('#log-error').textContent()).toMatch(/line|:6: not valid JSON/);
    expect(await p.locator('#steps-count').textContent()).toBe('1');
    await p.evaluate(() => (location.hash = '#/run/big-1'));
    await p.waitForSelector('#app[data-state="run"][data-steps="2"]');
    await p.click('.row[data-index="0"]');
    await p.waitForSelector('#detail button >> text=/Show the other/');
    expect(await p.locator('#detail pre.obs').evaluate((e) => e.textContent?.length)).toBe(20_000);
    await p.click('#detail button >> text=/Show the other/');
    await p.waitForFunction(
      () => document.querySelector('#detail pre.obs')?.textContent?.length === 5 * 1024 * 1024,
      undefined,
      { timeout: 15_000 },
    );
    await p.close();
  }, 40_000);

  it('opens a 50,000-step run with only the rows in view in the page, and jumps to its end', async () => {
    const p = await page(1280);
    const started = Date.now();
    await p.evaluate(() => (location.hash = '#/run/long-1'));
    await p.waitForSelector('.row[data-index="0"] .tag, .row[data-index="0"] .dur:not(:empty)');
    console.log(
      `viewer: 50,000-step run open with its first rows in ${Date.now() - started} ms (log already read by the list)`,
    );
    expect(await p.locator('#steps-count').textContent()).toBe('50,000');
    expect(await p.locator('.row').count()).toBeLessThan(80);
    await p.focus('#timeline');
    await p.keyboard.press('End');
    await p.waitForSelector('.row[data-index="49999"].selected');
    await p.waitForSelector('#detail h2 >> text=Step #49999 — final');
    await p.close();
  }, 30_000);
});
