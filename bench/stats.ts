/**
 * Timing and memory helpers: median of repeated samples after a warm-up, and a heap reading
 * after a forced GC (needs `node --expose-gc`), bytes allocated (V8's GC profiler).
 * @module
 */
import { GCProfiler, getHeapStatistics } from 'node:v8';

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Options of {@link sample}. */
export type SampleOptions = { readonly runs: number; readonly warmup: number };

/**
 * Call `once` `warmup` times (discarded), then `runs` times; each call returns its own figure
 * (usually elapsed time of the part it measures). Returns the median and every sample.
 */
export async function sample(
  once: () => Promise<number>,
  opts: SampleOptions,
): Promise<{ readonly median: number; readonly samples: readonly number[] }> {
  for (let i = 0; i < opts.warmup; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < opts.runs; i++) {
    collectGarbage();
    samples.push(await once());
  }
  return { median: median(samples), samples };
}

/** Milliseconds elapsed while `fn` runs. */
export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Force a full GC; throws when the process was not started with `--expose-gc`. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the benchmarks with node --expose-gc (npm run bench does)');
  gc();
  gc();
}

/** Heap in use after a full GC, in bytes. */
export function heapAfterGc(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** Tracks the highest heap use seen by {@link PeakHeap.poll}, polled every `every` calls. */
export class PeakHeap {
  #peak = 0;
  #calls = 0;
  readonly #every: number;

  constructor(every: number) {
    this.#every = every;
  }

  /** Read the heap every `every`-th call (reading it on every call would dominate the loop). */
  poll(): void {
    if (this.#calls++ % this.#every === 0) this.#peak = Math.max(this.#peak, process.memoryUsage().heapUsed);
  }

  /** The highest reading so far, in bytes (including a final reading now). */
  get peak(): number {
    return Math.max(this.#peak, process.memoryUsage().heapUsed);
  }
}

/**
 * Bytes `fn` allocates on the JS heap: the used heap it grew by between collections, summed over
 * every collection V8's GC profiler reports while it runs (what the collector had to reclaim or
 * keep), plus the growth after the last one. Deterministic enough to compare two versions.
 */
export async function allocatedBytes(fn: () => Promise<unknown>): Promise<number> {
  collectGarbage();
  const profiler = new GCProfiler();
  const start = getHeapStatistics().used_heap_size;
  profiler.start();
  await fn();
  const end = getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop() as {
    statistics: {
      beforeGC: { heapStatistics: { usedHeapSize: number } };
      afterGC: { heapStatistics: { usedHeapSize: number } };
    }[];
  };
  let total = 0;
  let previous = start;
  for (const gc of statistics) {
    total += gc.beforeGC.heapStatistics.usedHeapSize - previous;
    previous = gc.afterGC.heapStatistics.usedHeapSize;
  }
  return total + end - previous;
}
