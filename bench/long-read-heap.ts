/**
 * `node --expose-gc --import tsx bench/long-read-heap.ts [--n=100000] [--capacity]`: the heap a whole read of the
 * long run's log holds at its peak, as a store that reads it at once holds it (DurableObjectStore's
 * `readLogSync`: every line, then `decodeLog` of them all while the lines are still held, then
 * `readRunLog`). The run is the long workload's crashed run on an InMemoryStore; its export gives
 * the lines, each copied into a string of its own as a store reads it from its storage (`--capacity`:
 * the log of `--only=capacity`'s workload instead, bench/capacity-workload.ts). Readings
 * after forced GCs, in bytes a step: the lines, the decoded records added to them, the reading.
 * This is what a 128 MB Durable Object has to hold to resume the run; workerd (Miniflare) does not
 * enforce that limit, so the run itself passing there does not show it.
 */
import { decodeLog, exportRun, InMemoryStore, readRunLog, run } from '../src/core/index.ts';
import { readRunLogLines } from '../src/core/internal-entry.ts';
import { capacityAgent, capacityRequest } from './capacity-workload.ts';
import { crashedLongRun } from './long-workload.ts';
import { heapAfterGc } from './stats.ts';

const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 100_000);
const store = new InMemoryStore();
const quiet = { heap: () => Promise.resolve(null), storedSince: () => Promise.resolve(0) };
const capacity = process.argv.includes('--capacity');
if (capacity) await run(capacityAgent(store, N), capacityRequest('long', N, 0));
else await crashedLongRun({ store, runId: 'long', n: N, probe: quiet, every: N / 10 });
const before = heapAfterGc();
let text: string | null = await exportRun(store, 'long');
// A fresh string a line (not a slice of the export), as a store's rows or file lines are.
const lines = text.split('\n').map((l) => ` ${l}`.slice(1));
lines.pop();
text = null;
const withLines = heapAfterGc();
let decoded: ReturnType<typeof decodeLog> | null = decodeLog(lines);
const withRecords = heapAfterGc();
let view: ReturnType<typeof readRunLog> | null = readRunLog(decoded.records);
const withView = heapAfterGc();
if (view.steps !== N) throw new Error(`the reading saw ${view.steps} steps, not ${N}`);
const perStep = (bytes: number): string => (bytes / N).toFixed(0);
// The lines and the records are held at once inside the store's read; the reading may free some.
const peak = Math.max(withRecords, withView) - before;
console.log(
  `whole read of a ${N.toLocaleString('en-US')}-step ${capacity ? 'capacity' : 'long-run'} log (${decoded.records.length.toLocaleString('en-US')} records), ` +
    `bytes a step: lines ${perStep(withLines - before)}, + records ${perStep(withRecords - withLines)}, ` +
    `+ reading ${perStep(withView - withRecords)}; most held at once ${perStep(peak)} ` +
    `(${(peak / 2 ** 20).toFixed(1)} MiB); 128 MB ÷ this = ${Math.round(128e6 / (peak / N)).toLocaleString('en-US')} steps`,
);
// What a resume holds reading the lines (the stores' readLogLines): the lines, and the view it builds
// from them, no record but each step's; read after a forced GC, like the figures above.
const records = decoded.records.length;
decoded = view = null;
const linesOnly = heapAfterGc();
const reading = readRunLogLines(lines, 'long');
const withReading = heapAfterGc();
if (reading.view.steps !== N) throw new Error(`the line reading saw ${reading.view.steps} steps, not ${N}`);
const held = withReading - before;
console.log(
  `read from its lines (${records.toLocaleString('en-US')} lines), bytes a step: lines ${perStep(linesOnly - before)}, ` +
    `+ view ${perStep(withReading - linesOnly)}; held ${perStep(held)} (${(held / 2 ** 20).toFixed(1)} MiB); ` +
    `128 MB ÷ this = ${Math.round(128e6 / (held / N)).toLocaleString('en-US')} steps`,
);
