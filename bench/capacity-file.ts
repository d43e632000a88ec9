/**
 * One FileStore run of the capacity workload, as a child process that `bench/capacity.ts` runs
 * under strace (the writes and fsyncs are counted from the outside, in the kernel's own calls).
 * Prints `{ steps, records, bytes }` as its last line: the log's size read back from the disk.
 * Usage: node --import tsx bench/capacity-file.ts <dir> <steps> [obsChars]
 * @module
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { capacityAgent, capacityRequest } from './capacity-workload.ts';

const [dir, stepsArg, obsArg] = process.argv.slice(2);
if (dir === undefined || stepsArg === undefined) throw new Error('usage: capacity-file.ts <dir> <steps> [obsChars]');
const n = Number(stepsArg);
const store = new FileStore({ dir });
const result = await run(capacityAgent(store, n), capacityRequest('capacity', n, Number(obsArg ?? 0)));
if (result.stopReason !== 'final_answer' || result.steps !== n) throw new Error(`run ended ${result.stopReason}`);
let bytes = 0;
for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
  if (e.isFile() && e.name.endsWith('.jsonl')) bytes += (await stat(join(e.parentPath, e.name))).size;
const records = (await store.readLog('capacity')).length;
console.log(JSON.stringify({ steps: result.steps, records, bytes }));
