/**
 * What `historyWindow` costs and saves (decision 0084): µs a step and the kernel's heap at a
 * step, with and without a window, at two run lengths, on a store that keeps nothing (so the heap
 * is the driver's own). Samples alternate between the variants so machine load hits each alike.
 * `node --expose-gc --import tsx bench/history-window.ts [N] [samples]`; with `resume [N]`, the heap
 * near the end of a windowed run resumed after a crash at 80% of its writes, against the run uninterrupted.
 * @module
 */
import { InMemoryStore, resume, run } from '../src/core/index.ts';
import { faultyStore } from '../src/testing/index.ts';
import type { LogRecord, RunRequest, RunStore } from '../src/core/index.ts';
import { benchAgent, benchRequest } from './fixtures.ts';
import { collectGarbage, heapAfterGc, median } from './stats.ts';

/** A store that keeps nothing: every write lands at once, every log is empty. */
function discardingStore(): RunStore {
  const landed = async (): Promise<void> => undefined;
  return {
    runStarted: landed,
    intent: landed,
    result: landed,
    step: landed,
    runEnded: landed,
    readLog: async (): Promise<LogRecord[]> => [],
  } as unknown as RunStore;
}

type Variant = { readonly name: string; readonly window: number | null };
const VARIANTS: Variant[] = [
  { name: 'no window', window: null },
  { name: 'window 10', window: 10 },
  { name: 'window 100', window: 100 },
];

let ids = 0;
/** One run of `n` steps: µs a step, and the heap after GC at its middle and last model call. */
async function once(v: Variant, n: number): Promise<{ us: number; midMb: number; endMb: number }> {
  const heaps: number[] = [];
  const probe = (call: { readonly callSeq: number }): void => {
    if (call.callSeq === Math.floor(n / 2) || call.callSeq === n - 1) heaps.push(heapAfterGc());
  };
  const timed = benchAgent(discardingStore(), n);
  const probed = benchAgent(discardingStore(), n, probe);
  const req = (agentRun: string): RunRequest => {
    const base = benchRequest(`win-${ids++}-${agentRun}`, n);
    return v.window === null ? base : { ...base, historyWindow: { steps: v.window } };
  };
  collectGarbage();
  const t0 = performance.now();
  await run(timed, req('t'));
  const us = ((performance.now() - t0) * 1000) / n;
  await run(probed, req('h'));
  return { us, midMb: (heaps[0] ?? 0) / 2 ** 20, endMb: (heaps[1] ?? 0) / 2 ** 20 };
}

/** The heap (MB) at step N - 100 of a windowed run, uninterrupted or resumed after a crash. */
async function resumedHeap(n: number, crash: boolean): Promise<number> {
  const inner = new InMemoryStore();
  let heap = 0;
  const probe = (c: { readonly callSeq: number }): void => {
    if (c.callSeq === n - 100) heap = heapAfterGc();
  };
  const req = { ...benchRequest(`resume-${ids++}`, n), historyWindow: { steps: 10 } };
  if (crash) {
    const store = faultyStore(inner, { crashAfterWrites: Math.floor(n * 2 * 0.8) });
    await run(benchAgent(store, n), req).catch(() => undefined);
    await resume(benchAgent(inner, n, probe), req);
  } else await run(benchAgent(inner, n, probe), req);
  return heap / 2 ** 20;
}

if (process.argv[2] === 'resume') {
  const n = Number(process.argv[3] ?? '6000');
  for (let i = 0; i < 2; i++) {
    const [whole, resumed] = [await resumedHeap(n, false), await resumedHeap(n, true)];
    console.log(
      `N=${n}: heap at step ${n - 100} ${whole.toFixed(1)} MB uninterrupted, ${resumed.toFixed(1)} MB resumed`,
    );
  }
  process.exit(0);
}

const [nArg = '20000', samplesArg = '7'] = process.argv.slice(2);
for (const n of [Math.max(1, Math.floor(Number(nArg) / 10)), Number(nArg)]) {
  const got = VARIANTS.map(() => ({ us: [] as number[], mid: [] as number[], end: [] as number[] }));
  for (const v of VARIANTS) await once(v, n);
  for (let s = 0; s < Number(samplesArg); s++) {
    for (const [i, v] of VARIANTS.entries()) {
      const r = await once(v, n);
      got[i]?.us.push(r.us);
      got[i]?.mid.push(r.midMb);
      got[i]?.end.push(r.endMb);
    }
  }
  for (const [i, v] of VARIANTS.entries()) {
    const g = got[i] ?? { us: [], mid: [], end: [] };
    const spread = `${Math.min(...g.us).toFixed(1)}–${Math.max(...g.us).toFixed(1)}`;
    console.log(
      `N=${n} ${v.name}: median ${median(g.us).toFixed(1)} µs/step [${spread}], heap at N/2 ` +
        `${median(g.mid).toFixed(1)} MB, at N ${median(g.end).toFixed(1)} MB`,
    );
  }
}
