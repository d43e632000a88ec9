/**
 * A process of the sub-agent crash tests, running the family of crash-family.ts under `<root>`
 * (crash.test.ts runs it bundled by esbuild; `node --import tsx` runs it as it is):
 *
 *   node --import tsx crash-process.ts <root> <runId> start
 *     `run(parent, { runId })`; prints `RESULT <json>`, then waits until it is killed.
 *   node --import tsx crash-process.ts <root> <runId> approve <resultId>
 *     `resume(parent, runId, { input: approve })`; prints `RESULT <json>` and exits.
 */
import { writeSync } from 'node:fs';
import { resume, run } from '../../../src/core/index.ts';
import type { RunResult } from '../../../src/core/index.ts';
import { crashFamily } from './crash-family.ts';

const [root, runId, command, resultId] = process.argv.slice(2);
if (!root || !runId || (command !== 'start' && command !== 'approve') || (command === 'approve' && !resultId))
  throw new Error('usage: crash-process.ts <root> <runId> start | approve <resultId>');
const { parent } = crashFamily(root);

const say = (r: RunResult): void =>
  void writeSync(1, `RESULT ${JSON.stringify({ stopReason: r.stopReason, pending: r.pending })}\n`);

if (command === 'start') {
  say(await run(parent, { runId, goal: 'find it' }));
  // The run waits for a person; so does this process, until it is killed.
  setInterval(() => undefined, 60_000);
} else {
  say(await resume(parent, runId, { input: { kind: 'approve', resultId: resultId as string } }));
}
