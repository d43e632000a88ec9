/**
 * Compare the per-step overhead of two or more checkouts of the kernel in one process, sampled
 * in alternation (so machine load hits each alike) — for before/after figures of a core change:
 * copy the repository, patch the copy, and run
 * `node --expose-gc --import tsx bench/compare-cores.ts <dir>,<dir> [N] [runsPerSample] [samples]`.
 * Each directory must hold `src/core/index.ts` and `bench/fixtures.ts`.
 * @module
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentDefinition, RunRequest, RunResult, RunStore } from '../src/core/index.ts';
import { collectGarbage, median } from './stats.ts';

type Variant = {
  readonly dir: string;
  readonly run: (agent: AgentDefinition, request: RunRequest) => Promise<RunResult>;
  readonly store: () => RunStore;
  readonly agent: (store: RunStore, n: number) => AgentDefinition;
  readonly request: (runId: string, n: number) => RunRequest;
};

async function load(dir: string): Promise<Variant> {
  const core = (await import(
    pathToFileURL(resolve(dir, 'src/core/index.ts')).href
  )) as typeof import('../src/core/index.ts');
  const fx = (await import(pathToFileURL(resolve(dir, 'bench/fixtures.ts')).href)) as typeof import('./fixtures.ts');
  return {
    dir,
    run: core.run,
    store: () => new core.InMemoryStore(),
    agent: (s, n) => fx.benchAgent(s, n),
    request: fx.benchRequest,
  };
}

let ids = 0;
async function usPerStep(v: Variant, n: number, runs: number): Promise<number> {
  const agent = v.agent(v.store(), n);
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await v.run(agent, v.request(`cmp-${ids++}`, n));
  return ((performance.now() - t0) * 1000) / (n * runs);
}

const [dirs = '', nArg = '1000', runsArg = '', samplesArg = '7'] = process.argv.slice(2);
if (!dirs) throw new Error('usage: compare-cores.ts <dir>,<dir>[,…] [N] [runsPerSample] [samples]');
const n = Number(nArg);
const runs = runsArg ? Number(runsArg) : Math.max(1, Math.ceil(10_000 / n));
const variants = await Promise.all(dirs.split(',').map(load));
const samples: number[][] = variants.map(() => []);
for (const v of variants) await usPerStep(v, n, runs);
for (let s = 0; s < Number(samplesArg); s++) {
  for (const [i, v] of variants.entries()) {
    collectGarbage();
    samples[i]?.push(await usPerStep(v, n, runs));
  }
}
for (const [i, v] of variants.entries()) {
  const xs = samples[i] ?? [];
  console.log(
    `${v.dir}: N=${n}, ${runs} run(s)/sample: median ${median(xs).toFixed(1)} µs/step [${xs.map((x) => x.toFixed(0)).join(' ')}]`,
  );
}
