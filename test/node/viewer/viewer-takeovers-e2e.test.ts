/**
 * The run viewer on a run four processes carried out, each after the one before was killed with
 * SIGKILL (test/support/takeovers.ts): the run JSON carries where each later driver took over and
 * which driver ran each step; in Chromium, the timeline tags the steps a later driver took over
 * (how it went on in the tag's title) and the step detail says which driver ran the step.
 */
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLog } from '../../../src/core/index.ts';
import type { ResumedRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { startViewer } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { takenOverRun } from '../../support/takeovers.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { launchChromium } from '../e2e-web/harness.ts';
import { runIn } from './runs.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const dirs = sharedTempDirs();
let dir: string;
let viewer: RunningViewer;
let browser: Browser;
let marks: readonly ResumedRecord[] = [];

const json = async (path: string): Promise<unknown> =>
  (await fetch(`${viewer.origin}${path}`, { headers: { authorization: `Bearer ${viewer.key}` } })).json();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-takeovers-');
  const pageDir = await dirs.make('polyloop-viewer-page-');
  await build({
    configFile: join(ROOT, 'src/viewer/page/vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: pageDir, emptyOutDir: true },
  });
  await takenOverRun(dir, 'crashed');
  await runIn(dir, 'finished-1');
  marks = readRunLog(await new FileStore({ dir }).readLog('crashed')).resumes;
  viewer = await startViewer({ source: await dirSource({ dir, pollMs: 100 }), pageDir });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await viewer?.close();
});

async function runPage(runId: string): Promise<Page> {
  const p = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  p.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  await p.goto(viewer.url);
  await p.evaluate((h) => (location.hash = h), `#/run/${runId}`);
  await p.waitForSelector('#app[data-state="run"]');
  return p;
}

describe('the run viewer on a run later drivers took over', () => {
  it('gives, in the run JSON, where each later driver took over, and for each step the driver that ran it', async () => {
    expect(marks.map((m) => [m.stepIndex, m.resolution])).toEqual([
      [1, 'replay_action'],
      [2, 'replay_action'],
      [4, null],
    ]);
    const summary = (await json('/runs/crashed')) as { resumes: unknown };
    expect(summary.resumes).toEqual(
      marks.map((m, i) => ({ stepIndex: m.stepIndex, resolution: m.resolution, at: m.at, driver: i + 2 })),
    );
    const page = (await json('/runs/crashed/steps?from=0&limit=10')) as { steps: { driver: number }[] };
    expect(page.steps.map((s) => s.driver)).toEqual([1, 2, 3, 3, 4]);
    const plain = (await json('/runs/finished-1')) as { resumes: unknown };
    expect(plain.resumes).toEqual([]);
  });

  it('tags the steps a later driver took over, with how it went on in the title, and says in the detail which driver ran a step', async () => {
    const p = await runPage('crashed');
    await p.waitForSelector('.row[data-index="4"] .tag.t-takeover');
    const tagged = await p.$$eval('.row .tag.t-takeover', (els) =>
      els.map((el) => [el.closest('.row')?.getAttribute('data-index'), el.textContent, el.getAttribute('title')]),
    );
    expect(tagged.map(([i, text]) => [i, text])).toEqual([
      ['1', 'resumed'],
      ['2', 'resumed'],
      ['4', 'resumed'],
    ]);
    expect(tagged[0]?.[2]).toMatch(/^── resumed by a later driver \(driver 2\) at step 1 \(replay_action\) at /);
    expect(tagged[2]?.[2]).toMatch(/^── resumed by a later driver \(driver 4\) at step 4 \(at a step boundary\) at /);
    // One `resumed` tag a row: the mark's.
    expect(await p.locator('.row[data-index="1"] .tag.t-resumed').count()).toBe(1);

    await p.click('.row[data-index="3"]');
    await p.waitForSelector('#detail .driver-note');
    expect(await p.locator('#detail .driver-note').textContent()).toMatch(
      /^Carried out by driver 3 of 4: a later driver, which took the run over at step 2 \(in flight: replay_action\) at /,
    );
    expect(await p.locator('#detail .resume-note').count()).toBe(0);

    await p.click('.row[data-index="4"]');
    await p.waitForSelector('#detail .resume-note');
    expect(await p.locator('#detail .resume-note').textContent()).toMatch(
      /driver 4\) at step 4 \(at a step boundary\)/,
    );
    expect(await p.locator('#detail .driver-note').textContent()).toMatch(
      /^Carried out by driver 4 of 4: .*at a step boundary/,
    );

    await p.click('.row[data-index="0"]');
    await p.waitForSelector('#detail h2 >> text=Step #0');
    expect(await p.locator('#detail .driver-note').textContent()).toBe(
      'Carried out by driver 1 of 4: the one that started the run.',
    );
    await p.close();
  }, 60_000);

  it('marks nothing on a run one driver carried from start to end', async () => {
    const p = await runPage('finished-1');
    await p.click('.row[data-index="0"]');
    await p.waitForSelector('#detail h2 >> text=Step #0');
    expect(await p.locator('.tag.t-takeover').count()).toBe(0);
    expect(await p.locator('#detail .driver-note').count()).toBe(0);
    await p.close();
  }, 60_000);
});
