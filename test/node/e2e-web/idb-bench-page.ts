/**
 * Page of idb-bench.mts: times IndexedDBStore writes and reads in the browser it runs in.
 */
import type { RunStore } from '../../../src/core/index.ts';
import { IndexedDBStore } from '../../../src/platform-web/index.ts';
import { actionIntent, modelIntent, modelResult, started, stepWrite } from '../../contract/run-store.contract.ts';

type Timings = Record<string, number[]>;

async function timeSteps(store: RunStore, runId: string, steps: number, t: Timings): Promise<void> {
  const time = async (name: string, fn: () => Promise<void>): Promise<void> => {
    const t0 = performance.now();
    await fn();
    (t[name] ??= []).push(performance.now() - t0);
  };
  await store.runStarted(runId, started(runId));
  for (let i = 0; i < steps; i++) {
    const s0 = performance.now();
    await time('intent (strict, model call)', () => store.intent(runId, modelIntent(i)));
    await time('result (relaxed)', () => store.result(runId, `s${i}.model`, modelResult(i)));
    await time('intent (strict, action)', () => store.intent(runId, actionIntent(i)));
    await time('step (strict, 1 KB observation)', () => store.step(runId, stepWrite(i, 'o'.repeat(1024))));
    (t['one whole step: 4 writes'] ??= []).push(performance.now() - s0);
  }
}

(globalThis as { bench?: unknown }).bench = async (steps: number): Promise<Timings> => {
  const store = new IndexedDBStore({ dbName: `bench-${Date.now()}` });
  const t: Timings = {};
  await timeSteps(store, 'warmup', 20, {});
  await timeSteps(store, 'r', steps, t);
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    await store.readLog('r');
    (t[`readLog of ${steps * 4 + 1} records`] ??= []).push(performance.now() - t0);
  }
  return t;
};
document.body.dataset['ready'] = 'true';
