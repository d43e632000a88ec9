/**
 * A run object's runs are traced across drives (docs/observability.md#cloudflare-workers): in real
 * workerd (Miniflare), `createRunObject` with an `otelSink` as its setup's `events` — the run
 * started by `POST /runs`, paused for an approval, carried on by `POST /runs/:id/input` — sends
 * spans that form one trace, the second drive's `invoke_agent` the first's child and linked to it;
 * the run's log keeps the first span's context, and a capturing sink gets the model's messages.
 */
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeLog, readRunLog } from '../../../src/core/index.ts';
import { startCollector } from './otlp-collector.ts';
import type { Collector, ReceivedSpan } from './otlp-collector.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const TOKEN = 'run-object-trace-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

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
    entryPoints: [join(ROOT, 'test/workers/fixtures/otel-run-object-worker.ts')],
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

async function call(path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const init = body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) };
  const res = await (mf as Miniflare).dispatchFetch(`http://polyloop.test${path}`, init);
  return { status: res.status, text: await res.text() };
}

/** Polls until `done` holds (the run object drives in the background; spans leave as they end). */
async function until(what: string, done: () => Promise<boolean> | boolean): Promise<void> {
  for (const deadline = Date.now() + 30_000; !(await done()); await new Promise((r) => setTimeout(r, 20)))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

const statusOf = async (runId: string): Promise<{ status: string }> =>
  JSON.parse((await call(`/runs/${runId}`)).text) as { status: string };

describe('a run object traced by otelSink in workerd', () => {
  it('keeps the drives of a run paused for an approval and carried on by POST /runs/:id/input in one trace, the second linked to the first', async () => {
    collector = await startCollector();
    mf = new Miniflare({
      modules: true,
      script: await bundle(),
      compatibilityDate: '2026-04-20',
      durableObjects: { RUNS: { className: 'RunObject', useSQLite: true } },
      bindings: { POLYLOOP_TOKEN: TOKEN, OTLP_TRACES_URL: collector.url },
    });
    expect((await call('/runs', { runId: 'r1', input: {} })).status).toBe(201);
    await until('the approval', async () => (await statusOf('r1')).status === 'awaiting_input');
    expect((await call('/runs/r1/input', { kind: 'approve', resultId: 's1.input' })).status).toBe(202);
    await until('the end', async () => (await statusOf('r1')).status === 'ended');
    const spans = (collector as Collector).spans;
    await until('seven spans', () => spans.length >= 7);

    const log = readRunLog(decodeLog((await call('/runs/r1/log')).text).records);
    const traceparent = log.started?.traceparent;
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, spanId] = (traceparent as string).split('-');
    const invokes = spans.filter((s) => s.name === 'invoke_agent');
    expect(invokes).toHaveLength(2);
    const first = invokes.find((s) => s.attributes['polyloop.run.resumed'] === false) as ReceivedSpan;
    const second = invokes.find((s) => s.attributes['polyloop.run.resumed'] === true) as ReceivedSpan;
    expect(first).toMatchObject({ traceId, spanId });
    expect(second).toMatchObject({ traceId, parentSpanId: spanId, links: [{ traceId, spanId }] });
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceId]));
    // captureContent: the run object passes the sink's wish for the model's messages on.
    const chats = spans.filter((s) => s.name === 'chat weather-1');
    expect(chats).toHaveLength(3);
    for (const c of chats) expect(typeof c.attributes['gen_ai.input.messages']).toBe('string');
  }, 60_000);
});
