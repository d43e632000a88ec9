import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bundleAgent,
  nthWrite,
  planInterleaved,
  referenceRun,
  runTrial,
  runTrials,
  tally,
  writeOfStep,
} from './kill-trials.ts';
import type { Reference } from './kill-trials.ts';

const TRIALS = 24;
const SEED = Number(process.env['POLYLOOP_KILL_SEED'] ?? 20261201);
let ref: Reference;
let refNever: Reference;
let refApproval: Reference;
let refCalls: Reference;
let cleanup = async (): Promise<void> => undefined;

beforeAll(async () => {
  const agent = await bundleAgent();
  cleanup = agent.cleanup;
  ref = await referenceRun(agent.path, 'safe');
  refNever = await referenceRun(agent.path, 'never');
  refApproval = await referenceRun(agent.path, 'approval');
  refCalls = await referenceRun(agent.path, 'calls');
}, 60_000);

afterAll(() => cleanup());

describe('FileStore under real SIGKILL', () => {
  it('runs the reference agent through every kind of step, both replay policies and approvals', () => {
    expect(ref.result.stopReason).toBe('final_answer');
    expect(ref.result.trajectory.map((s) => s.decision)).toEqual([
      'action',
      'action',
      'action',
      'invalid',
      'action',
      'action',
      'action',
      'final',
    ]);
    expect(ref.side).toHaveLength(3);
    expect(ref.calls.size).toBe(8);
    // Write counts come from these counting runs: run_started, 3 writes per step (an action step's
    // model result rides with its action intent: resultAndIntent), run_ended.
    const steps = ref.result.trajectory;
    expect(ref.writes).toHaveLength(2 + 3 * steps.length);
    expect(ref.writes.filter((w) => w === 'resultAndIntent')).toHaveLength(
      steps.filter((s) => s.decision === 'action').length,
    );
    expect(refNever.writes).toEqual(ref.writes);
    expect([ref.writes[0], ref.writes.at(-1)]).toEqual(['runStarted', 'runEnded']);
    expect(ref.inputs).toEqual([]);
    // With approvals: each record asks first (two writes more), the step-6 one is denied and never runs.
    expect(refApproval.inputs).toEqual(['s1.input approve', 's4.input approve', 's6.input deny']);
    expect(refApproval.result.trajectory.map((s) => s.actionStatus)).toEqual([
      'executed',
      'executed',
      'executed',
      null,
      'executed',
      'executed',
      'denied',
      null,
    ]);
    expect(refApproval.side).toEqual(ref.side.slice(0, 2));
    expect(refApproval.writes.filter((w) => w === 'inputRequest' || w === 'input')).toHaveLength(6);
  });

  // Step 1 is a `record` call (never-replay); its write indices come from the reference run.
  it.each([
    ['action_intent', 'after', 'retry', 'after its intent landed, before it ran'],
    ['step', 'before', 'executed', 'after it ran, before its step was written'],
    ['step', 'torn', 'executed', 'while its step line was half written'],
  ] as const)(
    "settles a never action in flight at step 1's %s write (%s) from the outside world (%s) and ends as the uninterrupted run, the action run exactly once: %s",
    async (which, how, settled, _when) => {
      const o = await runTrial(ref, writeOfStep(ref, 1, which), how);
      expect(o.problems).toEqual([]);
      expect(o.killed).toBe(true);
      expect(o.firstResume).toBe('awaiting s1.settle');
      expect(o.resumedInputs).toEqual([`s1.settle ${settled}`]);
      expect(o.resumedStopReason).toBe('final_answer');
      if (how === 'torn') expect(o.repairs).toBeGreaterThan(0);
      // The record call ran before the kill (its step not yet written), or not at all; never twice.
      expect(o.sideAtKill).toEqual(which === 'step' ? ref.side.slice(0, 1) : []);
      expect(o.side).toEqual(ref.side);
    },
    30_000,
  );

  // With modelReplayPolicy never: a model-call intent and its result, at step 1 (an action, whose
  // result lands with its action intent) and step 3 (an invalid reply, whose result lands alone).
  it.each([
    [1, 'model_intent', 'after', true, 'the model call was in flight: a person says retry'],
    [1, 'model_result', 'before', true, 'the reply was lost with the process: a person says retry'],
    [
      1,
      'model_result',
      'torn',
      false,
      'half the joint write landed: the result line whole, the action intent torn; the stored reply is re-interpreted, nobody asked',
    ],
    [3, 'model_result', 'after', false, 'the stored reply is re-interpreted, no new call, nobody asked'],
  ] as const)(
    "with modelReplayPolicy never, killed at step %s's %s write (%s), settles (%s) and ends as the uninterrupted run: %s",
    async (step, which, how, asked, _why) => {
      const o = await runTrial(refNever, writeOfStep(refNever, step, which), how);
      expect(o.problems).toEqual([]);
      expect(o.killed).toBe(true);
      expect(o.resumedStopReason).toBe('final_answer');
      expect(o.resumedInputs).toEqual(asked ? [`s${step}.settle retry`] : []);
      // The model call is issued again only because a person said retry.
      expect(o.resumedCallSeqs.includes(step)).toBe(asked);
      expect(o.side).toEqual(refNever.side);
    },
    30_000,
  );

  it('killed right after the approval reply (the input record) landed, a new process resumes WITHOUT input and carries it out: the approved never action runs exactly once', async () => {
    const o = await runTrial(refApproval, nthWrite(refApproval, 'input', 0), 'after');
    expect(o.problems).toEqual([]);
    expect(o.killed).toBe(true);
    expect(o.lastLandedWrite).toBe(nthWrite(refApproval, 'input', 0));
    expect(o.sideAtKill).toEqual([]);
    // The first resume carried the approval out and ran on to the next request; nobody was asked about s1 again.
    expect(o.firstResume).toBe('awaiting s4.input');
    expect(o.resumedInputs).toEqual(['s4.input approve', 's6.input deny']);
    expect(o.side.filter((l) => l.startsWith('step1'))).toHaveLength(1);
    expect(o.side).toEqual(refApproval.side);
    expect(o.resumedStopReason).toBe('final_answer');
  }, 30_000);

  it('killed right after a denial landed, the resume carries the denial out: the denied action never runs', async () => {
    const o = await runTrial(refApproval, nthWrite(refApproval, 'input', 2), 'after');
    expect(o.problems).toEqual([]);
    expect(o.killed).toBe(true);
    expect(o.firstResume).toBe('final_answer');
    expect(o.resumedInputs).toEqual([]);
    expect(o.side.some((l) => l.startsWith('step6'))).toBe(false);
  }, 30_000);

  it('killed right after an approval request landed, the resume without input returns the same request, and the reply given then finishes the run', async () => {
    const o = await runTrial(refApproval, nthWrite(refApproval, 'inputRequest', 1), 'after');
    expect(o.problems).toEqual([]);
    expect(o.firstResume).toBe('awaiting s4.input');
    expect(o.resumedInputs).toEqual(['s4.input approve', 's6.input deny']);
    expect(o.side).toEqual(refApproval.side);
  }, 30_000);

  it('runs the calls variant as one step of three calls, each outcome its own callResult write, then the answer', () => {
    expect(refCalls.result.stopReason).toBe('final_answer');
    expect(refCalls.result.trajectory[0]?.calls?.map((c) => [c.resultId, c.status])).toEqual([
      ['s0.a0', 'executed'],
      ['s0.a1', 'executed'],
      ['s0.a2', 'executed'],
    ]);
    expect(refCalls.writes).toEqual([
      'runStarted',
      'intent',
      'resultAndIntent',
      'callResult',
      'callResult',
      'callResult',
      'step',
      'intent',
      'result',
      'step',
      'runEnded',
    ]);
    expect(refCalls.side).toEqual(['calls step0']);
  });

  // The calls run in order here, so the second callResult write is the `record` call's (s0.a1).
  it.each([
    ['resultAndIntent', 0, 'after', 'awaiting s0.a1.settle', ['s0.a1.settle retry'], 'before any call ran'],
    ['callResult', 1, 'before', 'awaiting s0.a1.settle', ['s0.a1.settle executed'], 'after it ran, unwritten'],
    ['callResult', 1, 'after', 'final_answer', [], 'after its outcome was written'],
  ] as const)(
    'killed mid-step at %s write #%s (%s), a new process ends the three-call step as the uninterrupted run (first resume %s, replies %j), the never call exactly once: %s',
    async (method, n, how, firstResume, inputs, _when) => {
      const o = await runTrial(refCalls, nthWrite(refCalls, method, n), how);
      expect(o.problems).toEqual([]);
      expect(o.killed).toBe(true);
      expect(o.sideAtKill).toEqual(method === 'callResult' ? refCalls.side : []);
      expect(o.firstResume).toBe(firstResume);
      expect(o.resumedInputs).toEqual(inputs);
      expect(o.resumedStopReason).toBe('final_answer');
      expect(o.side).toEqual(refCalls.side);
    },
    30_000,
  );

  it(`keeps every recovery property over ${TRIALS} random kills (write index x kill method x variant: model replay safe, never, approvals)`, async () => {
    const refs = [ref, refNever, refApproval];
    const plans = planInterleaved(TRIALS, SEED, refs);
    const outcomes = await runTrials(refs, plans, { concurrency: 2 });
    const failures = outcomes
      .filter((o) => o.problems.length > 0)
      .map(
        (o) => `seed ${SEED}, variant ${o.modelPolicy}, kill ${o.how} at write ${o.killAt}: ${o.problems.join('; ')}`,
      );
    expect(failures).toEqual([]);
    const t = tally(outcomes);
    expect(t['killedBySigkill']).toBeGreaterThan(TRIALS / 2);
    expect(t['resumedInFlightUnknown']).toBe(0);
    expect(
      outcomes.every((o, i) => o.killAt >= 0 && o.killAt < (refs[i % refs.length] as Reference).writes.length),
    ).toBe(true);
  }, 180_000);
});
