/**
 * examples/otel-worker in real workerd (Miniflare), bundled as wrangler bundles a Worker (for the
 * browser, workerd's conditions first): a run in a Durable Object, traced by `otelSink`, its spans
 * sent by the OTLP/HTTP exporter from workerd to a loopback collector that parses the OTLP/JSON.
 * The run pauses for an approval; a second request carries it out with a new provider and sink:
 * every span arrives, in one trace, the second `invoke_agent` the first's child and linked to it.
 */
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterEach, describe, expect, it } from 'vitest';
import { startCollector } from './otlp-collector.ts';
import type { Collector, ReceivedSpan } from './otlp-collector.ts';

const ROOT = resolve(import.meta.dirname, '../../..');

let collector: Collector | null = null;
let mf: Miniflare | null = null;
afterEach(async () => {
  await mf?.dispose();
  await collector?.close();
  mf = null;
  collector = null;
});

async function bundle(): Promise<string> {
  const out = await build({
    entryPoints: [join(ROOT, 'examples/otel-worker/worker.ts')],
    bundle: true,
    format: 'esm',
    // The exporter's browser build posts with fetch; its Node build needs node:http.
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    external: ['cloudflare:*'],
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0]?.text ?? '';
}

describe('examples/otel-worker in workerd', () => {
  it('sends every span of a Durable Object run, paused for an approval and carried on by a second request, to the collector in one trace', async () => {
    collector = await startCollector();
    mf = new Miniflare({
      modules: true,
      script: await bundle(),
      compatibilityDate: '2026-04-20',
      durableObjects: { RUNS: { className: 'TracedRun', useSQLite: true } },
      bindings: { OTLP_TRACES_URL: collector.url },
    });
    const post = async (path: string, body: string): Promise<unknown> => {
      const res = await (mf as Miniflare).dispatchFetch(`http://worker.test${path}`, { method: 'POST', body });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text}`);
      return JSON.parse(text);
    };
    expect(await post('/runs/oslo-1', 'Weather in Oslo? Note it for the team.')).toEqual({
      stopReason: 'awaiting_input',
      finalAnswer: null,
      pending: 's1.input',
    });
    expect(await post('/runs/oslo-1/approve', 's1.input')).toEqual({
      stopReason: 'final_answer',
      finalAnswer: 'It rains in Oslo; the team has a note.',
      pending: null,
    });

    expect(collector.refused).toEqual([]);
    const spans = collector.spans;
    expect(spans.map((s) => s.name).sort()).toEqual(
      [
        'invoke_agent',
        'invoke_agent',
        'chat stand-in-1',
        'chat stand-in-1',
        'chat stand-in-1',
        'execute_tool weather',
        'execute_tool note',
      ].sort(),
    );
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['unknown_service']));
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const invokes = spans.filter((s) => s.name === 'invoke_agent');
    const first = invokes.find((s) => s.attributes['polyloop.run.resumed'] === false) as ReceivedSpan;
    const second = invokes.find((s) => s.attributes['polyloop.run.resumed'] === true) as ReceivedSpan;
    expect(first.attributes).toMatchObject({
      'gen_ai.conversation.id': 'oslo-1',
      'polyloop.run.pending_input': 'approval',
    });
    expect(second).toMatchObject({
      parentSpanId: first.spanId,
      links: [{ traceId: first.traceId, spanId: first.spanId }],
    });
    expect(second.attributes).toMatchObject({ 'polyloop.run.stop_reason': 'final_answer' });
    const note = spans.find((s) => s.name === 'execute_tool note') as ReceivedSpan;
    expect(note.parentSpanId).toBe(second.spanId);
  }, 60_000);
});
