/**
 * otelSink on a fork (forkRun): the fork's log begins with a copy of its source's run_started, trace
 * context included, so every driver of the fork joins the source's trace, under and linked to the
 * source's first span, its spans told apart by their conversation id (decision 0079, forks).
 */
import { describe, expect, it } from 'vitest';
import { forkRun, readRunLog, resume, run } from '../../../src/core/index.ts';
import type { ToolSpec } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { makeTools } from '../core/fixtures.ts';
import { tracedAgent, tracing } from './sink-fixtures.ts';

const NOTE_THEN_FINAL = ['{"tool":"note","args":{"text":"hello"}}', '{"final":"done"}'];
const approvalTools = (): ToolSpec[] => makeTools().map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));

describe('otelSink: a fork', () => {
  it("joins its source's trace: each fork driver under the source's first span, linked to it, with the fork's id", async () => {
    const t = tracing();
    const sink = otelSink({ tracer: t.tracer });
    const { agent, request, store } = tracedAgent(sink, { script: NOTE_THEN_FINAL, tools: approvalTools() });
    const paused = await run(agent, request);
    const source = t
      .spans()
      .find((s) => s.name === 'invoke_agent')
      ?.spanContext();
    await forkRun(store, 'run-1', { atStep: 0, newRunId: 'fork-1' });
    expect(readRunLog(await store.readLog('fork-1')).started?.traceparent).toBe(
      readRunLog(await store.readLog('run-1')).started?.traceparent,
    );
    const input = { kind: 'deny' as const, resultId: paused.pending?.resultId as string, reason: 'not in the fork' };
    expect((await resume(agent, { ...request, runId: 'fork-1' }, { input })).stopReason).toBe('final_answer');
    const forkSpans = t.spans().filter((s) => s.attributes['gen_ai.conversation.id'] === 'fork-1');
    const driver = forkSpans.find((s) => s.name === 'invoke_agent');
    expect(driver?.spanContext().traceId).toBe(source?.traceId);
    expect(driver?.parentSpanContext?.spanId).toBe(source?.spanId);
    expect(driver?.links.map((l) => l.context.spanId)).toEqual([source?.spanId]);
    expect(driver?.attributes).toMatchObject({
      'polyloop.run.resumed': true,
      'polyloop.run.resolution': 'await_input',
    });
    for (const s of forkSpans) expect(s.spanContext().traceId).toBe(source?.traceId);
  });
});
