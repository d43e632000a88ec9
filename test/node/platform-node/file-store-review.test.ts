/** Adversarial review cases for FileStore: each pins a bug that was found and fixed. */
import { appendFile, readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStore } from '../../../src/platform-node/index.ts';
import { modelIntent, modelResult, started } from '../../contract/run-store.contract.ts';
import { tempDir } from './helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function freshDir(): Promise<string> {
  const t = await tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
}

describe('FileStore review: tails written by another driver', () => {
  it('repairs a torn tail left by another process before appending again after re-acquiring the run', async () => {
    const dir = await freshDir();
    const store = new FileStore({ dir, onWarning: () => undefined });
    const release = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    await release();
    // Another process took the run over, wrote half a record and was killed.
    await appendFile(store.logPath('r'), '{"v":"1.0","kind":"intent","inte');
    const again = await store.acquire('r', {});
    await store.readLog('r');
    await store.intent('r', modelIntent(0));
    await store.result('r', 's0.model', modelResult(0));
    await again();
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started', 'intent', 'result']);
    expect((await readFile(store.logPath('r'), 'utf8')).split('\n')).toHaveLength(4);
  });
});
