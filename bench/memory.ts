/**
 * Section 4: heap retained after a long run (after GC), peak heap and peak RSS. Each sample is a
 * fresh child process (this file, run as a script), so peak RSS belongs to that run alone.
 * @module
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { InMemoryStore, run } from '../src/core/index.ts';
import { benchAgent, benchRequest, instantModel } from './fixtures.ts';
import { floorLoop } from './floors.ts';
import type { FloorLog } from './floors.ts';
import { row } from './kernel.ts';
import type { Plan, Row } from './kernel.ts';
import { heapAfterGc, PeakHeap } from './stats.ts';

/** What one child reports. */
type Reading = {
  readonly retained: number;
  readonly peakHeap: number;
  readonly peakRss: number;
  readonly baseRss: number;
};

const SELF = fileURLToPath(import.meta.url);

/**
 * The kernel side: run `n` steps on an InMemoryStore and keep what a caller keeps (the result
 * and the store with its log). The floor: the hand-written loop keeping its history and one
 * JSON line per write in an array.
 */
async function measure(kind: 'kernel' | 'floor', n: number): Promise<Reading> {
  const warm =
    kind === 'kernel'
      ? run(benchAgent(new InMemoryStore(), 200), benchRequest('warm', 200))
      : floorLoop(instantModel(200), 200);
  await warm;
  const baseRss = process.memoryUsage().rss;
  const before = heapAfterGc();
  const heap = new PeakHeap(100);
  let kept: unknown;
  if (kind === 'kernel') {
    const store = new InMemoryStore();
    const result = await run(
      benchAgent(store, n, () => heap.poll()),
      benchRequest('memory', n),
    );
    kept = [store, result];
  } else {
    const lines: string[] = [];
    const log: FloorLog = { append: (recs) => Promise.resolve(void lines.push(...recs.map((r) => JSON.stringify(r)))) };
    const answer = await floorLoop(
      instantModel(n, () => heap.poll()),
      n,
      log,
    );
    kept = [lines, answer];
  }
  const retained = heapAfterGc() - before;
  if (!kept) throw new Error('nothing kept');
  return { retained, peakHeap: heap.peak - before, peakRss: process.resourceUsage().maxRSS * 1024, baseRss };
}

async function child(kind: 'kernel' | 'floor', n: number): Promise<Reading> {
  const { stdout } = await promisify(execFile)(process.execPath, [...process.execArgv, SELF, kind, String(n)], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout) as Reading;
}

/** Section 4, over `plan.runs` child processes per side (after `plan.warmup` discarded ones). */
export async function memory(plan: Plan, n: number): Promise<Row[]> {
  const k: Reading[] = [];
  const f: Reading[] = [];
  for (let i = 0; i < plan.warmup + plan.runs; i++) {
    const a = await child('kernel', n);
    const b = await child('floor', n);
    if (i < plan.warmup) continue;
    k.push(a);
    f.push(b);
  }
  const pick = (rs: Reading[], key: keyof Reading, scale: number): number[] => rs.map((r) => r[key] / scale);
  const label = `${n.toLocaleString('en-US')}-step run`;
  return [
    row(
      'memory',
      `${label}: heap retained after GC, per step`,
      'bytes/step',
      { a: pick(k, 'retained', n), b: pick(f, 'retained', n) },
      'kernel keeps result + InMemoryStore log; floor keeps history + JSON lines',
    ),
    row(
      'memory',
      `${label}: peak heap above baseline`,
      'MiB',
      { a: pick(k, 'peakHeap', 2 ** 20), b: pick(f, 'peakHeap', 2 ** 20) },
      'polled every 100 model calls',
    ),
    row(
      'memory',
      `${label}: peak RSS of the process`,
      'MiB',
      { a: pick(k, 'peakRss', 2 ** 20), b: pick(f, 'peakRss', 2 ** 20) },
      `RSS before the run: ${(pick(k, 'baseRss', 2 ** 20)[0] ?? 0).toFixed(0)} MiB (node + tsx)`,
    ),
  ];
}

if (process.argv[1] === SELF) {
  const kind = process.argv[2] === 'floor' ? 'floor' : 'kernel';
  process.stdout.write(JSON.stringify(await measure(kind, Number(process.argv[3] ?? 10_000))));
}
