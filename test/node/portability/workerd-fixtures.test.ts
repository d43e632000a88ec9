/**
 * The workerd side of the cross-runtime fixtures, driven from Node: real workerd (Miniflare) runs
 * the reference on a DurableObjectStore, crashes it at each cut and exports the log. The workers
 * pool cannot write files, so this test is where the workerd-* fixtures come from
 * (POLYLOOP_WRITE_FIXTURES=1); otherwise it checks they are still what workerd writes.
 */
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUTS, meaningOf } from '../../portability/cuts.ts';
import type { Cut } from '../../portability/cuts.ts';
import { bundleWorker, ROOT } from '../platform-workers/miniflare-harness.ts';
import { readFixture, WRITE_FIXTURES, writeFixture } from './fixture-files.ts';

let mf: Miniflare | null = null;

beforeAll(async () => {
  const script = await bundleWorker(join(ROOT, 'test/portability/workerd-worker.ts'));
  mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2026-04-20',
    durableObjects: { FIXTURES: { className: 'FixtureObject', useSQLite: true } },
  });
  await mf.ready;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
});

/** The log a Durable Object leaves at the cut, exported in workerd. */
async function workerdLog(cut: Cut): Promise<string> {
  if (!mf) throw new Error('workerd did not start');
  const res = await mf.dispatchFetch(`http://fixtures.test/?cut=${cut}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`workerd: HTTP ${res.status}: ${text}`);
  return text;
}

describe('the workerd fixtures (DurableObjectStore in real workerd)', () => {
  it.runIf(WRITE_FIXTURES).each(CUTS)('writes the log a Durable Object leaves at the %s cut', async (cut) => {
    const ndjson = await workerdLog(cut);
    writeFixture('workerd', cut, ndjson);
    expect(readFixture('workerd', cut)).toBe(ndjson);
  });

  it.skipIf(WRITE_FIXTURES).each(CUTS)(
    'a Durable Object still writes what the %s fixture says (timestamps aside)',
    async (cut) => {
      expect(meaningOf(await workerdLog(cut))).toEqual(meaningOf(readFixture('workerd', cut)));
    },
  );
});
