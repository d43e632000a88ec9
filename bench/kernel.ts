/**
 * Sections 1, 2 and 5: kernel overhead per step (InMemoryStore), durable step cost (FileStore)
 * and concurrency — each next to its floor, sampled in alternation
 * so that machine load hits both alike.
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryStore, run } from '../src/core/index.ts';
import type { RunStore } from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { benchAgent, benchRequest, instantModel } from './fixtures.ts';
import { floorLoop, openFloorLog } from './floors.ts';
import { collectGarbage, median, PeakHeap } from './stats.ts';

/** One figure next to its floor. */
export type Row = {
  readonly section: string;
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  readonly floor: number | null;
  readonly samples: readonly number[];
  readonly floorSamples: readonly number[];
  readonly note?: string;
};

/** How many samples (after how many warm-ups) every figure takes. */
export type Plan = { readonly runs: number; readonly warmup: number; readonly quick: boolean };

/** Sample every function in turn (warm-ups first), returning each one's samples. */
export async function sampleAll(fns: readonly (() => Promise<number>)[], plan: Plan): Promise<number[][]> {
  for (let i = 0; i < plan.warmup; i++) for (const fn of fns) await fn();
  const out = fns.map(() => [] as number[]);
  for (let i = 0; i < plan.runs; i++) {
    for (const [k, fn] of fns.entries()) {
      collectGarbage();
      out[k]?.push(await fn());
    }
  }
  return out;
}

/** Sample `a` and `b` in alternation (warm-ups first). */
export async function samplePair(a: () => Promise<number>, b: () => Promise<number>, plan: Plan): Promise<{ a: number[]; b: number[] }> {
  const [sa = [], sb = []] = await sampleAll([a, b], plan);
  return { a: sa, b: sb };
}

function row(section: string, name: string, unit: string, pair: { a: number[]; b: number[] } | { a: number[]; b: null }, note?: string): Row {
  return { section, name, unit, value: median(pair.a), floor: pair.b ? median(pair.b) : null, samples: pair.a, floorSamples: pair.b ?? [], ...(note ? { note } : {}) };
}

let seq = 0;
const freshId = (prefix: string): string => `${prefix}-${seq++}`;

/** µs per step of `runs` runs of `n` steps, each on its own run id of one store. */
async function kernelUsPerStep(makeStore: () => Promise<RunStore> | RunStore, n: number, runs: number): Promise<number> {
  const store = await makeStore();
  const agent = benchAgent(store, n);
  const requests = Array.from({ length: runs }, () => benchRequest(freshId('k'), n));
  const t0 = performance.now();
  for (const req of requests) {
    const r = await run(agent, req);
    if (r.stopReason !== 'final_answer' || r.steps !== n) throw new Error(`bench run ended ${r.stopReason} after ${r.steps} steps`);
  }
  return ((performance.now() - t0) * 1000) / (n * runs);
}

async function floorUsPerStep(n: number, runs: number): Promise<number> {
  const model = instantModel(n);
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await floorLoop(model, n);
  return ((performance.now() - t0) * 1000) / (n * runs);
}

/** Section 1: per-step overhead on InMemoryStore for each N, and the growth ratio. */
export async function overhead(plan: Plan, sizes: readonly number[]): Promise<Row[]> {
  const rows: Row[] = [];
  const target = plan.quick ? 2_000 : 20_000;
  for (const n of sizes) {
    const runs = Math.max(1, Math.ceil(target / n));
    const pair = await samplePair(() => kernelUsPerStep(() => new InMemoryStore(), n, runs), () => floorUsPerStep(n, runs), plan);
    rows.push(row('overhead', `per step, InMemoryStore, N=${n.toLocaleString('en-US')}`, 'µs/step', pair, runs > 1 ? `each sample: ${runs} runs` : undefined));
  }
  return rows;
}

/** Section 2: per-step cost on FileStore next to a JSONL loop with two fsyncs per step. */
export async function durable(plan: Plan, n: number): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-'));
  try {
    const kernel = (): Promise<number> => kernelUsPerStep(() => new FileStore({ dir: join(dir, freshId('fs')) }), n, 1);
    const floor = (syncStep: boolean) => async (): Promise<number> => {
      const log = await openFloorLog(join(dir, `${freshId('floor')}.jsonl`));
      const model = instantModel(n);
      const t0 = performance.now();
      await floorLoop(model, n, log, syncStep);
      const us = ((performance.now() - t0) * 1000) / n;
      await log.close();
      return us;
    };
    const [k = [], two = [], three = []] = await sampleAll([kernel, floor(false), floor(true)], plan);
    return [
      row('durable', `per step, FileStore, N=${n}`, 'µs/step', { a: k, b: two }, 'floor: one fd, 4 appends + 2 fsyncs per step'),
      row('durable', `per step, FileStore, N=${n}, vs 3 fsyncs/step`, 'µs/step', { a: k, b: three }, 'same kernel samples; floor also fsyncs the step write, as FileStore does'),
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export { freshId, row };

/** Section 5: `runs` concurrent runs of `steps` steps on one definition and one InMemoryStore. */
export async function concurrency(plan: Plan, runs: number, steps: number): Promise<Row[]> {
  const peaks = { kernel: [] as number[], floor: [] as number[] };
  const kernel = async (): Promise<number> => {
    const heap = new PeakHeap(500);
    const agent = benchAgent(new InMemoryStore(), steps, () => heap.poll());
    const requests = Array.from({ length: runs }, () => benchRequest(freshId('c'), steps));
    const t0 = performance.now();
    const results = await Promise.all(requests.map((r) => run(agent, r)));
    const ms = performance.now() - t0;
    if (results.some((r) => r.steps !== steps)) throw new Error('a concurrent run ended early');
    peaks.kernel.push(heap.peak);
    return ms;
  };
  const floor = async (): Promise<number> => {
    const heap = new PeakHeap(500);
    const model = instantModel(steps, () => heap.poll());
    const t0 = performance.now();
    await Promise.all(Array.from({ length: runs }, () => floorLoop(model, steps)));
    const ms = performance.now() - t0;
    peaks.floor.push(heap.peak);
    return ms;
  };
  const pair = await samplePair(kernel, floor, plan);
  const label = `${runs.toLocaleString('en-US')} concurrent runs × ${steps} steps`;
  return [
    row('concurrency', `${label}: total time`, 'ms', pair),
    row('concurrency', `${label}: peak heap`, 'MiB', { a: peaks.kernel.slice(-plan.runs).map(mib), b: peaks.floor.slice(-plan.runs).map(mib) }, 'heap in use, polled every 500 model calls'),
  ];
}

const mib = (bytes: number): number => bytes / 2 ** 20;
