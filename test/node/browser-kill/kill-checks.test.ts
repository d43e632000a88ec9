/**
 * The checks of the browser-kill suite, on doctored evidence: each property they guard must be
 * reported when broken, so a green browser-kill run means something.
 */
import { describe, expect, it } from 'vitest';
import { isBarrier } from '../../../src/core/index.ts';
import type { LogRecord } from '../../../src/core/index.ts';
import { checkTrial, phaseOf, planDelays, timeless } from './kill-trials.ts';
import type { Reference, TrialEvidence } from './kill-trials.ts';

const charge = { kind: 'tool_call', name: 'charge', arguments: { order: 'A-1' } };
const rec = (r: Record<string, unknown>): LogRecord => r as unknown as LogRecord;
const step = (i: number, decision: string): LogRecord =>
  rec({ kind: 'step', step: { stepIndex: i, decision, startedAt: `t${i}`, endedAt: `u${i}` } });
const LOG: LogRecord[] = [
  rec({ kind: 'run_started' }),
  rec({ kind: 'intent', intent: 'model_call', resultId: 's0.model', replayPolicy: 'safe' }),
  rec({ kind: 'result', resultId: 's0.model' }),
  rec({ kind: 'intent', intent: 'action', resultId: 's0.action', replayPolicy: 'never', decision: { action: charge } }),
  step(0, 'action'),
  rec({ kind: 'intent', intent: 'model_call', resultId: 's1.model', replayPolicy: 'safe' }),
  rec({ kind: 'result', resultId: 's1.model' }),
  step(1, 'final'),
  rec({ kind: 'run_ended' }),
];
const steps = LOG.flatMap((r) => (r.kind === 'step' ? [timeless(r.step)] : []));
const REF: Reference = {
  steps,
  stopReason: 'final_answer',
  writes: LOG.length,
  effects: ['charge({"order":"A-1"})'],
  durationMs: 100,
};
const ack = (r: LogRecord): Record<string, unknown> => ({
  ...r,
  stepIndex: r.kind === 'step' ? r.step.stepIndex : undefined,
  barrier: isBarrier(r),
});
const effect = (launch: number) => ({ launch, tool: 'charge', args: { order: 'A-1' } });
const settleRequest = rec({
  kind: 'input_request',
  stepIndex: 0,
  resultId: 's0.settle',
  request: { kind: 'settle', target: 'action', decision: { action: charge } },
});
const settleReply = (kind: string): LogRecord =>
  rec({ kind: 'input', stepIndex: 0, resultId: 's0.settle', reply: { kind, resultId: 's0.settle' } });

/** Killed just after the step of the charge landed; resumed to the end. */
const GOOD: TrialEvidence = {
  atKill: LOG.slice(0, 5),
  final: { stopReason: 'final_answer', log: LOG, meta: { records: LOG.length, ended: true } },
  errors: [],
  acks: LOG.slice(0, 5).map(ack),
  effects: [effect(1)],
};

describe('browser-kill checks', () => {
  it('find nothing wrong with a sound trial', () => {
    expect(checkTrial(GOOD, REF)).toMatchObject({ problems: [], phase: 'step boundary', nonBarrierLost: 0 });
  });

  it.each<[string, Partial<TrialEvidence>, string]>([
    [
      'an acknowledged intent missing after the kill',
      { atKill: LOG.slice(0, 3) },
      'acknowledged write intent:s0.action is missing after the kill',
    ],
    [
      'a never action whose intent was not durable when it ran',
      { atKill: LOG.slice(0, 3), acks: [] },
      'charge({"order":"A-1"}) ran before its intent was durable',
    ],
    [
      'a never action run twice',
      { effects: [effect(1), effect(2)] },
      'never-replay charge({"order":"A-1"}) ran 2 times',
    ],
    [
      'a never action with no intent at all',
      {
        atKill: [],
        acks: [],
        final: { ...GOOD.final!, log: LOG.filter((r) => r.kind !== 'intent' || r.intent !== 'action') },
      },
      'ran with no intent in the log',
    ],
    [
      'a trajectory unlike the reference',
      {
        final: {
          ...GOOD.final!,
          log: LOG.map((r) => (r.kind === 'step' && r.step.stepIndex === 1 ? step(1, 'invalid') : r)),
        },
      },
      'the trajectory differs from the uninterrupted run',
    ],
    [
      'in_flight_unknown (a store with input methods settles instead)',
      { final: { ...GOOD.final!, stopReason: 'in_flight_unknown' } },
      'unexpected stop reason in_flight_unknown',
    ],
    [
      'a settle request after a kill at a step boundary',
      { final: { ...GOOD.final!, log: [...LOG.slice(0, 5), settleRequest, settleReply('executed'), ...LOG.slice(5)] } },
      'a settle request although the kill left: step boundary',
    ],
    ['a run that never ended', { final: null }, 'the run did not end after the relaunch'],
    ['a resume that rewrote the log it found', { atKill: [LOG[0]!, LOG[2]!] }, 'the resume changed the log it found'],
    [
      'store meta that disagrees with the log',
      { final: { ...GOOD.final!, meta: { records: 3, ended: true } } },
      'disagrees with a log of 9 records',
    ],
    [
      'an error the page reported',
      { errors: ['launch 2: CorruptLogError: bad'] },
      'page reported: launch 2: CorruptLogError: bad',
    ],
    ['a planned side effect that never happened', { effects: [] }, 'charge({"order":"A-1"}) never ran'],
    [
      'an acknowledged result written with its action intent (a barrier) missing',
      {
        atKill: LOG.slice(0, 2),
        acks: [ack(LOG[0]!), ack(LOG[1]!), { ...ack(LOG[2]!), barrier: true }],
        effects: [effect(2)],
      },
      'acknowledged write result:s0.model is missing after the kill',
    ],
    [
      'an acknowledged non-barrier lost although a later write survived',
      { atKill: [LOG[0]!, LOG[2]!, LOG[3]!], acks: LOG.slice(0, 4).map(ack) },
      'intent:s0.model is missing although the later result:s0.model survived',
    ],
  ])('report %s', (_what, change, problem) => {
    const { problems } = checkTrial({ ...GOOD, ...change }, REF);
    expect(
      problems.some((p) => p.includes(problem)),
      problems.join('; '),
    ).toBe(true);
  });

  it('count a lost model-call result written alone (no barrier) without calling it a violation', () => {
    const out = checkTrial(
      { ...GOOD, atKill: LOG.slice(0, 2), acks: LOG.slice(0, 3).map(ack), effects: [effect(2)] },
      REF,
    );
    expect(out).toMatchObject({ problems: [], nonBarrierLost: 1, phase: 'model call in flight' });
  });

  it('count every acknowledged non-barrier a store held and lost (run_started, a safe model intent, a result) without calling it a violation', () => {
    const out = checkTrial({ ...GOOD, atKill: [], acks: LOG.slice(0, 3).map(ack), effects: [effect(2)] }, REF);
    expect(out).toMatchObject({ problems: [], nonBarrierLost: 3, phase: 'not started' });
  });

  describe('with a never action in flight at the kill', () => {
    const atKill = LOG.slice(0, 4);
    const settled = (kind: string): TrialEvidence['final'] => {
      const log = [
        ...atKill,
        settleRequest,
        settleReply(kind),
        ...(kind === 'retry' ? [LOG[3]!] : []),
        ...LOG.slice(4),
      ];
      return { stopReason: 'final_answer', log, meta: { records: log.length, ended: true } };
    };
    const inDoubt = (kind: string, effects: TrialEvidence['effects']): TrialEvidence => ({
      ...GOOD,
      atKill,
      acks: atKill.map(ack),
      final: settled(kind),
      effects,
    });

    it('accept a settle answered executed when the charge had run, and retry (then run once) when it had not', () => {
      expect(checkTrial(inDoubt('executed', [effect(1)]), REF)).toMatchObject({
        problems: [],
        inFlightNeverRan: true,
        settledAs: 'executed',
      });
      expect(checkTrial(inDoubt('retry', [effect(2)]), REF)).toMatchObject({
        problems: [],
        inFlightNeverRan: false,
        settledAs: 'retry',
      });
    });

    it.each<[string, TrialEvidence, string]>([
      [
        'a settle answered retry although the charge had run (it then runs twice)',
        inDoubt('retry', [effect(1), effect(2)]),
        'answered retry, although the action had run',
      ],
      [
        'a settle answered executed although the charge had not run (it never runs)',
        inDoubt('executed', []),
        'charge({"order":"A-1"}) never ran',
      ],
      [
        'no settle request at all',
        { ...inDoubt('executed', [effect(1)]), final: GOOD.final },
        '0 settle requests although one never action was in flight',
      ],
    ])('report %s', (_what, evidence, problem) => {
      const { problems } = checkTrial(evidence, REF);
      expect(
        problems.some((p) => p.includes(problem)),
        problems.join('; '),
      ).toBe(true);
    });
  });

  it.each<[number, string]>([
    [0, 'not started'],
    [1, 'step boundary'],
    [2, 'model call in flight'],
    [3, 'model reply stored'],
    [4, 'never action in flight'],
    [5, 'step boundary'],
    [9, 'ended'],
  ])('classify a log of %i records as %s', (n, phase) => {
    expect(phaseOf(LOG.slice(0, n))).toBe(phase);
  });

  it('plan one kill delay in each equal slice of the run, the same for the same seed', () => {
    const plan = planDelays(10, 7, 1000);
    expect([...plan].sort((a, b) => a - b).map((d) => Math.floor(d / 100))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(planDelays(10, 7, 1000)).toEqual(plan);
    expect(planDelays(10, 8, 1000)).not.toEqual(plan);
  });
});
