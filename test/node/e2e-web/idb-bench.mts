/**
 * IndexedDBStore write and read latency in Debian's headless Chromium (not part of `npm test`).
 * Run: `npx tsx test/node/e2e-web/idb-bench.mts [steps]` — prints median and p95 per operation.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { launchChromium, serve } from './harness.ts';

const steps = Number(process.argv[2] ?? 200);
const dir = await mkdtemp(join(tmpdir(), 'polyloop-idb-bench-'));
await build({
  entryPoints: [resolve(import.meta.dirname, 'idb-bench-page.ts')],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  outfile: join(dir, 'bench.js'),
  logLevel: 'warning',
});
await writeFile(
  join(dir, 'index.html'),
  '<!doctype html><meta charset="utf-8"><body><script type="module" src="/bench.js"></script></body>',
);
const server = await serve(dir);
const address = server.address();
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  const timings = await page.evaluate(
    (n) => (globalThis as unknown as { bench(n: number): Promise<Record<string, number[]>> }).bench(n),
    steps,
  );
  const q = (xs: number[], p: number): string =>
    ([...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0).toFixed(2);
  console.log(`| operation (${steps} steps) | median ms | p95 ms |\n|---|---|---|`);
  for (const [name, xs] of Object.entries(timings)) console.log(`| ${name} | ${q(xs, 0.5)} | ${q(xs, 0.95)} |`);
} finally {
  await browser.close();
  server.close();
  await rm(dir, { recursive: true, force: true });
}
