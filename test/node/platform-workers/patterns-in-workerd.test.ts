/**
 * The pattern matcher needs no `eval` or `new Function`: the registry, bundled as wrangler bundles
 * a Worker, validates every pattern case in real workerd (Miniflare), which refuses code generation.
 */
import { Miniflare } from 'miniflare';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { EXPECTED_VERDICTS } from '../../fixtures/pattern-cases.ts';
import { bundleWorker } from './miniflare-harness.ts';

it('validates catastrophic-backtracking patterns in real workerd, where eval is refused', async () => {
  const script = await bundleWorker(fileURLToPath(new URL('../../fixtures/pattern-worker.ts', import.meta.url)));
  const mf = new Miniflare({ modules: true, script, compatibilityDate: '2026-04-20' });
  try {
    const res = await mf.dispatchFetch('http://polyloop.test/');
    const body = (await res.json()) as { refusal: string | null; verdicts: unknown };
    expect(body.refusal).toMatch(/^tool "echo": parameters\.properties\.s\.pattern uses a backreference/);
    expect(body.verdicts).toEqual(EXPECTED_VERDICTS.map((v) => [...v]));
  } finally {
    await mf.dispose();
  }
}, 60_000);
