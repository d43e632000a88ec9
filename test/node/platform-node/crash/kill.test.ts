import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleAgent, planInterleaved, referenceRun, runTrial, runTrials, tally, writeOfStep } from './kill-trials.ts';
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
    // Write counts come from these counting runs: run_started, 4 writes per action step, 3 per other step, run_ended.
    const steps = ref.result.trajectory;
    const expectedWrites = 2 + steps.reduce((n, s) => n + (s.decision === 'action' ? 4 : 3), 0);
    expect(ref.writes).toHaveLength(expectedWrites);
    expect(refNever.writes).toEqual(ref.writes);
    expect([ref.writes[0], ref.writes.at(-1)]).toEqual(['runStarted', 'runEnded']);
  });

  // Step 1 is a `record` call (never-replay); its write indices come from the reference run.
  it.each([
    ['action_intent', 'after', 'after its intent landed, before it ran'],
    ['step', 'before', 'after it ran, before its step was written'],
    ['step', 'torn', 'while its step line was half written'],
  ] as const)('ends in_flight_unknown and never runs a never-replay action again when killed at step 1\'s %s write (%s): %s', async (which, how, _when) => {
    const o = await runTrial(ref, writeOfStep(ref, 1, which), how);
    expect(o.problems).toEqual([]);
    expect(o.killed).toBe(true);
    expect(o.resumedStopReason).toBe('in_flight_unknown');
    if (how === 'torn') expect(o.repairs).toBeGreaterThan(0);
    // The record call ran once before the kill (its step not yet written), or not at all — never again.
    expect(o.side).toEqual(which === 'step' ? ref.side.slice(0, 1) : []);
  }, 30_000);

  // With modelReplayPolicy never: step 1's model-call intent and its result.
  it.each([
    ['model_intent', 'after', 'in_flight_unknown', 'the model call was in flight'],
    ['model_result', 'before', 'in_flight_unknown', 'the reply was lost with the process'],
    ['model_result', 'after', 'final_answer', 'the stored reply is re-interpreted, no new call'],
  ] as const)('with modelReplayPolicy never, killed at step 1\'s %s write (%s) ends %s: %s', async (which, how, stop, _why) => {
    const o = await runTrial(refNever, writeOfStep(refNever, 1, which), how);
    expect(o.problems).toEqual([]);
    expect(o.killed).toBe(true);
    expect(o.resumedStopReason).toBe(stop);
    expect(o.resumedCallSeqs).not.toContain(1); // step 1's model call is never issued again
    expect(o.side).toEqual(stop === 'final_answer' ? refNever.side : []); // step 0 is an add: no record ran before the kill
  }, 30_000);

  it(`keeps every recovery property over ${TRIALS} random kills (write index x kill method x model replay policy)`, async () => {
    const plans = planInterleaved(TRIALS, SEED, [ref, refNever]);
    const outcomes = await runTrials([ref, refNever], plans, { concurrency: 2 });
    const failures = outcomes.filter((o) => o.problems.length > 0).map((o) => `seed ${SEED}, model ${o.modelPolicy}, kill ${o.how} at write ${o.killAt}: ${o.problems.join('; ')}`);
    expect(failures).toEqual([]);
    const t = tally(outcomes);
    expect(t['killedBySigkill']).toBeGreaterThan(TRIALS / 2);
    expect(outcomes.every((o) => o.killAt >= 0 && o.killAt < ref.writes.length)).toBe(true);
  }, 120_000);
});
