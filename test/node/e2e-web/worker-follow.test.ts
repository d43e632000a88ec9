/**
 * The web example follows a run hosted by the Worker: the demo Worker in real workerd (Miniflare,
 * on loopback HTTP), the page under the Vite dev server whose `server.proxy` puts the Worker on
 * the page's own origin (`/worker`), real Chromium. The run is started over HTTP by the test,
 * stops for a person's approval, is approved from the page, and the page follows it to its end.
 * The same page also calls a Worker on another origin directly, which `createApp`'s `cors`
 * option lets in. The steps are numbered as the CLI numbers them (`#0` first), in both panels.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Miniflare } from 'miniflare';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bundleWorker, ROOT, startWorker, TOKEN } from '../platform-workers/miniflare-harness.ts';
import { startDevServed } from './harness.ts';
import type { DevServed } from './harness.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

let mf: Miniflare;
/** The demo Worker again, behind `createApp`'s `cors` option allowing the page's origin: called directly, cross-origin. */
let direct: Miniflare;
let served: DevServed;
let dir = '';

/** A Worker entry like the demo's, whose app lets `origin` in (`createApp({ cors })`). */
async function corsWorker(origin: string): Promise<string> {
  const entry = join(dir, 'cors-worker.ts');
  await writeFile(
    entry,
    [
      `export { RunObject } from ${JSON.stringify(join(ROOT, 'examples/workers/worker.ts'))};`,
      `import { createApp } from ${JSON.stringify(join(ROOT, 'src/platform-workers/index.ts'))};`,
      `export default createApp({ runs: (env) => env.RUNS, cors: { origins: [${JSON.stringify(origin)}] } });`,
    ].join('\n'),
  );
  return bundleWorker(entry);
}

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-web-worker-');
  mf = await startWorker(await bundleWorker(join(ROOT, 'examples/workers/worker.ts')), dir, {
    host: '127.0.0.1',
    port: 0,
  });
  served = await startDevServed((await mf.ready).origin);
  await mkdir(join(dir, 'direct'));
  direct = await startWorker(await corsWorker(served.origin), join(dir, 'direct'), { host: '127.0.0.1', port: 0 });
}, 120_000);

afterAll(async () => {
  await served?.close();
  await mf?.dispose();
  await direct?.dispose();
});

/** The page, its Worker panel pointed at the proxied Worker with the token typed in. */
async function openPanel(page: Page): Promise<void> {
  page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  await page.goto(`${served.origin}/?run=idle-tab&think=0&tool=0`);
  await page.waitForSelector('body[data-state="idle"]', { state: 'attached' });
  expect(await page.inputValue('#worker-url')).toBe('/worker');
  await page.fill('#worker-token', TOKEN);
}

const stepLabels = (page: Page, list: string): Promise<string[]> => page.locator(`${list} li .num`).allTextContents();

describe('the web example and a run on the Worker', () => {
  it('follows a run started over HTTP through its approvals to the end, numbering its steps #0 on as the CLI does', async () => {
    const started = await api<{ runId: string }>(mf, '/runs', {
      method: 'POST',
      body: { runId: 'followed', input: { goal: 'hello world', approve: true } },
    });
    expect(started.status).toBe(201);
    const page = await (await served.browser.newContext()).newPage();
    await openPanel(page);
    await page.fill('#worker-run', 'followed');
    await page.click('#worker-follow');
    // The run waits for a person at each reverse_word call: the page shows the request, and the click answers it.
    for (const [resultId, done] of [
      ['s0.input', 0],
      ['s1.input', 1],
    ] as const) {
      await page.waitForSelector(
        `#worker[data-state="awaiting"] #worker-pending[data-result-id="${resultId}"] #worker-approve`,
      );
      expect(await page.locator('#worker-steps li.done').count()).toBe(done);
      expect(await page.textContent('#worker-banner')).toContain(`at step #${done}`);
      await page.click('#worker-approve');
    }
    await page.waitForSelector('#worker[data-state="ended"]', { timeout: 30_000 });
    expect(await page.textContent('#worker-answer')).toBe('olleh dlrow');
    expect(await stepLabels(page, '#worker-steps')).toEqual(['#0', '#1', '#2']);
    expect(await page.locator('#worker-steps li .what').allTextContents()).toEqual([
      'reverse_word({"word":"hello"})',
      'reverse_word({"word":"world"})',
      'answer: olleh dlrow',
    ]);
    const status = await api<{ status: string; finalAnswer: string; steps: number }>(mf, '/runs/followed');
    expect(status.body).toMatchObject({ status: 'ended', finalAnswer: 'olleh dlrow', steps: 3 });
    await mkdir('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/web-example-worker.png', fullPage: true });
    await page.context().close();
  }, 90_000);

  it('starts a run on the Worker from the page and follows it to the end, and a reload follows the same run again', async () => {
    const page = await (await served.browser.newContext()).newPage();
    await openPanel(page);
    await page.fill('#worker-goal', 'abc de');
    await page.click('#worker-start');
    await page.waitForSelector('#worker[data-state="ended"]', { timeout: 30_000 });
    const runId = await page.inputValue('#worker-run');
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await page.textContent('#worker-answer')).toBe('cba ed');
    const status = await api<{ status: string; steps: number }>(mf, `/runs/${runId}`);
    expect(status.body).toMatchObject({ status: 'ended', steps: 3 });
    await page.reload();
    await page.waitForSelector('#worker[data-state="ended"]', { timeout: 30_000 });
    expect(await page.inputValue('#worker-run')).toBe(runId);
    expect(await stepLabels(page, '#worker-steps')).toEqual(['#0', '#1', '#2']);
    await page.context().close();
  }, 90_000);

  it("follows a run on a Worker of another origin, called directly: createApp's cors option lets the page in", async () => {
    const workerOrigin = (await direct.ready).origin;
    expect(workerOrigin).not.toBe(served.origin);
    const page = await (await served.browser.newContext()).newPage();
    await openPanel(page);
    await page.fill('#worker-url', workerOrigin);
    await page.fill('#worker-goal', 'cross origin');
    await page.click('#worker-start');
    await page.waitForSelector('#worker[data-state="ended"]', { timeout: 30_000 });
    expect(await page.textContent('#worker-answer')).toBe('ssorc nigiro');
    expect(await stepLabels(page, '#worker-steps')).toEqual(['#0', '#1', '#2']);
    const runId = await page.inputValue('#worker-run');
    expect((await api<{ status: string }>(direct, `/runs/${runId}`)).body.status).toBe('ended');
    await page.context().close();
  }, 60_000);

  it('says the Worker refused the token, and names an unknown run', async () => {
    const page = await (await served.browser.newContext()).newPage();
    await openPanel(page);
    await page.fill('#worker-token', 'wrong-token');
    await page.fill('#worker-run', 'followed');
    await page.click('#worker-follow');
    await page.waitForSelector('#worker[data-state="failed"]');
    expect(await page.textContent('#worker-banner')).toBe('run "followed": HTTP 401, the Worker refused the token');
    await page.fill('#worker-token', TOKEN);
    await page.fill('#worker-run', 'nobody');
    await page.click('#worker-follow');
    await page.waitForSelector('#worker[data-state="failed"] >> text=HTTP 404');
    expect(await page.textContent('#worker-banner')).toBe('run "nobody": HTTP 404, no run "nobody"');
    await page.context().close();
  }, 60_000);

  it('numbers the steps of the run in the tab #0 to #7, as polyloop show does', async () => {
    const page = await (await served.browser.newContext()).newPage();
    await page.goto(`${served.origin}/?run=numbered&think=0&tool=0`);
    await page.click('#start');
    await page.waitForSelector('#answer-text');
    await page.fill('#answer-text', 'ana@example.com');
    await page.click('#answer');
    await page.waitForSelector('#pending #approve');
    await page.click('#approve');
    await page.waitForSelector('body[data-state="finished"]', { state: 'attached', timeout: 30_000 });
    expect(await stepLabels(page, '#steps')).toEqual(['#0', '#1', '#2', '#3', '#4', '#5', '#6', '#7']);
    await page.context().close();
  }, 60_000);
});
