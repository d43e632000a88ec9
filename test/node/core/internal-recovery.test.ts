/** The pure recovery reading, table-driven and synchronous: how a log is classified, and how snapshots differ. */
import { describe, expect, it } from 'vitest';
import { CorruptLogError, RECORD_VERSION } from '../../../src/core/index.ts';
import type { JsonValue, LogRecord, StepRecord } from '../../../src/core/index.ts';
import { diffSnapshots } from '../../../src/core/internal/json-compare.ts';
import { classifyLog } from '../../../src/core/internal/recovery.ts';
import { step } from './internal-step.ts';

const v = RECORD_VERSION;
const started: LogRecord = { kind: 'run_started', v, runId: 'r', snapshot: { a: 1 }, snapshotHash: 'h', startedAt: '' };
const modelIntent = (i: number): LogRecord => ({
  kind: 'intent',
  v,
  intent: 'model_call',
  stepIndex: i,
  callSeq: i,
  resultId: `s${i}.model`,
  replayPolicy: 'safe',
});
const result = (i: number): LogRecord => ({
  kind: 'result',
  v,
  resultId: `s${i}.model`,
  stepIndex: i,
  callSeq: i,
  reply: { callId: `c${i}`, text: 't', reasoning: null, toolCalls: [], content: null },
});
const actionIntent = (i: number): LogRecord => ({
  kind: 'intent',
  v,
  intent: 'action',
  stepIndex: i,
  resultId: `s${i}.action`,
  replayPolicy: 'never',
  decision: { kind: 'action', action: { kind: 'code', source: 'x' }, trajectoryRepr: 'x', historyText: 't' },
});
const stepRec = (i: number): LogRecord => ({
  kind: 'step',
  v,
  step: step({ stepIndex: i, callSeq: i, actionStatus: null }),
  actionResult: null,
});
const ended: LogRecord = {
  kind: 'run_ended',
  v,
  stopReason: 'max_steps',
  finalAnswer: null,
  steps: 1,
  validActions: 1,
  eventDeliveryFailures: 0,
  endedAt: '',
};
const fullStep = (i: number): LogRecord[] => [modelIntent(i), result(i), actionIntent(i), stepRec(i)];

const withPolicy = (rec: LogRecord, replayPolicy: 'safe' | 'never'): LogRecord =>
  ({ ...rec, replayPolicy }) as LogRecord;

describe('internal/recovery: classifyLog', () => {
  it('classifies an empty log as not started', () => {
    expect(classifyLog([])).toEqual({
      state: 'not_started',
      started: null,
      steps: [],
      inFlight: null,
      pending: null,
      openRequests: [],
      upgrades: [],
      resumes: [],
      ended: null,
    });
  });

  it('classifies a log with only run_started as the step-0 boundary', () => {
    expect(classifyLog([started])).toEqual({
      state: 'at_boundary',
      started,
      steps: [],
      inFlight: null,
      pending: null,
      openRequests: [],
      upgrades: [],
      resumes: [],
      ended: null,
    });
  });

  it.each([
    { label: 'after one full step', log: [started, ...fullStep(0)], steps: 1 },
    {
      label: 'after a step without an action (final/invalid)',
      log: [started, modelIntent(0), result(0), stepRec(0)],
      steps: 1,
    },
    { label: 'after two steps', log: [started, ...fullStep(0), ...fullStep(1)], steps: 2 },
  ])('classifies a log $label as a boundary', ({ log, steps }) => {
    const c = classifyLog(log);
    expect(c.state).toBe('at_boundary');
    expect(c.steps.map((s) => s.stepIndex)).toEqual([...Array(steps).keys()]);
  });

  it('classifies a log ending in run_ended as ended, with its steps', () => {
    const c = classifyLog([started, ...fullStep(0), ended]);
    expect(c).toEqual({
      state: 'ended',
      started,
      steps: [(stepRec(0) as { step: StepRecord }).step],
      inFlight: null,
      pending: null,
      openRequests: [],
      upgrades: [],
      resumes: [],
      ended,
    });
  });

  it.each([
    {
      label: 'a safe model-call intent without result',
      tail: [modelIntent(0)],
      resolution: 'reissue_model',
      target: 'model_call',
      done: 0,
    },
    {
      label: 'a never model-call intent without result',
      tail: [withPolicy(modelIntent(0), 'never')],
      resolution: 'settle',
      target: 'model_call',
      done: 0,
    },
    {
      label: 'a model result without action intent',
      tail: [modelIntent(0), result(0)],
      resolution: 'reinterpret',
      target: 'model_call',
      done: 0,
    },
    {
      label: 'a never action intent without step',
      tail: [modelIntent(0), result(0), actionIntent(0)],
      resolution: 'settle',
      target: 'action',
      done: 0,
    },
    {
      label: 'a safe action intent without step',
      tail: [modelIntent(0), result(0), withPolicy(actionIntent(0), 'safe')],
      resolution: 'replay_action',
      target: 'action',
      done: 0,
    },
    {
      label: 'a model-call intent after a completed step',
      tail: [...fullStep(0), modelIntent(1)],
      resolution: 'reissue_model',
      target: 'model_call',
      done: 1,
    },
    {
      label: 'an action intent after a completed step',
      tail: [...fullStep(0), modelIntent(1), result(1), actionIntent(1)],
      resolution: 'settle',
      target: 'action',
      done: 1,
    },
  ])('classifies $label as in flight, resolved by $resolution', ({ tail, resolution, target, done }) => {
    const c = classifyLog([started, ...tail]);
    expect(c.state).toBe('in_flight');
    expect(c.steps).toHaveLength(done);
    expect(c.inFlight).toMatchObject({ stepIndex: done, resolution, target });
    expect(c.inFlight?.modelIntent).toEqual(
      tail.find((r) => r.kind === 'intent' && r.intent === 'model_call' && r.stepIndex === done),
    );
    expect(c.inFlight?.result ?? null).toEqual(tail.find((r) => r.kind === 'result' && r.stepIndex === done) ?? null);
    expect(c.inFlight?.actionIntent ?? null).toEqual(
      tail.find((r) => r.kind === 'intent' && r.intent === 'action' && r.stepIndex === done) ?? null,
    );
  });

  it.each([
    { label: 'a first record that is not run_started', log: [modelIntent(0)], line: 1 },
    { label: 'a second run_started', log: [started, started], line: 2 },
    { label: 'records after run_ended', log: [started, ended, modelIntent(0)], line: 3 },
    { label: 'a step out of order', log: [started, ...fullStep(0), stepRec(2)], line: 6 },
    { label: 'a step repeated', log: [started, ...fullStep(0), stepRec(0)], line: 6 },
    { label: 'an intent for a later step', log: [started, modelIntent(1)], line: 2 },
    { label: 'a result without its intent', log: [started, result(0)], line: 2 },
    { label: 'an action intent without a model result', log: [started, modelIntent(0), actionIntent(0)], line: 3 },
    { label: 'a second model-call intent for one step', log: [started, modelIntent(0), modelIntent(0)], line: 3 },
    { label: 'a step without its model-call intent', log: [started, stepRec(0)], line: 2 },
    {
      label: 'an action result without its action intent',
      log: [
        started,
        modelIntent(0),
        result(0),
        {
          ...(stepRec(0) as object),
          actionResult: {
            resultId: 's0.action',
            outcome: {
              status: 'executed',
              observation: 'o',
              observationIsSynthetic: false,
              envReportedCompletion: false,
              observationTruncatedChars: 0,
            },
          },
        } as LogRecord,
      ],
      line: 4,
    },
    { label: 'a second result for one model call', log: [started, modelIntent(0), result(0), result(0)], line: 4 },
    {
      label: 'a second action intent for one step',
      log: [started, modelIntent(0), result(0), actionIntent(0), actionIntent(0)],
      line: 5,
    },
  ])('refuses $label with CorruptLogError at record $line', ({ log, line }) => {
    let caught: unknown;
    try {
      classifyLog(log);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CorruptLogError);
    expect((caught as CorruptLogError).line).toBe(line);
  });
});

describe('internal/recovery: diffSnapshots', () => {
  const base: JsonValue = {
    model: { model: 'm1', temperature: 0 },
    budget: { maxSteps: 5, maxValidActions: 3, maxContextChars: 100 },
    tools: [
      { name: 'a', description: 'A', parameters: { type: 'object' } },
      { name: 'b', description: 'B', parameters: { type: 'object', required: ['x'] } },
    ],
    observationTemplate: '{observation}',
  };
  const edit = (f: (s: Record<string, unknown>) => void): JsonValue => {
    const copy = structuredClone(base) as Record<string, unknown>;
    f(copy);
    return copy as JsonValue;
  };

  it.each([
    { label: 'equal snapshots', current: structuredClone(base), keys: [] },
    {
      label: 'a nested scalar',
      current: edit((s) => ((s['budget'] as Record<string, number>)['maxSteps'] = 6)),
      keys: ['budget.maxSteps'],
    },
    {
      label: 'two nested scalars, sorted',
      current: edit(
        (s) => (
          ((s['model'] as Record<string, unknown>)['temperature'] = 1),
          ((s['budget'] as Record<string, number>)['maxContextChars'] = 1)
        ),
      ),
      keys: ['budget.maxContextChars', 'model.temperature'],
    },
    {
      label: 'a named element field, by name',
      current: edit((s) => ((s['tools'] as Record<string, unknown>[])[1]!['description'] = 'changed')),
      keys: ['tools[b].description'],
    },
    {
      label: 'deep inside a named element, array items by index',
      current: edit(
        (s) =>
          (((s['tools'] as Record<string, Record<string, unknown>>[])[1]!['parameters']!['required'] as string[])[0] =
            'y'),
      ),
      keys: ['tools[b].parameters.required.0'],
    },
    {
      label: 'a named element added',
      current: edit((s) => (s['tools'] as unknown[]).push({ name: 'c' })),
      keys: ['tools[c]'],
    },
    {
      label: 'a named element removed and another renamed',
      current: edit(
        (s) => (
          (s['tools'] as Record<string, unknown>[]).shift(),
          ((s['tools'] as Record<string, unknown>[])[0]!['name'] = 'z')
        ),
      ),
      keys: ['tools[a]', 'tools[b]', 'tools[z]'],
    },
    { label: 'named elements reordered', current: edit((s) => (s['tools'] as unknown[]).reverse()), keys: ['tools'] },
    {
      label: 'an unnamed array that grew',
      current: edit((s) => ((s['budget'] as Record<string, unknown>)['list'] = [1])),
      keys: ['budget.list'],
    },
    {
      label: 'a key only in the current snapshot',
      current: edit((s) => ((s['model'] as Record<string, unknown>)['seed'] = 7)),
      keys: ['model.seed'],
    },
    {
      label: 'a key only in the stored snapshot',
      current: edit((s) => delete s['observationTemplate']),
      keys: ['observationTemplate'],
    },
    { label: 'a value changing type', current: edit((s) => (s['budget'] = 'none')), keys: ['budget'] },
  ])('lists $label', ({ current, keys }) => {
    expect(diffSnapshots(base, current)).toEqual(keys);
  });

  it('is symmetric in which keys it names', () => {
    const current = edit(
      (s) => (((s['model'] as Record<string, unknown>)['seed'] = 7), delete s['observationTemplate']),
    );
    expect(diffSnapshots(base, current)).toEqual(diffSnapshots(current, base));
  });

  it('names the root when the snapshots are not both objects', () => {
    expect(diffSnapshots(base, null)).toEqual(['(root)']);
  });
});
