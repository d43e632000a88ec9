/**
 * otelSink fed an event sequence by hand, for an order a real run produces only in a race: the
 * other calls of a step that go on after one's sub-agent paused, at a moment when nothing else of
 * the driver was running. The driver's span ends when its call settles, not at the request.
 */
import { describe, expect, it } from 'vitest';
import type { ActionDecision, InputRequest, RunEvent } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { only, tracing, treeOf } from './sink-fixtures.ts';

const research = (q: string): ActionDecision => ({
  kind: 'action',
  action: { kind: 'tool_call', name: 'research', arguments: { q } },
  trajectoryRepr: `research(${q})`,
  historyText: '',
});

/** The first driver's sub-agent request: the first call's child waits for an approval. */
function childAsks(runId: string): InputRequest {
  return {
    resultId: 's0.a0.c1',
    stepIndex: 0,
    kind: 'child',
    target: 'action',
    decision: research('0'),
    child: {
      runId: `${runId}-child-0`,
      request: { resultId: 's0.input', stepIndex: 0, kind: 'approval', target: 'action', decision: null },
    },
  };
}

/** The first driver of run `runId`: a step with three calls, the first one's sub-agent pausing for an approval. */
function pausedStep(runId: string): RunEvent[] {
  const started = (j: number): RunEvent => ({
    type: 'action_started',
    runId,
    stepIndex: 0,
    resultId: `s0.a${j}`,
    action: research(String(j)).action,
    replayed: false,
    replayPolicy: 'safe',
    childRunId: `${runId}-child-${j}`,
  });
  const outcome = { status: 'executed', observation: 'ok', observationIsSynthetic: false } as const;
  return [
    { type: 'run_started', runId, resumed: false, fromStep: 0 },
    { type: 'step_started', runId, stepIndex: 0 },
    started(0),
    started(1),
    {
      type: 'action_finished',
      runId,
      stepIndex: 0,
      resultId: 's0.a1',
      outcome: { ...outcome, envReportedCompletion: false, observationTruncatedChars: 0 },
      childRunId: `${runId}-child-1`,
    },
    { type: 'input_requested', runId, stepIndex: 0, resultId: 's0.a0.c1', request: childAsks(runId) },
  ];
}

/** What the same driver still delivers after that: the third call runs and finishes. */
function lateCall(runId: string): RunEvent[] {
  return [
    {
      type: 'action_started',
      runId,
      stepIndex: 0,
      resultId: 's0.a2',
      action: research('2').action,
      replayed: false,
      replayPolicy: 'safe',
    },
    {
      type: 'action_finished',
      runId,
      stepIndex: 0,
      resultId: 's0.a2',
      outcome: {
        status: 'executed',
        observation: 'ok',
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: 0,
      },
    },
  ];
}

describe('otelSink: events after a sub-agent paused', () => {
  it("ends the driver's span when its call settles, so a call that starts after the request still nests in it", async () => {
    const t = tracing();
    const sink = otelSink({ tracer: t.tracer });
    for (const e of pausedStep('r')) await sink.deliver(e);
    // The two calls that ran are over (the first one's child waits for a person); the driver is not.
    expect(t.spans().map((s) => s.name)).toEqual(['execute_tool research', 'execute_tool research']);
    for (const e of lateCall('r')) await sink.deliver(e);
    sink.settled?.('r', { result: { stopReason: 'awaiting_input', pending: childAsks('r') } } as never);
    const spans = t.spans();
    expect(treeOf(spans)).toEqual([
      'invoke_agent',
      '  execute_tool research',
      '  execute_tool research',
      '  execute_tool research',
    ]);
    const root = only(spans, 'invoke_agent');
    expect(root.attributes['polyloop.run.pending_input']).toBe('child');
    const end = (time: readonly [number, number]): number => time[0] * 1e9 + time[1];
    for (const s of spans) expect(end(s.endTime)).toBeLessThanOrEqual(end(root.endTime));
    const paused = spans.find((s) => s.attributes['gen_ai.tool.call.id'] === 's0.a0');
    expect(paused?.attributes['polyloop.action.pending_input']).toBe('approval');
  });
});
