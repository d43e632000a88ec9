/**
 * How the long-run bench prints its figures: one Markdown table of slices per runtime, the heap
 * slope after warm-up, and the resume beside its floor. Pure formatting, shared by every script.
 * @module
 */
import type { LongFigures } from './long-workload.ts';

/** A resume of the long run's crashed log beside its floor (reading and parsing the same log). */
export type LongResume = {
  /** Time from `resume` until the model is called again, ms (one sample per entry). */
  readonly resumeMs: readonly number[];
  /** Reading + JSON.parse of every record of the same log, ms. */
  readonly floorMs: readonly number[];
  readonly records: number;
  /** Heap after a forced GC when the resumed run reached the crashed step, bytes; null if unseen. */
  readonly heapAtResume: number | null;
};

const MiB = 2 ** 20;
const med = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const k = (n: number): string => (n >= 1000 ? `${n / 1000}k` : String(n));

/** The slices of a long run as a Markdown table, and the lines under it. */
export function formatLong(
  label: string,
  f: LongFigures,
  resume: LongResume | null,
  heapHeader = 'heap after GC (MiB)',
): string {
  const lines = [
    `### ${label}: ${f.steps.toLocaleString('en-US')} steps`,
    '',
    `| steps | µs/step (slice) | ${heapHeader} | stored (MiB) | bytes/step stored | readings took (ms) |`,
    '|---|---|---|---|---|---|',
  ];
  let prev = 0;
  for (const s of f.slices) {
    const heap = s.heapBytes === null ? '—' : (s.heapBytes / MiB).toFixed(1);
    const cells = [
      `${k(prev)}–${k(s.steps)}`,
      s.usPerStep.toFixed(1),
      heap,
      (s.storedBytes / MiB).toFixed(1),
      (s.storedBytes / s.steps).toFixed(0),
      s.probeMs.toFixed(0),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
    prev = s.steps;
  }
  const costs = f.slices.slice(1).map((s) => s.usPerStep);
  const first = f.slices[1]?.usPerStep ?? Number.NaN;
  const last = f.slices.at(-1)?.usPerStep ?? Number.NaN;
  const range = `${Math.min(...costs).toFixed(1)}–${Math.max(...costs).toFixed(1)}`;
  const slope = f.heapSlope === null ? 'not observable' : `${f.heapSlope.toFixed(1)} bytes/step`;
  lines.push(
    '',
    `step cost after the first slice: median ${med(costs).toFixed(1)} µs, range ${range}, ` +
      `last ÷ second slice ${(last / first).toFixed(2)}×`,
    `heap slope after warm-up (second reading to last): ${slope}`,
  );
  if (resume) {
    const r = med(resume.resumeMs);
    const fl = med(resume.floorMs);
    const list = (xs: readonly number[]): string => xs.map((x) => x.toFixed(0)).join(', ');
    lines.push(
      `resume of the crashed log (${resume.records.toLocaleString('en-US')} records): ${r.toFixed(0)} ms ` +
        `(samples ${list(resume.resumeMs)}), floor read+parse ${fl.toFixed(0)} ms (samples ${list(resume.floorMs)}): ` +
        `${(r / fl).toFixed(2)}×; ${((r * 1000) / resume.records).toFixed(1)} µs a record`,
    );
    if (resume.heapAtResume !== null) {
      const mib = (resume.heapAtResume / MiB).toFixed(1);
      lines.push(`heap (${heapHeader}) when the resumed run reached the crashed step: ${mib} MiB`);
    }
  }
  return lines.join('\n');
}
