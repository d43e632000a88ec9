import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleAgent, planInterleaved, referenceRun, runTrial, runTrials, tally, WRITES } from './kill-trials.ts';
import type { Reference } from './kill-trials.ts';

const TRIALS = 20;
const SEED = Number(process.env['POLYLOOP_KILL_SEED'] ?? 20261201);
let ref: Reference;
let refNever: Reference;
let cleanup = async (): Promise<void> => undefined;

beforeAll(async () => {
  const agent = await bundleAgent();
  cleanup = agent.cleanup;
  ref = await referenceRun(agent.path, 'safe');
  refNever = await referenceRun(agent.path, 'never');
}, 60_000);

afterAll(() => cleanup());

describe('FileStore under real SIGKILL', () => {
  it('runs the reference agent through every kind of step and both replay policies', () => {
    expect(ref.result.stopReason).toBe('final_answer');
    expect(ref.result.trajectory.map((s) => s.decision)).toEqual(['action', 'action', 'action', 'invalid', 'action', 'action', 'action', 'final']);
    expect(ref.side).toHaveLength(3);
    expect(ref.calls.size).toBe(8);
  });

  // Writes 7 and 8 are the action intent and the step of step 1, a `record` call (never-replay).
  it.each([
    [7, 'after', 'after its intent landed, before it ran'],
    [8, 'before', 'after it ran, before its step was written'],
    [8, 'torn', 'while its step line was half written'],
  ] as const)('ends in_flight_unknown and never runs a never-replay action again when killed at write %i (%s): %s', async (killAt, how, _when) => {
    const o = await runTrial(ref, killAt, how);
    expect(o.problems).toEqual([]);
    expect(o.killed).toBe(true);
    expect(o.resumedStopReason).toBe('in_flight_unknown');
    if (how === 'torn') expect(o.repairs).toBeGreaterThan(0);
  }, 30_000);

  // With modelReplayPolicy never: write 5 is step 1's model-call intent, write 6 its result.
  it.each([
    [5, 'after', 'in_flight_unknown', 'the model call was in flight'],
    [6, 'before', 'in_flight_unknown', 'the reply was lost with the process'],
    [6, 'after', 'final_answer', 'the stored reply is re-interpreted, no new call'],
  ] as const)('with modelReplayPolicy never, killed at write %i (%s) ends %s: %s', async (killAt, how, stop, _why) => {
    const o = await runTrial(refNever, killAt, how);
    expect(o.problems).toEqual([]);
    expect(o.killed).toBe(true);
    expect(o.resumedStopReason).toBe(stop);
    expect(o.resumedCallSeqs).not.toContain(1); // step 1's model call is never issued again
  }, 30_000);

  it(`keeps every recovery property over ${TRIALS} random kills (write index x kill method x model replay policy)`, async () => {
    const plans = planInterleaved(TRIALS, SEED, 2);
    const outcomes = await runTrials([ref, refNever], plans, { concurrency: 2 });
    const failures = outcomes.filter((o) => o.problems.length > 0).map((o) => `seed ${SEED}, model ${o.modelPolicy}, kill ${o.how} at write ${o.killAt}: ${o.problems.join('; ')}`);
    expect(failures).toEqual([]);
    const t = tally(outcomes);
    expect(t['killedBySigkill']).toBeGreaterThan(TRIALS / 2);
    expect(outcomes.every((o) => o.killAt >= 0 && o.killAt < WRITES)).toBe(true);
  }, 120_000);
});
