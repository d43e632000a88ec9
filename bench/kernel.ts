/**
 * Sections 1, 2 and 5: kernel overhead per step (InMemoryStore), durable step cost (FileStore)
 * and concurrency — each next to its floor, sampled in alternation
 * so that machine load hits both alike.
 * @module
 */
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryStore, run } from '../src/core/index.ts';
import type { EventSink, RunStore } from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { benchAgent, benchRequest, instantModel, noopTool } from './fixtures.ts';
import { durableFloorRunUs, durableFloorSteps, floorLoop, noopToolWith, openFloorLog } from './floors.ts';
import type { StepBytes } from './floors.ts';
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

/** Bytes of a kernel log at each step's start, and at each tool call (its action intent durable by then). */
type LogSizes = { readonly atStart: number[]; readonly atTool: number[] };
const sizeOf = (path: string): number => statSync(path, { throwIfNoEntry: false })?.size ?? 0;

/** What the kernel wrote at each action step's two barriers: up to its tool call, and the step record after. */
function stepBytes(s: LogSizes): StepBytes[] {
  return s.atTool.map((tool, i) => ({ first: tool - (s.atStart[i] ?? 0), second: (s.atStart[i + 1] ?? tool) - tool }));
}

/**
 * Times each step of a kernel run from its `step_started` to its `step_finished` event (sent once
 * the step is durable), less `aside()` (time the step spent on the floor's step run inside its
 * tool); notes the log's size at each step's start (before the clock starts) into `sizes`.
 */
function stepTimingSink(path: string, sizes: LogSizes, into: StepTimes, aside = (): number => 0): EventSink {
  let t0 = 0;
  return {
    params: Object.freeze({ sink: 'step-timer' }),
    deliver(e): void {
      if (e.type === 'step_started') {
        sizes.atStart.push(sizeOf(path));
        t0 = performance.now();
      } else if (e.type === 'step_finished') {
        const us = (performance.now() - t0 - aside()) * 1000;
        (e.step.decision === 'final' ? into.final : into.action).push(us);
        if (e.step.decision === 'final') sizes.atStart.push(sizeOf(path));
      }
    },
  };
}

/** Step times (µs) of one sample, split into action steps and final answers. */
type StepTimes = { action: number[]; final: number[] };
const stepTimes = (): StepTimes => ({ action: [], final: [] });

/**
 * The action steps of one kernel run of `n` steps on FileStore, each beside a floor step: the
 * kernel's tool runs step `i` of the durable floor (its own model call, two append+fsync pairs
 * and tool call, on its own log) and the kernel's step is timed without that time — so a burst of
 * machine load hits the two in the same millisecond, not in two samples seconds apart. The floor
 * runs while the kernel's log is clean (its action intent fsynced), and writes `bytes` (the
 * kernel's at the same step, from the previous sample), so the same bytes reach the disk.
 */
async function pairedActionSteps(dir: string, n: number, bytes: readonly StepBytes[]) {
  const store = new FileStore({ dir: join(dir, freshId('fs')) });
  const runId = freshId('d');
  const path = store.logPath(runId);
  const floorLog = await openFloorLog(join(dir, `${freshId('floor')}.jsonl`));
  const floorStep = durableFloorSteps(instantModel(n), floorLog);
  const sizes: LogSizes = { atStart: [], atTool: [] };
  const kernel = stepTimes();
  const floor: number[] = [];
  let aside = 0;
  const tools = noopToolWith(async (args) => {
    const t0 = performance.now();
    sizes.atTool.push(sizeOf(path));
    const seq = Number(args.i);
    const t1 = performance.now();
    await floorStep(seq, bytes[seq]);
    const t2 = performance.now();
    floor.push((t2 - t1) * 1000);
    aside = t2 - t0;
    return noopTool(args);
  });
  const events = stepTimingSink(path, sizes, kernel, () => aside);
  const r = await run(benchAgent(store, n, undefined, events), {
    ...benchRequest(runId, n),
    tools,
    executor: tools.executor(),
  });
  await floorLog.close();
  if (r.stopReason !== 'final_answer' || r.steps !== n) throw new Error(`bench run ended ${r.stopReason}`);
  return { kernel: kernel.action, floor, bytes: stepBytes(sizes) };
}

/** µs per step of a whole kernel run of `n` steps on FileStore (run start and end included). */
async function kernelRunUs(dir: string, n: number): Promise<number> {
  const store = new FileStore({ dir: join(dir, freshId('fs')) });
  const t0 = performance.now();
  const r = await run(benchAgent(store, n), benchRequest(freshId('d'), n));
  if (r.stopReason !== 'final_answer' || r.steps !== n) throw new Error(`bench run ended ${r.stopReason}`);
  return ((performance.now() - t0) * 1000) / n;
}

/**
 * The final steps of `runs` two-step runs (an action, then the final answer timed: a run's first
 * barrier also fsyncs the directory, which is no step's cost), the kernel's and the floor's taking
 * turns run by run; each floor run has a log of its own, as each kernel run has, and writes what
 * the kernel run before it wrote.
 */
async function finalSteps(dir: string, runs: number, bytes: readonly StepBytes[]) {
  const kernel = stepTimes();
  const floor = stepTimes();
  let last: number | undefined;
  for (let i = 0; i < runs; i++) {
    const store = new FileStore({ dir: join(dir, freshId('fs')) });
    const runId = freshId('f');
    const sizes: LogSizes = { atStart: [], atTool: [] };
    await run(
      benchAgent(store, 2, undefined, stepTimingSink(store.logPath(runId), sizes, kernel)),
      benchRequest(runId, 2),
    );
    last = (sizes.atStart[2] ?? 0) - (sizes.atStart[1] ?? 0);
    const log = await openFloorLog(join(dir, `${freshId('floor')}.jsonl`));
    const step = durableFloorSteps(instantModel(2), log);
    await step(0, bytes[0]);
    const t0 = performance.now();
    await step(1, last);
    floor.final.push((performance.now() - t0) * 1000);
    await log.close();
  }
  return { kernel: kernel.final, floor: floor.final, last };
}

/**
 * Section 2: per-step cost on FileStore next to the floor of decision 0040 — one fd, opened with
 * FileStore's flags and written its way (a synchronous write, an asynchronous fsync); an action
 * step two append+fsync pairs, a final answer one; the same bytes as the kernel's log. Every
 * sample: one run of `n` steps with the floor's steps paired inside it (the action step row), a
 * kernel run and a floor run of `n` steps (the whole-run row), then `finals` two-step runs of each.
 * Step times come from the step events; each ratio's spread over the samples goes in its note.
 */
export async function durable(plan: Plan, n: number, finals = 20): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-'));
  const action = { a: [] as number[], b: [] as number[], ratios: [] as number[] };
  const final = { a: [] as number[], b: [] as number[], ratios: [] as number[] };
  const whole = { a: [] as number[], b: [] as number[] };
  const add = (into: typeof action, k: readonly number[], f: readonly number[]): void => {
    into.a.push(...k);
    into.b.push(...f);
    into.ratios.push(median(k) / median(f));
  };
  let bytes: StepBytes[] = [];
  try {
    for (let i = 0; i < plan.warmup + plan.runs; i++) {
      collectGarbage();
      const paired = await pairedActionSteps(dir, n, bytes);
      bytes = paired.bytes;
      const finalSample = await finalSteps(dir, finals, bytes);
      const kernelRun = await kernelRunUs(dir, n);
      const floorRun = await durableFloorRunUs(join(dir, `${freshId('floor')}.jsonl`), n, bytes, finalSample.last);
      if (i < plan.warmup) continue;
      add(action, paired.kernel, paired.floor);
      add(final, finalSample.kernel, finalSample.floor);
      whole.a.push(kernelRun);
      whole.b.push(floorRun);
    }
    // Step rows: medians of every step of every sample; the note gives each sample's ratio of medians.
    const spread = (r: readonly number[]): string => `per-sample ratios ${fixed2([...r].sort((x, y) => x - y))}`;
    const wholeRatios = whole.a.map((k, i) => k / (whole.b[i] ?? Number.NaN));
    const pairs = 'floor: 2 append+fsync pairs per action step';
    return [
      row(
        'durable',
        `per step, FileStore, N=${n}`,
        'µs/step',
        whole,
        `whole run / N; ${pairs}; ${spread(wholeRatios)}`,
      ),
      row(
        'durable',
        'action step, FileStore (modelReplayPolicy safe)',
        'µs',
        action,
        `step_started → step_finished (durable), each beside a floor step (2 append+fsync pairs + tool); ` +
          spread(action.ratios),
      ),
      row(
        'durable',
        'final-answer step, FileStore',
        'µs',
        final,
        `the final steps of ${finals} two-step runs per sample, in turn with the floor's (1 append+fsync pair); ` +
          spread(final.ratios),
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
const fixed2 = (xs: readonly number[]): string => xs.map((x) => x.toFixed(2)).join(', ');
