/**
 * A person in control from the viewer page, in real Chromium (Debian's, through playwright-core):
 * approve with edited arguments (and the refusals of text that is not JSON or not what the tool
 * takes), stop a run another driver is running, fork from a step and from a waiting approval, and
 * read a step's messages as the model saw them — collapsed until opened. The page is built by Vite
 * and served by `startViewer` over a directory of runs made by real runs of the library.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLog } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { startViewer } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { launchChromium } from '../e2e-web/harness.ts';
import agentFor, { hold, SENT } from './agent.ts';
import { runIn } from './runs.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const SHOTS = resolve(ROOT, process.env['POLYLOOP_VIEWER_SHOTS'] ?? 'test-artifacts/viewer');
let dir: string;
let viewer: RunningViewer;
let browser: Browser;

async function open(hash: string): Promise<Page> {
  const p = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  p.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  await p.goto(viewer.url);
  await p.evaluate((h) => (location.hash = h), hash);
  await p.waitForSelector('#app[data-state="run"]');
  return p;
}

const viewOf = async (runId: string) => readRunLog(await new FileStore({ dir }).readLog(runId));
const text = async (p: Page, selector: string): Promise<string> => (await p.locator(selector).textContent()) ?? '';

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-control-e2e-');
  const pageDir = await dirs.make('polyloop-viewer-page-');
  await build({
    configFile: join(ROOT, 'src/viewer/page/vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: pageDir, emptyOutDir: true },
  });
  for (const runId of ['finished-c1', 'approve-c1', 'approve-c2']) await runIn(dir, runId);
  await mkdir(SHOTS, { recursive: true });
  viewer = await startViewer({ source: await dirSource({ dir, agent: agentFor, pollMs: 100 }), pageDir });
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await viewer?.close();
});

describe('a person in control, from the viewer page in Chromium', () => {
  it('approves as edited: text that is not JSON and arguments the tool refuses are shown refused, the edit runs', async () => {
    const p = await open('#/run/approve-c1');
    expect(await p.inputValue('#pending-args')).toContain('ana@example.com');
    await p.fill('#pending-args', '{"to": ');
    await p.click('#approve-edited');
    expect(await text(p, '#reply-status')).toMatch(/^Refused: the edited arguments are not JSON/);
    await p.fill('#pending-args', '{}');
    await p.click('#approve-edited');
    await p.waitForFunction(() =>
      /do not match its schema/.test(document.getElementById('reply-status')?.textContent ?? ''),
    );
    expect(await text(p, '#reply-status')).toMatch(/Refused: .*the edited arguments are refused: .*to/);
    expect((await viewOf('approve-c1')).state).toBe('awaiting_input');
    await p.fill('#pending-args', '{\n  "to": "bo@example.com"\n}');
    await p.screenshot({ path: join(SHOTS, 'edit-1280.png') });
    await p.click('#approve-edited');
    await p.waitForSelector('#app[data-status="ended"]', { timeout: 15_000 });
    expect(SENT.filter((s) => s.runId === 'approve-c1')).toEqual([{ runId: 'approve-c1', to: 'bo@example.com' }]);
    await p.close();
  }, 40_000);

  it('stops a run another driver is running: the run ends cancelled and the page shows the reason', async () => {
    const held = hold('held-c1');
    const live = runIn(dir, 'held-c1');
    await held.reached;
    const p = await open('#/run/held-c1');
    expect(await p.locator('details#stop').getAttribute('open')).toBeNull();
    await p.click('details#stop summary');
    await p.fill('#stop-reason', 'the customer called');
    await p.screenshot({ path: join(SHOTS, 'stop-1280.png') });
    await p.click('#stop-submit');
    const result = await live;
    held.release();
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'the customer called' } });
    await p.waitForSelector('#app[data-status="ended"]', { timeout: 15_000 });
    expect(await text(p, '#stop-request')).toBe('the customer called');
    expect(await p.locator('details#stop').count()).toBe(0);
    await p.close();
  }, 40_000);

  it("forks from a step, links the fork, and the fork's page says where it came from", async () => {
    const p = await open('#/run/finished-c1');
    await p.click('#timeline .row[data-index="1"]');
    await p.click('details#fork summary');
    expect(await p.inputValue('#fork-run-id')).toBe('finished-c1-fork-1');
    await p.fill('#fork-run-id', 'bad id');
    await p.click('#fork-submit');
    await p.waitForFunction(() => /^Refused: /.test(document.getElementById('fork-status')?.textContent ?? ''));
    expect(await text(p, '#fork-status')).toMatch(/newRunId must be 1 to 200 characters/);
    await p.fill('#fork-run-id', 'finished-c1-again');
    await p.click('#fork-submit');
    await p.waitForSelector('#fork-link');
    await p.click('#fork-link');
    await p.waitForSelector('#forked-from');
    expect(await text(p, '#forked-from')).toMatch(/^Forked from finished-c1 at step #1/);
    expect(await p.locator('#forked-from-link').getAttribute('href')).toBe('#/run/finished-c1');
    expect(await text(p, '#steps-count')).toBe('1');
    expect((await viewOf('finished-c1-again')).started?.forkedFrom).toEqual({ runId: 'finished-c1', atStep: 1 });
    await p.screenshot({ path: join(SHOTS, 'fork-1280.png') });
    await p.close();
  }, 40_000);

  it('forks a run at the approval it waits for: the fork waits for the same request', async () => {
    const p = await open('#/run/approve-c2');
    await p.click('#tail-row');
    await p.click('details#fork summary');
    await p.fill('#fork-run-id', 'approve-c2-other');
    await p.click('#fork-submit');
    await p.click('#fork-link');
    await p.waitForSelector('#forked-from');
    await p.waitForSelector('#pending .pending-panel[data-result-id="s0.input"]');
    expect(await p.inputValue('#pending-args')).toContain('ana@example.com');
    expect((await viewOf('approve-c2')).state).toBe('awaiting_input');
    await p.close();
  }, 40_000);

  it("shows a step's messages as the model saw them, collapsed until opened: the goal, the history, the tools", async () => {
    const p = await open('#/run/finished-c1');
    await p.click('#timeline .row[data-index="2"]');
    await p.waitForSelector('details#step-messages');
    expect(await p.locator('details#step-messages').getAttribute('open')).toBeNull();
    expect(await p.locator('#step-messages li.message').count()).toBe(0);
    await p.click('details#step-messages summary');
    await p.waitForSelector('#step-messages li.message');
    const parts = await p
      .locator('#step-messages li.message')
      .evaluateAll((els) => els.map((e) => e.querySelector('.message-head')?.textContent));
    expect(parts).toEqual([
      'user · goal',
      'assistant · history of step #0',
      'user · history of step #0',
      'assistant · history of step #1',
      'user · history of step #1',
    ]);
    expect(await text(p, '#step-messages li.m-goal pre')).toBe('Which city is warmer?');
    expect(await text(p, '#messages-tools')).toMatch(/Tools handed with the call \(3\).*lookup — Look a city up\./s);
    expect(await text(p, '#messages-limits')).toMatch(/model caller/);
    await p.locator('#detail').screenshot({ path: join(SHOTS, 'messages-1280.png') });
    await p.close();
  }, 40_000);
});
