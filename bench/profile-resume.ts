/**
 * Resume of a run crashed at step N on FileStore, for `node --cpu-prof`: `node --cpu-prof
 * --cpu-prof-dir=/tmp/prof --import tsx bench/profile-resume.ts [steps] [resumes]`. Prints each
 * resume's time beside the floor (read the file + `JSON.parse` every line).
 * @module
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeLog, resume } from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { benchAgent, benchRequest } from './fixtures.ts';
import { crashedLog, parseFloorMs } from './resume.ts';

const n = Number(process.argv[2] ?? 10_000);
const resumes = Number(process.argv[3] ?? 5);
const dir = await mkdtemp(join(tmpdir(), 'polyloop-prof-resume-'));
const text = encodeLog(await crashedLog(n));
const source = join(dir, 'source.jsonl');
await writeFile(source, text);
for (let i = 0; i < resumes; i++) {
  const d = join(dir, `copy-${i}`);
  await mkdir(d);
  const store = new FileStore({ dir: d });
  await writeFile(store.logPath('crashed'), await readFile(source));
  let called = -1;
  const agent = benchAgent(store, n + 2, (call) => {
    if (called < 0 && call.callSeq === n) called = performance.now();
  });
  const t0 = performance.now();
  const result = await resume(agent, benchRequest('crashed', n + 2));
  if (called < 0 || result.stopReason !== 'final_answer') throw new Error('resume did not re-issue the call');
  const floor = await parseFloorMs(null, source);
  console.log(
    `resume ${(called - t0).toFixed(1)} ms, floor ${floor.toFixed(1)} ms, ${((called - t0) / floor).toFixed(2)}×`,
  );
}
await rm(dir, { recursive: true, force: true });
