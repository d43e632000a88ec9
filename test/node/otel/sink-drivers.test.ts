/**
 * otelSink across drivers: a run that pauses for a person ends its invoke_agent span with the
 * request it waits on; the driver that carries the reply out opens a second invoke_agent in the
 * first one's trace, a child of it and linked to it (the trace context kept in run_started); a stop
 * and a cancel end the span with their reason; the first driver's span is a child of the caller's.
 */
import { context, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLog, requestStop, resume, run } from '../../../src/core/index.ts';
import type { EventSink, ToolSpec } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { InMemoryStore } from '../../../src/core/index.ts';
import { makeTools } from '../core/fixtures.ts';
import { installContextManager, only, tracedAgent, tracing, treeOf } from './sink-fixtures.ts';

const NOTE_THEN_FINAL = ['{"tool":"note","args":{"text":"hello"}}', '{"final":"done"}'];
const approvalTools = (): ToolSpec[] => makeTools().map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));

describe('otelSink: a run that waits for a person', () => {
  it('ends the invoke_agent span when the run pauses, with the kind of request it waits on', async () => {
    const t = tracing();
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer }), {
      script: NOTE_THEN_FINAL,
      tools: approvalTools(),
    });
    const paused = await run(agent, request);
    expect(paused.stopReason).toBe('awaiting_input');
    // Ended (and so exported) by the time `run` settles: nothing else is left to end it.
    expect(treeOf(t.spans())).toEqual(['invoke_agent', '  chat scripted']);
    const root = t.spans().find((s) => s.name === 'invoke_agent');
    expect(root?.attributes).toMatchObject({ 'polyloop.run.pending_input': 'approval', 'polyloop.run.resumed': false });
    expect(root?.attributes['polyloop.run.stop_reason']).toBeUndefined();
  });

  it('opens a second invoke_agent for the driver that carries the reply out: same trace, child of and linked to the first', async () => {
    const t = tracing();
    const sink = otelSink({ tracer: t.tracer });
    const { agent, request, store } = tracedAgent(sink, { script: NOTE_THEN_FINAL, tools: approvalTools() });
    const paused = await run(agent, request);
    const first = t.spans().find((s) => s.name === 'invoke_agent');
    const sc = first?.spanContext();
    const stored = readRunLog(await store.readLog('run-1')).started?.traceparent;
    expect(stored).toBe(`00-${sc?.traceId}-${sc?.spanId}-01`);

    const input = { kind: 'approve' as const, resultId: paused.pending?.resultId as string };
    const done = await resume(agent, request, { input });
    expect(done.stopReason).toBe('final_answer');
    const spans = t.spans();
    const second = spans.filter((s) => s.name === 'invoke_agent')[1];
    expect(second?.spanContext().traceId).toBe(sc?.traceId);
    expect(second?.parentSpanContext?.spanId).toBe(sc?.spanId);
    expect(second?.links.map((l) => l.context)).toEqual([
      { traceId: sc?.traceId, spanId: sc?.spanId, traceFlags: 1, isRemote: true },
    ]);
    expect(second?.attributes).toMatchObject({
      'polyloop.run.resumed': true,
      'polyloop.run.from_step': 0,
      'polyloop.run.resolution': 'await_input',
      'polyloop.run.stop_reason': 'final_answer',
    });
    expect(treeOf(spans)).toEqual([
      'invoke_agent',
      '  chat scripted',
      '  invoke_agent',
      '    execute_tool note',
      '    chat scripted',
    ]);
  });

  it('joins the first trace from a sink that never saw the first driver (another process)', async () => {
    const first = tracing();
    const { agent, request, store } = tracedAgent(otelSink({ tracer: first.tracer }), {
      script: NOTE_THEN_FINAL,
      tools: approvalTools(),
    });
    const paused = await run(agent, request);
    const later = tracing();
    const again = tracedAgent(otelSink({ tracer: later.tracer }), {
      script: NOTE_THEN_FINAL,
      tools: approvalTools(),
      store,
    });
    await resume(again.agent, again.request, { input: { kind: 'approve', resultId: paused.pending?.resultId ?? '' } });
    const root = first
      .spans()
      .find((s) => s.name === 'invoke_agent')
      ?.spanContext();
    expect(root).toBeDefined();
    const resumed = later.spans().find((s) => s.name === 'invoke_agent');
    expect(resumed?.spanContext().traceId).toBe(root?.traceId);
    expect(resumed?.parentSpanContext).toMatchObject({ spanId: root?.spanId, isRemote: true });
    expect(resumed?.links[0]?.context.spanId).toBe(root?.spanId);
  });
});

describe('otelSink: a run stopped', () => {
  it('ends the span of a run its caller cancels with stop reason cancelled, closing the action cut short', async () => {
    const t = tracing();
    const controller = new AbortController();
    const wait: ToolSpec = {
      name: 'wait',
      description: 'Waits until cancelled.',
      parameters: { type: 'object', properties: {} },
      replayPolicy: 'safe',
      handler: (_args, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
          controller.abort(new Error('caller gave up'));
        }),
    };
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer }), {
      script: ['{"tool":"wait","args":{}}'],
      tools: [wait],
    });
    await expect(run(agent, request, { signal: controller.signal })).rejects.toThrow('caller gave up');
    const spans = t.spans();
    expect(treeOf(spans)).toEqual(['invoke_agent', '  chat scripted', '  execute_tool wait']);
    const root = spans.find((s) => s.name === 'invoke_agent');
    expect(root?.attributes['polyloop.run.stop_reason']).toBe('cancelled');
    expect(root?.status.code).toBe(SpanStatusCode.UNSET);
    expect(spans.find((s) => s.name === 'execute_tool wait')?.attributes['polyloop.interrupted']).toBe(true);
  });

  it('traces a stop found by the next driver as an invoke_agent in the first trace that ends the run cancelled', async () => {
    const t = tracing();
    const { agent, request, store } = tracedAgent(otelSink({ tracer: t.tracer }), {
      script: NOTE_THEN_FINAL,
      tools: approvalTools(),
    });
    await run(agent, request);
    await requestStop(store, 'run-1', 'no longer wanted');
    const ended = await resume(agent, request);
    expect(ended.stopReason).toBe('cancelled');
    const [first, second] = t.spans().filter((s) => s.name === 'invoke_agent');
    expect(second?.spanContext().traceId).toBe(first?.spanContext().traceId);
    expect(second?.links[0]?.context.spanId).toBe(first?.spanContext().spanId);
    expect(second?.attributes).toMatchObject({ 'polyloop.run.resumed': true, 'polyloop.run.stop_reason': 'cancelled' });
    expect(treeOf(t.spans())).toEqual(['invoke_agent', '  chat scripted', '  invoke_agent']);
  });
});

describe('otelSink: a driver that died', () => {
  const SCRIPT = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];

  it('ends the spans of a driver whose store failed with status ERROR as its run call rejects', async () => {
    const t = tracing();
    const sink = otelSink({ tracer: t.tracer });
    const inner = new InMemoryStore();
    // The run's third write (the model's reply and the action's intent) fails: the driver stops with
    // its invoke_agent and chat spans open (the call's end is announced once its reply is written).
    const crashing = tracedAgent(sink, { script: SCRIPT, store: faultyStore(inner, { crashAfterWrites: 2 }) });
    const failure = (await run(crashing.agent, crashing.request).then(
      () => new Error('the run did not fail'),
      (e: unknown) => e,
    )) as Error;
    expect(treeOf(t.spans())).toEqual(['invoke_agent', '  chat scripted']);
    const first = only(t.spans(), 'invoke_agent');
    // Content is off: the failure's message (it may quote a record) stays out of the span.
    expect(first.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(first.attributes['error.type']).toBe(failure.name);
    expect(only(t.spans(), 'chat scripted').attributes['polyloop.interrupted']).toBe(true);

    const again = tracedAgent(sink, { script: SCRIPT, store: inner });
    expect((await resume(again.agent, again.request)).stopReason).toBe('final_answer');
    const second = t.spans().filter((s) => s.name === 'invoke_agent')[1];
    expect(second?.attributes).toMatchObject({
      'polyloop.run.resumed': true,
      'polyloop.run.stop_reason': 'final_answer',
    });
    expect(second?.parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    expect(second?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("ends a first driver's span whose run_started write failed, saying which driver it was", async () => {
    const t = tracing();
    const crashing = tracedAgent(otelSink({ tracer: t.tracer }), {
      script: SCRIPT,
      store: faultyStore(new InMemoryStore(), { crashAfterWrites: 0 }),
    });
    await expect(run(crashing.agent, crashing.request)).rejects.toThrow();
    const span = only(t.spans(), 'invoke_agent');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes).toMatchObject({ 'polyloop.run.resumed': false, 'polyloop.run.from_step': 0 });
  });

  it('ends the spans a driver left open, marked interrupted, when the next one starts, if its sink was never told it settled', async () => {
    const t = tracing();
    const otel = otelSink({ tracer: t.tracer });
    // A sink that wraps the otelSink and passes its trace context on, but not its settled hook.
    const wrapper: EventSink = {
      params: otel.params,
      deliver: (e) => otel.deliver(e),
      traceparent: (runId) => otel.traceparent?.(runId),
    };
    const inner = new InMemoryStore();
    const crashing = tracedAgent(wrapper, { script: SCRIPT, store: faultyStore(inner, { crashAfterWrites: 2 }) });
    await expect(run(crashing.agent, crashing.request)).rejects.toThrow();
    expect(t.spans()).toEqual([]);

    const again = tracedAgent(wrapper, { script: SCRIPT, store: inner });
    expect((await resume(again.agent, again.request)).stopReason).toBe('final_answer');
    expect(treeOf(t.spans())).toEqual([
      'invoke_agent',
      '  chat scripted',
      '  invoke_agent',
      '    chat scripted',
      '    execute_tool add',
      '    chat scripted',
    ]);
    const [first, second] = t.spans().filter((s) => s.name === 'invoke_agent');
    expect(first?.attributes['polyloop.interrupted']).toBe(true);
    expect(first?.attributes['polyloop.run.stop_reason']).toBeUndefined();
    expect(second?.attributes['polyloop.interrupted']).toBeUndefined();
  });
});

describe("otelSink: the caller's span", () => {
  let uninstall: () => void = () => undefined;
  beforeAll(() => {
    uninstall = installContextManager();
  });
  afterAll(() => uninstall());

  it("makes the first driver's invoke_agent a child of the caller's active span", async () => {
    const t = tracing();
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer }), { script: ['{"final":"hi"}'] });
    const caller = t.tracer.startSpan('handle request');
    await context.with(trace.setSpan(ROOT_CONTEXT, caller), () => run(agent, request));
    caller.end();
    expect(treeOf(t.spans())).toEqual(['handle request', '  invoke_agent', '    chat scripted']);
  });

  it("puts a later driver in the run's first trace, not in its caller's", async () => {
    const t = tracing();
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer }), {
      script: NOTE_THEN_FINAL,
      tools: approvalTools(),
    });
    const paused = await run(agent, request);
    const other = t.tracer.startSpan('another request');
    const input = { kind: 'approve' as const, resultId: paused.pending?.resultId ?? '' };
    await context.with(trace.setSpan(ROOT_CONTEXT, other), () => resume(agent, request, { input }));
    other.end();
    const [first, second] = t.spans().filter((s) => s.name === 'invoke_agent');
    expect(second?.spanContext().traceId).toBe(first?.spanContext().traceId);
    expect(second?.spanContext().traceId).not.toBe(other.spanContext().traceId);
  });
});
