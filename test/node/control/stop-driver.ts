/**
 * A process that drives a run of stop-agent.ts (stop-e2e.test.ts runs it bundled by esbuild):
 *
 *   stop-driver.ts <root> <runId> start <scenario>
 *     `run(agent, { runId, goal })`; prints `RESULT <json>` and exits.
 *   stop-driver.ts <root> <runId> resume [approve <resultId>]
 *     `resume(agent, runId)`, with that approval as its input when given; prints `RESULT <json>`.
 *
 * The result line holds `stopReason`, `stopRequest` and the open request's `resultId`, if any.
 */
import { writeSync } from 'node:fs';
import { resume, run } from '../../../src/core/index.ts';
import type { RunResult } from '../../../src/core/index.ts';
import { goalOf, SCENARIOS, stopAgent } from './stop-agent.ts';
import type { Scenario } from './stop-agent.ts';

const [root, runId, command, arg, resultId] = process.argv.slice(2);
const usage = 'usage: stop-driver.ts <root> <runId> start <scenario> | resume [approve <resultId>]';
if (!root || !runId || (command !== 'start' && command !== 'resume')) throw new Error(usage);
const agent = stopAgent(root);

const say = (r: RunResult): void =>
  void writeSync(
    1,
    `RESULT ${JSON.stringify({ stopReason: r.stopReason, stopRequest: r.stopRequest ?? null, pending: r.pending?.resultId ?? null })}\n`,
  );

if (command === 'start') {
  if (!SCENARIOS.includes(arg as Scenario)) throw new Error(usage);
  say(await run(agent, { runId, goal: goalOf(arg as Scenario) }));
} else if (arg === 'approve' && resultId) {
  say(await resume(agent, runId, { input: { kind: 'approve', resultId } }));
} else {
  say(await resume(agent, runId));
}
