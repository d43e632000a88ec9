/**
 * `npm run bench:workerd`: a durable step on DurableObjectStore in real workerd (Miniflare, SQLite
 * storage persisted on disk), next to a floor taken in the same object and the same run: the same
 * records' lines written with bare `sql.exec` inserts in the same transactions (one per record, the
 * model result and action intent together) with the same `storage.sync()` calls (the target: within
 * 1.5× of it). Kernel and floor samples alternate, so machine load hits both alike. Figures:
 * milliseconds per step of a whole N-step run, measured inside the object (`performance.now()`
 * there) and from Node around the request (which also waits for the output gate). Single steps are
 * not timed: workerd's clock stands still while code runs and moves only at I/O, so a step timed
 * from its events reads 0 ms. `BENCH_WORKERD_N` (default 100) and `BENCH_WORKERD_SAMPLES` (default
 * 7) change the size.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { bundleWorker, ROOT } from '../test/node/platform-workers/miniflare-harness.ts';

const N = Number(process.env['BENCH_WORKERD_N'] ?? 100);
const SAMPLES = Number(process.env['BENCH_WORKERD_SAMPLES'] ?? 7);

type KernelOut = { ms: number; steps: number; records: number };
type FloorOut = { ms: number; records: number; transactions: number; syncs: number };

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function call<T>(mf: Miniflare, path: string): Promise<{ body: T; outsideMs: number }> {
  const t0 = performance.now();
  const res = await mf.dispatchFetch(`http://bench.test${path}`);
  const body = (await res.json()) as T;
  const outsideMs = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
  return { body, outsideMs };
}

const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-workerd-'));
const mf = new Miniflare({
  modules: true,
  script: await bundleWorker(join(ROOT, 'test/workers/fixtures/bench-worker.ts')),
  compatibilityDate: '2026-04-20',
  durableObjects: { BENCH: { className: 'BenchObject', useSQLite: true } },
  durableObjectsPersist: dir,
});
try {
  await mf.ready;
  // Warm-up: one run and its floor, not counted.
  await call<KernelOut>(mf, `/kernel?run=warm&n=${N}`);
  await call<FloorOut>(mf, `/floor?of=warm&run=warm-floor`);
  const kernel: { inside: number[]; outside: number[] } = { inside: [], outside: [] };
  const floor: { inside: number[]; outside: number[] } = { inside: [], outside: [] };
  let shape: FloorOut | null = null;
  for (let s = 0; s < SAMPLES; s++) {
    const k = await call<KernelOut>(mf, `/kernel?run=k${s}&n=${N}`);
    if (k.body.steps !== N) throw new Error(`a bench run ended after ${k.body.steps} of ${N} steps`);
    kernel.inside.push(k.body.ms / N);
    kernel.outside.push(k.outsideMs / N);
    const f = await call<FloorOut>(mf, `/floor?of=k${s}&run=f${s}`);
    floor.inside.push(f.body.ms / N);
    floor.outside.push(f.outsideMs / N);
    shape = f.body;
  }
  const report = {
    steps: N,
    samples: SAMPLES,
    recordsPerRun: shape?.records,
    transactionsPerRun: shape?.transactions,
    syncsPerRun: shape?.syncs,
    kernelMsPerStepInside: median(kernel.inside),
    floorMsPerStepInside: median(floor.inside),
    ratioInside: median(kernel.inside) / median(floor.inside),
    kernelMsPerStepOutside: median(kernel.outside),
    floorMsPerStepOutside: median(floor.outside),
    ratioOutside: median(kernel.outside) / median(floor.outside),
  };
  console.log(
    `bench:workerd — DurableObjectStore in workerd (Miniflare, SQLite on disk), runs of ${N} steps (${N - 1} safe tool steps + a final answer), zero-latency model, ${SAMPLES} samples each, medians`,
  );
  console.log(`${shape?.records} records, ${shape?.transactions} transactions, ${shape?.syncs} storage.sync() a run`);
  console.log('measured        | kernel ms/step | floor ms/step | ratio');
  console.log(
    `inside object   | ${report.kernelMsPerStepInside.toFixed(3).padStart(14)} | ${report.floorMsPerStepInside.toFixed(3).padStart(13)} | ${report.ratioInside.toFixed(2)}×`,
  );
  console.log(
    `from Node       | ${report.kernelMsPerStepOutside.toFixed(3).padStart(14)} | ${report.floorMsPerStepOutside.toFixed(3).padStart(13)} | ${report.ratioOutside.toFixed(2)}×`,
  );
  console.log(`WORKERD BENCH ${JSON.stringify(report)}`);
} finally {
  await mf.dispose();
  await rm(dir, { recursive: true, force: true });
}
