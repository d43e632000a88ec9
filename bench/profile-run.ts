/**
 * One long run for `node --cpu-prof`: `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx
 * bench/profile-run.ts [steps] [memory|file] [runs]`.
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryStore, run } from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { benchAgent, benchRequest } from './fixtures.ts';

const n = Number(process.argv[2] ?? 10_000);
const kind = process.argv[3] ?? 'memory';
const runs = Number(process.argv[4] ?? 1);
const dir = await mkdtemp(join(tmpdir(), 'polyloop-prof-'));
const store = kind === 'file' ? new FileStore({ dir }) : new InMemoryStore();
const agent = benchAgent(store, n);
const t0 = performance.now();
for (let i = 0; i < runs; i++) {
  const result = await run(agent, benchRequest(`profile-${i}`, n));
  if (result.stopReason !== 'final_answer') throw new Error(`ended ${result.stopReason}`);
}
const ms = performance.now() - t0;
console.log(`${runs} × ${n} steps on ${kind}: ${ms.toFixed(0)} ms, ${((ms * 1000) / (n * runs)).toFixed(1)} µs/step`);
await rm(dir, { recursive: true, force: true });
