/**
 * `polyloop show` on a run a crash loop resumed ten thousand times at one step: the marks alike in a
 * row fold into one line (how many, the first and the last time), so the listing stays a screen;
 * `--json` keeps every mark.
 */
import { describe, expect, it } from 'vitest';
import { run } from '../../../src/core/index.ts';
import type { ResumedRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { harness } from '../core/fixtures.ts';
import { polyloop } from '../platform-node/helpers.ts';

const dirs = sharedTempDirs();
const MARKS = 10_000;

describe('polyloop show on a run resumed ten thousand times', () => {
  it('folds a row of alike marks into one line, and --json keeps them all', async () => {
    const dir = await dirs.make('polyloop-cli-many-marks-');
    const store = new FileStore({ dir });
    const script = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];
    const h = harness({ script, store: faultyStore(store, { crashAfterWrites: 5 }) });
    await expect(run(h.agent, h.request)).rejects.toMatchObject({ name: 'StoreError' });
    const at = (i: number): string => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    for (let i = 0; i < MARKS; i++) {
      const mark: ResumedRecord = { kind: 'resumed', v: '1.2', stepIndex: 1, resolution: 'reissue_model', at: at(i) };
      await store.resumed('run-1', mark);
    }
    const shown = await polyloop(['show', dir, 'run-1']);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n').filter((l) => l.startsWith('── resumed'));
    expect(lines).toEqual([
      `── resumed by ${MARKS} later drivers in a row at step 1 (reissue_model), the first at ${at(0)}, ` +
        `the last at ${at(MARKS - 1)}`,
    ]);
    const json = JSON.parse((await polyloop(['show', dir, 'run-1', '--json'])).stdout) as { resumes: unknown[] };
    expect(json.resumes).toHaveLength(MARKS);
  }, 60_000);
});
