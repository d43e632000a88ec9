/**
 * `node --import tsx bench/long-browser.ts [--n=100000]`: the long run on IndexedDBStore in Debian's
 * headless Chromium (driven with playwright-core as the browser tests drive it; `CHROMIUM_PATH`
 * overrides `/usr/bin/chromium`). The page (bench/long-page.ts) runs, crashes and resumes the run;
 * at every reading it asks this script for the heap, which takes it over the DevTools protocol:
 * `HeapProfiler.collectGarbage`, then `Runtime.getHeapUsage`'s `usedSize` (the page's isolate).
 */
import { resolve } from 'node:path';
import { startBundledPage } from '../test/node/e2e-web/harness.ts';

const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 100_000);
const served = await startBundledPage(resolve(import.meta.dirname, 'long-page.ts'), 'polyloop-bench-long-');
try {
  const page = await served.browser.newPage();
  const cdp = await page.context().newCDPSession(page);
  let readings = 0;
  await page.exposeFunction('longHeap', async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('HeapProfiler.collectGarbage');
    const used = (await cdp.send('Runtime.getHeapUsage')).usedSize;
    // Progress on stderr: a 100,000-step run takes minutes, and its rate tells whether it will finish.
    console.error(`${new Date().toISOString()} reading ${++readings}: heap ${(used / 2 ** 20).toFixed(1)} MiB`);
    return used;
  });
  page.setDefaultTimeout(0);
  await page.goto(`${served.origin}/`);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  const out = await page.evaluate(
    (n) =>
      (globalThis as unknown as { longRun(n: number): Promise<{ text: string; usage: number | null }> }).longRun(n),
    N,
  );
  console.log(out.text);
  console.log(`navigator.storage.estimate().usage at the end (the origin, every database): ${out.usage} bytes`);
  console.log(`LONG BROWSER ${JSON.stringify(out)}`);
} finally {
  await served.close();
}
