/**
 * Where `polyloop view` finds its page: the one `npm run build` made, or — in a checkout without
 * a build — one Vite builds on demand into a cache, or a refusal that says what to run. Never the
 * page's TypeScript source, which a browser cannot run (the page would stay at "Loading…").
 */
import { cp, readFile, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewer, ViewerRefusedError } from '../../../src/viewer/server/viewer.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { defaultPageSearch, isBuiltPage, viewerPage } from '../../../src/viewer/server/view-page.ts';
import type { PageSearch, ViteBuild } from '../../../src/viewer/server/view-page.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { launchChromium } from '../e2e-web/harness.ts';
import { runIn } from './runs.ts';

const SOURCE = resolve(import.meta.dirname, '../../../src/viewer/page');
let tmp: string;
let runs: string;
let browser: Browser;

const dirs = sharedTempDirs();

beforeAll(async () => {
  tmp = await dirs.make('polyloop-view-page-');
  runs = join(tmp, 'runs');
  await runIn(runs, 'finished-1');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** Vite's build, counted. */
async function countedVite(): Promise<{ build: ViteBuild; count: () => number }> {
  const { build } = await import('vite');
  let n = 0;
  return { build: async (config) => (n++, build(config)), count: () => n };
}

describe('the page polyloop view serves', () => {
  it('from this checkout with no page given: a page the browser runs (the run list), never the TypeScript source', async () => {
    const viewer = await startViewer({ source: await dirSource({ dir: runs }) });
    try {
      const html = await (await fetch(`${viewer.origin}/`)).text();
      expect(html).not.toContain('main.ts');
      const script = /<script[^>]*src="([^"]+)"/.exec(html)?.[1] ?? '';
      expect(script).toMatch(/^\/assets\/[\w.-]+\.js$/);
      expect((await fetch(`${viewer.origin}${script}`)).headers.get('content-type')).toMatch(/^text\/javascript/);
      const p = await browser.newPage();
      await p.goto(viewer.url);
      await p.waitForSelector('#app[data-state="list"]', { timeout: 15_000 });
      expect(await p.locator('a.run-link').textContent()).toBe('finished-1');
      await p.close();
    } finally {
      await viewer.close();
    }
  }, 90_000);

  it('takes a directory for a built page only when it holds what the build writes (src/viewer is the source)', async () => {
    expect(isBuiltPage(SOURCE)).toBe(false);
    expect(defaultPageSearch().built).not.toContain(SOURCE);
    expect(defaultPageSearch().source).toBe(SOURCE);
  });

  it('without a built page and without vite, refuses and says what to run', async () => {
    const search: PageSearch = {
      built: [SOURCE, join(tmp, 'nowhere')],
      source: SOURCE,
      cacheDir: join(tmp, 'cache-none'),
      vite: async () => null,
    };
    const refused = await viewerPage(search).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ViewerRefusedError);
    expect((refused as Error).message).toContain('the viewer page is not built: run `npm run build`');
  });

  it('builds on demand once, reuses the build while the sources are the same, and builds again when they change', async () => {
    const source = join(tmp, 'viewer-src');
    await cp(SOURCE, source, { recursive: true });
    // Its vite.config.ts imports vite: from here, as from the checkout.
    await symlink(join(SOURCE, '../../../node_modules'), join(tmp, 'node_modules'), 'dir');
    const vite = await countedVite();
    const search: PageSearch = { built: [], source, cacheDir: join(tmp, 'cache'), vite: async () => vite.build };
    const first = await viewerPage(search);
    expect(isBuiltPage(first)).toBe(true);
    expect(first.startsWith(join(tmp, 'cache'))).toBe(true);
    expect(await viewerPage(search)).toBe(first);
    expect(vite.count()).toBe(1);
    const css = await readFile(join(source, 'style.css'), 'utf8');
    await writeFile(join(source, 'style.css'), `${css}\n.changed { color: red; }\n`);
    const second = await viewerPage(search);
    expect(second).not.toBe(first);
    expect(vite.count()).toBe(2);
    expect(isBuiltPage(first)).toBe(true);
  }, 90_000);
});
