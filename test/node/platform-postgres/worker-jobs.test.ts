/**
 * A job of the example worker pool (examples/node-workers/jobs.ts) on a real Postgres: its goal
 * starts the run, and a worker that takes over a run a dead worker started goes on from the run's
 * id alone — the log holds the request; the job's goal is not read again. A run started under
 * other parameters is left for an operator, nothing written, until the operator upgrades it.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, exportRun, readRunLog, resume, run } from '../../../src/core/index.ts';
import type { AgentDefinition } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { migrateWorld, weatherAgent, weatherGoal } from '../../../examples/node-workers/agent.ts';
import { driveJob } from '../../../examples/node-workers/jobs.ts';
import { usePostgres } from '../../postgres/fixture.ts';

const db = usePostgres();

const sent = async (runId: string): Promise<number> =>
  (await db.pool().query({ text: 'SELECT 1 FROM notifications WHERE run_id = $1', values: [runId] })).rows.length;

describe('a job of the example worker pool', () => {
  it('starts its run from its id and goal; a worker taking over after a crash resumes it by id alone, ' +
    'settles the notify in doubt from the world, and it ran once', async () => {
    await migrateWorld(db.pool());
    const schema = await db.freshSchema();
    const runId = 'taken-over';
    // The first worker dies at the write of step 1's step record, after the notify ran: writes are
    // run_started, then per step the model call's intent, its result with the action intent, the step.
    const dying = faultyStore(await db.freshStore({ schema }), { crashAfterWrites: 6 });
    const first = weatherAgent(dying, db.pool(), { delayMs: 0 });
    const crashed = driveJob(first, db.pool(), { runId, goal: weatherGoal('Paris') });
    await expect(crashed).rejects.toThrow('simulated crash before step (after 6 writes)');
    expect(await sent(runId)).toBe(1);

    // Another worker, with the same agent; its job's goal (Oslo) is never read: the log has Paris.
    const other = weatherAgent(await db.freshStore({ schema }), db.pool(), { delayMs: 0 });
    const outcome = await driveJob(other, db.pool(), { runId, goal: weatherGoal('Oslo') });
    const finished = { stopReason: 'final_answer', finalAnswer: 'Paris is sunny; ops was told.' };
    expect(outcome).toMatchObject({ result: finished });
    expect(await sent(runId)).toBe(1);
    const log = await (await db.freshStore({ schema })).readLog(runId);
    expect(log.flatMap((r) => (r.kind === 'input' ? [r.reply.kind] : []))).toEqual(['executed']);
    expect(readRunLog(log).trajectory.map((s) => s.actionStatus)).toEqual(['executed', 'executed', null]);
  }, 60_000);

  it('leaves a run started under other parameters for an operator (no retry can help), writing nothing; ' +
    "the operator's upgrade finishes it", async () => {
    await migrateWorld(db.pool());
    const schema = await db.freshSchema();
    const runId = 'older-code';
    const agent = weatherAgent(await db.freshStore({ schema }), db.pool(), { delayMs: 0 });
    // The code before the deploy gave runs a longer budget; its worker died after step 0.
    const { model, interpreter, events, syntheticObservations } = agent;
    const defaults = { ...agent.defaults, budget: { maxSteps: 20, maxValidActions: 5, maxContextChars: 50_000 } };
    const store = faultyStore(await db.freshStore({ schema }), { crashAfterWrites: 4 });
    const older: AgentDefinition = defineAgent({ model, interpreter, store, events, syntheticObservations, defaults });
    await expect(run(older, { runId, goal: weatherGoal('Lima') })).rejects.toThrow('simulated crash');
    const before = await exportRun(agent.store, runId);

    const outcome = await driveJob(agent, db.pool(), { runId, goal: weatherGoal('Lima') });
    const how = 'to go on under the new parameters, resume with { upgrade: { reason } }';
    expect(outcome).toEqual({ left: expect.stringContaining(`differing keys: budget.maxSteps; ${how}`) });
    expect(await exportRun(agent.store, runId)).toBe(before);

    const upgraded = await resume(agent, runId, { upgrade: { reason: 'deploy: a shorter budget' } });
    expect(upgraded).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'Lima is cloudy; ops was told.' });
    expect(await sent(runId)).toBe(1);
  }, 60_000);
});
