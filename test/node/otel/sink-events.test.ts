/**
 * otelSink fed event sequences by hand, for orders a real run produces only in a race: the other
 * calls of a step that go on after one's sub-agent paused (once nothing of the driver was running),
 * and the bound on how many paused sessions the sink keeps for such late events.
 */
import { describe, expect, it } from 'vitest';
import type { ActionDecision, InputRequest, RunEvent } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { tracing, treeOf } from './sink-fixtures.ts';

const research = (q: string): ActionDecision => ({
  kind: 'action',
  action: { kind: 'tool_call', name: 'research', arguments: { q } },
  trajectoryRepr: `research(${q})`,
  historyText: '',
});

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
  const childAsks: InputRequest = {
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
    { type: 'input_requested', runId, stepIndex: 0, resultId: 's0.a0.c1', request: childAsks },
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

describe('otelSink: events after a driver paused', () => {
  it("ends the driver's span once nothing runs, and still nests a call that starts after it under it", async () => {
    const t = tracing();
    const sink = otelSink({ tracer: t.tracer });
    for (const e of pausedStep('r')) await sink.deliver(e);
    expect(treeOf(t.spans())).toEqual(['invoke_agent', '  execute_tool research', '  execute_tool research']);
    for (const e of lateCall('r')) await sink.deliver(e);
    expect(treeOf(t.spans())).toEqual([
      'invoke_agent',
      '  execute_tool research',
      '  execute_tool research',
      '  execute_tool research',
    ]);
    const root = t.spans().find((s) => s.name === 'invoke_agent');
    expect(root?.attributes['polyloop.run.pending_input']).toBe('child');
  });

  it('keeps the last 64 paused drivers for late events, and forgets older ones', async () => {
    const t = tracing();
    const sink = otelSink({ tracer: t.tracer });
    const runs = Array.from({ length: 65 }, (_, i) => `r${i}`);
    for (const runId of runs) for (const e of pausedStep(runId)) await sink.deliver(e);
    for (const runId of runs) for (const e of lateCall(runId)) await sink.deliver(e);
    const late = (runId: string) =>
      t.spans().filter((s) => s.attributes['gen_ai.conversation.id'] === runId && s.name === 'execute_tool research');
    expect(late('r0').length).toBe(2);
    expect(late('r1').length).toBe(3);
    expect(late('r64').length).toBe(3);
  });
});
