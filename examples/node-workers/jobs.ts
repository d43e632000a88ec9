/**
 * What a worker does with one job: drive its run to its end, whoever started it. The job's goal
 * starts the run; from then on the run's log holds its request, and the run's id is all a worker
 * needs to go on with it.
 */
import { isPolyLoopError, resume, run } from '../../src/core/index.ts';
import type { AgentDefinition, RunResult } from '../../src/core/index.ts';
import type { PgPoolLike } from '../../src/platform-postgres/index.ts';
import { settleFromWorld } from './agent.ts';
import type { RunJob } from './agent.ts';

/** What became of a job: its run's result, or why the run was left for an operator. */
export type JobOutcome = { readonly result: RunResult } | { readonly left: string };

/**
 * Drive `job`'s run to its end: `run(agent, { runId, goal })` for a new run, `resume(agent,
 * runId)` for one that exists (a worker died with it, or an earlier attempt of this job started
 * it), answering a notification left in doubt from the world's table. A run started under other
 * parameters (the agent changed since) is left as it is: retrying cannot help, and whether it goes
 * on under the new ones is an operator's `resume(agent, runId, { upgrade: { reason } })`. Any
 * other failure rejects: the job fails, and the queue retries it.
 */
export async function driveJob(agent: AgentDefinition, world: PgPoolLike, job: RunJob): Promise<JobOutcome> {
  const { runId, goal } = job;
  let result: RunResult;
  try {
    result = await startOrResume(agent, runId, goal);
    for (let asked = 0; result.pending !== null; asked++) {
      if (asked > 3) throw new Error(`run ${runId} keeps asking`);
      const reply = await settleFromWorld(world, runId, result.pending);
      result = await resume(agent, runId, { input: reply });
    }
  } catch (e) {
    if (isPolyLoopError(e, 'run_identity_mismatch')) return { left: e.message };
    throw e;
  }
  return { result };
}

async function startOrResume(agent: AgentDefinition, runId: string, goal: string): Promise<RunResult> {
  try {
    return await run(agent, { runId, goal });
  } catch (e) {
    if (!isPolyLoopError(e, 'run_exists')) throw e;
    return resume(agent, runId);
  }
}
