/**
 * Section `long` (`npm run bench -- --only=long`): a 100,000-step run on FileStore with readings at
 * every 10,000 steps — heap used after a forced GC, µs/step of that slice, bytes of the log file —
 * then the run "crashes" (its store refuses writes after step N's model intent) and is resumed
 * from its log, timed against reading and parsing the same file. `--long-n=` makes N smaller.
 * Postgres, Chromium and workerd have scripts of their own: bench/long-postgres.ts,
 * bench/long-browser.ts, bench/long-workerd.ts.
 * @module
 */
import { stat } from 'node:fs/promises';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../src/platform-node/index.ts';
import type { Plan, Row } from './kernel.ts';
import { formatLong } from './long-report.ts';
import type { LongResume } from './long-report.ts';
import { crashedLongRun, LONG_SLICE, resumeLong } from './long-workload.ts';
import type { LongFigures, LongProbe } from './long-workload.ts';
import { parseFloorMs } from './resume.ts';
import { heapAfterGc, median } from './stats.ts';

/** The Node probe: heap after two forced GCs; bytes the log file grew by since the last reading. */
export function nodeProbe(size: () => Promise<number>): LongProbe {
  let last = 0;
  return {
    heap: () => Promise.resolve(heapAfterGc()),
    async storedSince() {
      const now = await size();
      const grown = now - last;
      last = now;
      return grown;
    },
  };
}

/** The figures of a long run and its resume as bench rows (section `long`). */
export function longRows(store: string, f: LongFigures, r: LongResume): Row[] {
  const second = f.slices[1] ?? f.slices[0];
  const rows: Row[] = f.slices.map((s) => ({
    section: 'long',
    name: `${store}, µs/step of the slice ending at ${s.steps.toLocaleString('en-US')}`,
    unit: 'µs/step',
    value: s.usPerStep,
    floor: second?.usPerStep ?? null,
    samples: [s.usPerStep],
    floorSamples: [],
    note:
      `floor column = the second slice; heap after GC ${((s.heapBytes ?? 0) / 2 ** 20).toFixed(1)} MiB, ` +
      `stored ${(s.storedBytes / s.steps).toFixed(0)} bytes/step`,
  }));
  rows.push({
    section: 'long',
    name: `${store}, heap slope from ${second?.steps.toLocaleString('en-US')} to ${f.steps.toLocaleString('en-US')}`,
    unit: 'bytes/step',
    value: f.heapSlope ?? Number.NaN,
    floor: null,
    samples: [],
    floorSamples: [],
    note: 'flat heap: near 0',
  });
  rows.push({
    section: 'long',
    name: `${store}, resume at step ${f.steps.toLocaleString('en-US')}`,
    unit: 'ms',
    value: median(r.resumeMs),
    floor: median(r.floorMs),
    samples: r.resumeMs,
    floorSamples: r.floorMs,
    note: `${r.records} records; floor: read the file + JSON.parse every line`,
  });
  return rows;
}

/** `plan.runs` resumes (after `plan.warmup`) of copies of the crashed log at `path`, each beside its floor. */
async function resumeCopies(plan: Plan, dir: string, path: string, n: number): Promise<LongResume> {
  const resumeMs: number[] = [];
  const floorMs: number[] = [];
  let heapAtResume: number | null = null;
  let records = 0;
  for (let i = 0; i < plan.warmup + plan.runs; i++) {
    const copy = new FileStore({ dir: join(dir, `copy-${n}-${i}`) });
    await mkdir(copy.dir, { recursive: true });
    await copyFile(path, copy.logPath('long'));
    records = (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '').length;
    const r = await resumeLong({ store: copy, runId: 'long', n, probe: nodeProbe(() => Promise.resolve(0)) });
    const floor = await parseFloorMs(null, path);
    await rm(copy.dir, { recursive: true, force: true });
    if (i < plan.warmup) continue;
    resumeMs.push(r.ms);
    floorMs.push(floor);
    heapAtResume ??= r.heapBytes;
  }
  return { resumeMs, floorMs, records, heapAtResume };
}

/** A crashed run of `n` steps on a FileStore in `dir`: its figures and its log file. */
async function crashedFileRun(dir: string, n: number): Promise<{ figures: LongFigures; path: string }> {
  const store = new FileStore({ dir });
  const path = store.logPath('long');
  const probe = nodeProbe(() =>
    stat(path).then(
      (s) => s.size,
      () => 0,
    ),
  );
  const figures = await crashedLongRun({ store, runId: 'long', n, probe, every: Math.min(LONG_SLICE, n / 10) });
  return { figures, path };
}

/**
 * The long run on FileStore: one run of `n` steps read at every tenth, `plan.runs` resumes of
 * copies of its log; then the same for a run of n/10 steps, so that resume time per record at
 * both sizes shows whether resume is linear.
 */
export async function longFileStore(plan: Plan, n: number): Promise<{ rows: Row[]; text: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-long-'));
  try {
    const big = await crashedFileRun(join(dir, 'big'), n);
    const bigResume = await resumeCopies(plan, dir, big.path, n);
    const small = await crashedFileRun(join(dir, 'small'), n / 10);
    const smallResume = await resumeCopies(plan, dir, small.path, n / 10);
    const perRecord = (r: LongResume, of: readonly number[]): number => (median(of) * 1000) / r.records;
    const at = (x: number): string => x.toLocaleString('en-US');
    const growth = perRecord(bigResume, bigResume.resumeMs) / perRecord(smallResume, smallResume.resumeMs);
    const floorGrowth = perRecord(bigResume, bigResume.floorMs) / perRecord(smallResume, smallResume.floorMs);
    const rows = longRows('FileStore', big.figures, bigResume);
    rows.push({
      section: 'long',
      name: `growth: FileStore resume µs/record at ${at(n)} ÷ at ${at(n / 10)}`,
      unit: '×',
      value: growth,
      floor: floorGrowth,
      samples: [],
      floorSamples: [],
      note: 'near 1 when resume is linear in the log',
    });
    const text = [
      formatLong('FileStore (Node)', big.figures, bigResume),
      '',
      `resume at ${at(n / 10)} steps (${smallResume.records} records): ` +
        `${median(smallResume.resumeMs).toFixed(0)} ms, floor ${median(smallResume.floorMs).toFixed(0)} ms; ` +
        `µs a record at ${at(n)} ÷ at ${at(n / 10)}: resume ${growth.toFixed(2)}×, floor ${floorGrowth.toFixed(2)}×`,
    ].join('\n');
    return { rows, text };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
