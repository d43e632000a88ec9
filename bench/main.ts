/**
 * `npm run bench`: every figure is the median of several samples after a warm-up, printed next
 * to its floor measured in this same process run, with the ratio. Writes `bench/results.json`;
 * exits non-zero when a bundle exceeds its budget in `bench/budgets.json`.
 *
 * Options: `--quick` (fewer samples, smaller N: a smoke run, not figures to quote),
 * `--only=overhead,durable,resume,memory,concurrency,chat,several,subagents,control,otel,capacity,long,bundle`, `--markdown` (also
 * print the table in Markdown, for docs/performance.md). `long` is left out of a run without `--only`
 * (a 100,000-step run and its resumes take minutes); `--long-n=` makes its N smaller.
 * @module
 */
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureBundles, overBudget, readBudgets } from './bundle.ts';
import type { BundleSize } from './bundle.ts';
import { capacity } from './capacity.ts';
import { chatBench } from './chat.ts';
import { control } from './control.ts';
import { concurrency, durable, overhead } from './kernel.ts';
import type { Plan, Row } from './kernel.ts';
import { longFileStore } from './long.ts';
import { memory } from './memory.ts';
import { otel } from './otel.ts';
import { resumeTimes } from './resume.ts';
import { several } from './several.ts';
import { subagents } from './subagents.ts';
import { formatMarkdown, formatTable, growthRow } from './report.ts';

const SECTIONS = [
  'overhead',
  'durable',
  'resume',
  'memory',
  'concurrency',
  'chat',
  'several',
  'subagents',
  'control',
  'otel',
  'capacity',
  'long',
  'bundle',
] as const;
type Section = (typeof SECTIONS)[number];

function parseArgs(argv: readonly string[]): { plan: Plan; only: ReadonlySet<Section> } {
  const quick = argv.includes('--quick');
  const onlyArg = argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
  const only = new Set<Section>();
  for (const name of onlyArg ? onlyArg.split(',') : SECTIONS.filter((s) => s !== 'long')) {
    if (!(SECTIONS as readonly string[]).includes(name))
      throw new Error(`unknown section ${name}; sections: ${SECTIONS.join(', ')}`);
    only.add(name as Section);
  }
  return { plan: quick ? { runs: 3, warmup: 1, quick } : { runs: 5, warmup: 1, quick }, only };
}

async function main(): Promise<number> {
  const { plan, only } = parseArgs(process.argv.slice(2));
  const started = new Date().toISOString();
  const load = loadavg();
  const rows: Row[] = [];
  const log = (r: readonly Row[]): void => void rows.push(...r);
  const big = plan.quick ? 2_000 : 10_000;
  if (only.has('overhead')) {
    const sizes = [100, 1_000, big];
    const r = await overhead(plan, sizes);
    log(r);
    log([growthRow(r.filter((row) => row.unit === 'µs/step'))]);
  }
  if (only.has('durable')) log(await durable(plan, plan.quick ? 30 : 200));
  if (only.has('resume')) log(await resumeTimes(plan, plan.quick ? [1_000, big] : [1_000, big, 100_000]));
  if (only.has('memory')) log(await memory(plan, big));
  if (only.has('concurrency')) log(await concurrency(plan, 1_000, 10));
  if (only.has('chat')) log(await chatBench(plan));
  if (only.has('several')) log(await several(plan));
  if (only.has('subagents')) log(await subagents(plan));
  if (only.has('control')) log(await control(plan));
  if (only.has('otel')) log(await otel(plan));
  if (only.has('capacity')) log(await capacity(plan));
  if (only.has('long')) {
    const n = Number(process.argv.find((a) => a.startsWith('--long-n='))?.slice('--long-n='.length) ?? 100_000);
    const long = await longFileStore(plan.quick ? { ...plan, runs: 1 } : { ...plan, runs: 3 }, n);
    log(long.rows);
    console.log(long.text);
  }
  let bundles: BundleSize[] = [];
  let failures: string[] = [];
  if (only.has('bundle')) {
    bundles = await measureBundles();
    const budgets = await readBudgets();
    failures = overBudget(bundles, budgets);
    log(
      bundles.map((b) => ({
        section: 'bundle',
        name: `${b.name} (min+gzip)`,
        unit: 'bytes',
        value: b.gzipped,
        floor: budgets.gzipBytes[b.name],
        samples: [b.gzipped],
        floorSamples: [],
        note: `floor column = budget; minified ${b.minified} bytes, ${Math.round((100 * b.thirdParty) / b.minified)}% third-party`,
      })),
    );
  }
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    totalMemGiB: +(totalmem() / 2 ** 30).toFixed(1),
    freeMemGiB: +(freemem() / 2 ** 30).toFixed(1),
    loadAvgAtStart: load,
    loadAvgAtEnd: loadavg(),
  };
  console.log(formatTable(rows));
  if (process.argv.includes('--markdown')) console.log(`\n${formatMarkdown(rows)}`);
  console.log(
    `\n${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}, ${machine.totalMemGiB} GiB; load average at start ${load.map((l) => l.toFixed(2)).join(' ')}, at end ${machine.loadAvgAtEnd.map((l) => l.toFixed(2)).join(' ')}`,
  );
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results.json');
  await writeFile(
    out,
    `${JSON.stringify({ started, finished: new Date().toISOString(), plan, machine, rows, bundles }, null, 2)}\n`,
  );
  console.log(`wrote ${out}`);
  for (const f of failures) console.error(`BUDGET EXCEEDED: ${f}`);
  return failures.length > 0 ? 1 : 0;
}

process.exitCode = await main();
