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
import type { EventSink, RunStore } from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { benchAgent, benchRequest, instantModel } from './fixtures.ts';
import { floorLoop, openFloorLog } from './floors.ts';
import type { StepTimer } from './floors.ts';
import { allocatedBytes, collectGarbage, median, PeakHeap } from './stats.ts';

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
export async function samplePair(
  a: () => Promise<number>,
  b: () => Promise<number>,
  plan: Plan,
): Promise<{ a: number[]; b: number[] }> {
  const [sa = [], sb = []] = await sampleAll([a, b], plan);
  return { a: sa, b: sb };
}

function row(
  section: string,
  name: string,
  unit: string,
  pair: { a: number[]; b: number[] } | { a: number[]; b: null },
  note?: string,
): Row {
  return {
    section,
    name,
    unit,
    value: median(pair.a),
    floor: pair.b ? median(pair.b) : null,
    samples: pair.a,
    floorSamples: pair.b ?? [],
    ...(note ? { note } : {}),
  };
}

let seq = 0;
const freshId = (prefix: string): string => `${prefix}-${seq++}`;

/** µs per step of `runs` runs of `n` steps, each on its own run id of one store. */
async function kernelUsPerStep(
  makeStore: () => Promise<RunStore> | RunStore,
  n: number,
  runs: number,
  withSignal = false,
): Promise<number> {
  const store = await makeStore();
  const agent = benchAgent(store, n);
  const requests = Array.from({ length: runs }, () => benchRequest(freshId('k'), n));
  const opts = withSignal ? { signal: new AbortController().signal } : {};
  const t0 = performance.now();
  for (const req of requests) {
    const r = await run(agent, req, opts);
    if (r.stopReason !== 'final_answer' || r.steps !== n)
      throw new Error(`bench run ended ${r.stopReason} after ${r.steps} steps`);
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
    const pair = await samplePair(
      () => kernelUsPerStep(() => new InMemoryStore(), n, runs),
      () => floorUsPerStep(n, runs),
      plan,
    );
    rows.push(
      row(
        'overhead',
        `per step, InMemoryStore, N=${n.toLocaleString('en-US')}`,
        'µs/step',
        pair,
        runs > 1 ? `each sample: ${runs} runs` : undefined,
      ),
    );
  }
  // A caller's signal makes every wait raceable (abort, grace period): what that costs.
  const signalRuns = Math.ceil(target / 1_000);
  const signalPair = await samplePair(
    () => kernelUsPerStep(() => new InMemoryStore(), 1_000, signalRuns, true),
    () => floorUsPerStep(1_000, signalRuns),
    plan,
  );
  rows.push(
    row(
      'overhead',
      'per step with an AbortSignal, InMemoryStore, N=1,000',
      'µs/step, signal',
      signalPair,
      `each sample: ${signalRuns} runs; the rows above pass no signal`,
    ),
  );
  rows.push(await allocation(plan, 1_000, 10));
  return rows;
}

/** Bytes allocated per step (JS heap) by `runs` runs of `n` steps, kernel next to the floor loop. */
async function allocation(plan: Plan, n: number, runs: number): Promise<Row> {
  const kernel = async (): Promise<number> => {
    const agent = benchAgent(new InMemoryStore(), n);
    const requests = Array.from({ length: runs }, () => benchRequest(freshId('a'), n));
    return (
      (await allocatedBytes(async () => {
        for (const req of requests) await run(agent, req);
      })) /
      (n * runs)
    );
  };
  const floor = async (): Promise<number> => {
    const model = instantModel(n);
    return (
      (await allocatedBytes(async () => {
        for (let i = 0; i < runs; i++) await floorLoop(model, n);
      })) /
      (n * runs)
    );
  };
  return row(
    'overhead',
    `allocated per step, InMemoryStore, N=${n.toLocaleString('en-US')}`,
    'bytes/step',
    await samplePair(kernel, floor, plan),
    'JS heap, summed over collections (V8 GC profiler)',
  );
}

/** Times each step of a kernel run from its `step_started` to its `step_finished` event (sent once the step is durable). */
function stepTimingSink(onStep: StepTimer): EventSink {
  let t0 = 0;
  return {
    params: Object.freeze({ sink: 'step-timer' }),
    deliver(e): void {
      if (e.type === 'step_started') t0 = performance.now();
      else if (e.type === 'step_finished') onStep(performance.now() - t0, e.step.decision === 'final');
    },
  };
}

/** Step times (µs) of one sample, split into action steps and final answers. */
type StepTimes = { action: number[]; final: number[] };
const stepTimes = (): StepTimes => ({ action: [], final: [] });
const timer =
  (into: StepTimes): StepTimer =>
  (ms, final) =>
    void (final ? into.final : into.action).push(ms * 1000);

/**
 * Section 2: per-step cost on FileStore next to the floor of decision 0040 (one fd; an action
 * step two append+fsync pairs, a final answer one). Each sample is one run of `n` steps plus
 * `finals` two-step runs (an action, then the final answer timed: a run's first barrier also
 * fsyncs the directory, which is no step's cost); step times come from the step events.
 */
export async function durable(plan: Plan, n: number, finals = 20): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-'));
  const kernelSteps: number[][] = [];
  const kernelFinals: number[][] = [];
  const floorSteps: number[][] = [];
  const floorFinals: number[][] = [];
  try {
    const kernel = async (): Promise<number> => {
      const times = stepTimes();
      const store = new FileStore({ dir: join(dir, freshId('fs')) });
      const events = stepTimingSink(timer(times));
      const t0 = performance.now();
      const r = await run(benchAgent(store, n, undefined, events), benchRequest(freshId('d'), n));
      const us = ((performance.now() - t0) * 1000) / n;
      if (r.stopReason !== 'final_answer' || r.steps !== n)
        throw new Error(`bench run ended ${r.stopReason} after ${r.steps} steps`);
      const short = stepTimes();
      const shortEvents = stepTimingSink(timer(short));
      for (let i = 0; i < finals; i++)
        await run(benchAgent(store, 2, undefined, shortEvents), benchRequest(freshId('f'), 2));
      kernelSteps.push(times.action);
      kernelFinals.push(short.final);
      return us;
    };
    const floor = async (): Promise<number> => {
      const times = stepTimes();
      const log = await openFloorLog(join(dir, `${freshId('floor')}.jsonl`));
      const t0 = performance.now();
      await floorLoop(instantModel(n), n, log, timer(times));
      const us = ((performance.now() - t0) * 1000) / n;
      const short = stepTimes();
      for (let i = 0; i < finals; i++) await floorLoop(instantModel(2), 2, log, timer(short));
      await log.close();
      floorSteps.push(times.action);
      floorFinals.push(short.final);
      return us;
    };
    const [k = [], f = []] = await sampleAll([kernel, floor], plan);
    // Medians of each sample's step times; warm-up samples dropped.
    const per = (samples: number[][]): number[] => samples.slice(-plan.runs).map(median);
    return [
      row(
        'durable',
        `per step, FileStore, N=${n}`,
        'µs/step',
        { a: k, b: f },
        'whole run / N (run start and end included); floor: 2 append+fsync pairs per action step',
      ),
      row(
        'durable',
        `action step, FileStore (modelReplayPolicy safe)`,
        'µs',
        { a: per(kernelSteps), b: per(floorSteps) },
        'step_started → step_finished (durable); floor: 2 append+fsync pairs + tool',
      ),
      row(
        'durable',
        `final-answer step, FileStore`,
        'µs',
        { a: per(kernelFinals), b: per(floorFinals) },
        `the final steps of ${finals} two-step runs per sample; floor: 1 append+fsync pair`,
      ),
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
    row(
      'concurrency',
      `${label}: peak heap`,
      'MiB',
      { a: peaks.kernel.slice(-plan.runs).map(mib), b: peaks.floor.slice(-plan.runs).map(mib) },
      'heap in use, polled every 500 model calls',
    ),
  ];
}

const mib = (bytes: number): number => bytes / 2 ** 20;
