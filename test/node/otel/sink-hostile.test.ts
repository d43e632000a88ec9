/**
 * otelSink under hostile tracers and crowds: a span whose methods throw, a tracer that answers
 * null or spans that name no trace, a tracer built to the API's shape by hand, a second driver
 * refused the run's lock, a hundred runs at once — the run goes on, no span is left open, and one
 * driver's broken span does not take the next driver's spans with it.
 */
import { trace } from '@opentelemetry/api';
import type { Span, Tracer } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { InMemoryStore, readRunLog, resume, run } from '../../../src/core/index.ts';
import type { ToolSpec } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { makeTools } from '../core/fixtures.ts';
import { tracedAgent, tracing, treeOf } from './sink-fixtures.ts';

const NOTE_THEN_FINAL = ['{"tool":"note","args":{"text":"hello"}}', '{"final":"done"}'];
const SCRIPT = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];
const approvalTools = (): ToolSpec[] => makeTools().map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));

/** A tracer over `inner` that counts the spans it starts and ends, and lets `spoil` break some. */
function counting(inner: Tracer, spoil: (name: string, n: number) => boolean = () => false) {
  const open = new Set<Span>();
  let n = 0;
  const tracer = {
    startSpan(name: string, options?: unknown, ctx?: unknown): Span {
      const span = (inner.startSpan as (...a: unknown[]) => Span)(name, options, ctx);
      open.add(span);
      const end = span.end.bind(span);
      span.end = (t) => {
        open.delete(span);
        end(t);
      };
      if (spoil(name, n++)) {
        const fail = (): never => {
          throw new Error('span method fails');
        };
        span.setAttribute = fail;
        span.setAttributes = fail;
        span.setStatus = fail;
      }
      return span;
    },
    startActiveSpan: () => undefined,
  };
  return { tracer: tracer as unknown as Tracer, open };
}

describe('otelSink: a span whose methods throw', () => {
  it("does not keep a driver's broken span from the next driver's spans of the same run", async () => {
    const t = tracing();
    const c = counting(t.tracer, (name, n) => name === 'invoke_agent' && n === 0);
    const { agent, request } = tracedAgent(otelSink({ tracer: c.tracer }), {
      script: NOTE_THEN_FINAL,
      tools: approvalTools(),
    });
    const paused = await run(agent, request);
    expect(paused.stopReason).toBe('awaiting_input');
    const input = { kind: 'approve' as const, resultId: paused.pending?.resultId as string };
    const done = await resume(agent, request, { input });
    expect(done.stopReason).toBe('final_answer');
    expect(c.open.size).toBe(0);
    const second = t.spans().filter((s) => s.name === 'invoke_agent')[1];
    expect(second?.attributes['polyloop.run.stop_reason']).toBe('final_answer');
    expect(treeOf(t.spans())).toEqual([
      'invoke_agent',
      '  chat scripted',
      '  invoke_agent',
      '    execute_tool note',
      '    chat scripted',
    ]);
  });

  it('ends every span of a run whose every span throws on each attribute and status', async () => {
    const t = tracing();
    const c = counting(t.tracer, () => true);
    const { agent, request } = tracedAgent(otelSink({ tracer: c.tracer }), { script: SCRIPT });
    const result = await run(agent, request);
    expect(result.stopReason).toBe('final_answer');
    expect(c.open.size).toBe(0);
  });
});

describe('otelSink: a tracer that answers nothing usable', () => {
  it('lets the run go on when startSpan returns null, and keeps no traceparent', async () => {
    const nullTracer = { startSpan: () => null, startActiveSpan: () => undefined } as unknown as Tracer;
    const { agent, request, store } = tracedAgent(otelSink({ tracer: nullTracer }), { script: SCRIPT });
    const result = await run(agent, request);
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: '3' });
    expect(readRunLog(await store.readLog('run-1')).started?.traceparent).toBeUndefined();
  });

  it('keeps no traceparent for spans whose context names no trace (all-zero ids), and the run goes on', async () => {
    const invalid = trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 1 });
    const zeroTracer = { startSpan: () => invalid, startActiveSpan: () => undefined } as unknown as Tracer;
    const { agent, request, store } = tracedAgent(otelSink({ tracer: zeroTracer }), { script: SCRIPT });
    const result = await run(agent, request);
    expect(result).toMatchObject({ stopReason: 'final_answer', eventDeliveryFailures: 0 });
    expect(readRunLog(await store.readLog('run-1')).started?.traceparent).toBeUndefined();
  });
});

describe('otelSink: drivers of one run and crowds on one sink', () => {
  it("does not end a running driver's span when a second driver of the same run is refused the lock", async () => {
    const t = tracing();
    const c = counting(t.tracer);
    const sink = otelSink({ tracer: c.tracer });
    const store = new InMemoryStore();
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let entered = (): void => undefined;
    const inTool = new Promise<void>((r) => {
      entered = r;
    });
    const add: ToolSpec = {
      ...(makeTools()[0] as ToolSpec),
      handler: async () => {
        entered();
        await gate;
        return '3';
      },
    };
    const { agent, request } = tracedAgent(sink, { script: SCRIPT, tools: [add], store });
    const first = run(agent, request);
    await inTool;
    await expect(resume(agent, request)).rejects.toMatchObject({ name: 'RunLockedError' });
    await expect(run(agent, request)).rejects.toMatchObject({ name: 'RunLockedError' });
    expect(t.spans().map((s) => s.name)).toEqual(['chat scripted']);
    release();
    expect((await first).stopReason).toBe('final_answer');
    expect(treeOf(t.spans())).toEqual(['invoke_agent', '  chat scripted', '  execute_tool add', '  chat scripted']);
    expect(c.open.size).toBe(0);
  });

  it('leaves no span open after a hundred runs at once settle: finished, paused for a person and rejected', async () => {
    const t = tracing();
    const c = counting(t.tracer);
    const sink = otelSink({ tracer: c.tracer });
    const runs = Array.from({ length: 100 }, (_, i) => {
      const kind = i % 3;
      const failing = kind === 2 ? faultyStore(new InMemoryStore(), { crashAfterWrites: 2 }) : new InMemoryStore();
      const { agent, request } = tracedAgent(sink, {
        script: kind === 1 ? NOTE_THEN_FINAL : SCRIPT,
        tools: approvalTools(),
        runId: `r${i}`,
        store: failing,
      });
      return run(agent, request).then(
        (r) => r.stopReason,
        (e: Error) => e.name,
      );
    });
    const outcomes = await Promise.all(runs);
    expect(new Set(outcomes)).toEqual(new Set(['final_answer', 'awaiting_input', 'StoreError']));
    expect(c.open.size).toBe(0);
    expect(t.spans().filter((s) => s.name === 'invoke_agent')).toHaveLength(100);
  });
});

describe('otelSink: a tracer built by hand to the API shape (another version of @opentelemetry/api)', () => {
  it('gives it each span with its parent in the context, by the key every API version shares', async () => {
    const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');
    const started: { name: string; parent: string | undefined }[] = [];
    let next = 1;
    const handmade = {
      startSpan(name: string, _options: unknown, ctx?: { getValue(key: symbol): unknown }) {
        const spanId = (next++).toString(16).padStart(16, '0');
        const parent = ctx?.getValue(SPAN_KEY) as { spanContext(): { spanId: string } } | undefined;
        started.push({ name, parent: parent?.spanContext().spanId });
        const sc = { traceId: 'a'.repeat(32), spanId, traceFlags: 1 };
        const self = { spanContext: () => sc, setAttribute: () => self, setAttributes: () => self };
        return { ...self, setStatus: () => self, end: () => undefined, isRecording: () => true };
      },
    };
    const { agent, request, store } = tracedAgent(otelSink({ tracer: handmade as unknown as Tracer }), {
      script: SCRIPT,
    });
    const result = await run(agent, request);
    expect(result).toMatchObject({ stopReason: 'final_answer', eventDeliveryFailures: 0 });
    expect(readRunLog(await store.readLog('run-1')).started?.traceparent).toBe(
      `00-${'a'.repeat(32)}-${'1'.padStart(16, '0')}-01`,
    );
    const root = '1'.padStart(16, '0');
    expect(started).toEqual([
      { name: 'invoke_agent', parent: undefined },
      { name: 'chat scripted', parent: root },
      { name: 'execute_tool add', parent: root },
      { name: 'chat scripted', parent: root },
    ]);
  });
});
