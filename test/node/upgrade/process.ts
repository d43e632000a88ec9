/**
 * A process of the upgrade test, running one version of the agent module, as a deployment does.
 *
 *   node --import tsx process.ts start <agent module> <runId> <goal>
 *     `run(agent, { runId, goal })`; prints `AWAITING <json>` once the run waits for a person's
 *     approval, then waits forever (the test SIGKILLs it).
 *   node --import tsx process.ts approve <agent module> <runId> <resultId> <reason>
 *     `resume(agent, runId, { input: approve })`, printing `REFUSED <json>` (or `RESULT <json>`);
 *     then, once a line arrives on stdin, `resume(agent, runId, { upgrade: { reason }, input:
 *     approve })`, printing `RESULT <json>`.
 */
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { isPolyLoopError, resume, run } from '../../../src/core/index.ts';
import type { AgentDefinition, InputReply, RunResult } from '../../../src/core/index.ts';

const [command, module, runId, arg, reason] = process.argv.slice(2);
if ((command !== 'start' && command !== 'approve') || !module || !runId || !arg) {
  throw new Error('usage: process.ts start|approve <agent module> <runId> <goal|resultId> [reason]');
}
const { agent } = (await import(module)) as { agent: AgentDefinition };

// Synchronous: the parent sees the line even if this process is killed right after.
const say = (tag: string, value: unknown): void => void writeSync(1, `${tag} ${JSON.stringify(value)}\n`);
const summary = (r: RunResult): unknown => ({
  stopReason: r.stopReason,
  finalAnswer: r.finalAnswer,
  pending: r.pending,
  steps: r.trajectory.length,
});

if (command === 'start') {
  const result = await run(agent, { runId, goal: arg });
  say(result.pending ? 'AWAITING' : 'RESULT', summary(result));
  // The run waits for a person; this process waits too, until it is killed.
  setInterval(() => undefined, 60_000);
} else {
  const approve: InputReply = { kind: 'approve', resultId: arg };
  try {
    say('RESULT', summary(await resume(agent, runId, { input: approve })));
  } catch (e) {
    if (!isPolyLoopError(e)) throw e;
    const { differingKeys } = e as { differingKeys?: unknown };
    say('REFUSED', { name: e.name, code: e.code, message: e.message, differingKeys });
  }
  // The parent looks at the log, then lets this process upgrade the run.
  for await (const _line of createInterface({ input: process.stdin })) break;
  const upgrade = { reason: reason ?? 'no reason given' };
  say('RESULT', summary(await resume(agent, runId, { upgrade, input: approve })));
  process.exit(0);
}
