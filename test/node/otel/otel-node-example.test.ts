/**
 * examples/otel-node runs as written against an OTLP/HTTP collector: a loopback server that parses
 * the OTLP/JSON requests the exporter sends. Every span arrives — both drivers' `invoke_agent`, each
 * model call's `chat`, each tool's `execute_tool` — in the one trace the example prints, the second
 * driver's `invoke_agent` linked to the first's.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { finished } from '../platform-node/helpers.ts';
import { startCollector } from './otlp-collector.ts';
import type { Collector, ReceivedSpan } from './otlp-collector.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const MAIN = join(ROOT, 'examples/otel-node/main.ts');

let collector: Collector | null = null;
afterEach(async () => {
  await collector?.close();
  collector = null;
});

describe('examples/otel-node', () => {
  it('sends every span of a run paused for an approval and carried on by a second driver to the collector, in one trace', async () => {
    collector = await startCollector();
    const env = { ...process.env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.url };
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { cwd: ROOT, env, stdio: 'pipe' });
    const done = await finished(child);
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    const lines = done.stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual([
      'paused for approval s1.input',
      'final_answer It rains in Oslo; the team has a note.',
    ]);
    const traceId = /^trace ([0-9a-f]{32})$/.exec(lines[2] ?? '')?.[1];
    expect(traceId).toBeDefined();

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
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceId]));
    const [first, second] = spans
      .filter((s) => s.name === 'invoke_agent')
      .sort((a, b) => Number(a.attributes['polyloop.run.resumed']) - Number(b.attributes['polyloop.run.resumed']));
    const one = first as ReceivedSpan;
    const two = second as ReceivedSpan;
    expect(one).toMatchObject({ parentSpanId: null, links: [], scope: 'polyloop-example' });
    expect(one.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': 'weather-1',
      'polyloop.run.resumed': false,
      'polyloop.run.pending_input': 'approval',
    });
    expect(two).toMatchObject({ parentSpanId: one.spanId, links: [{ traceId, spanId: one.spanId }] });
    expect(two.attributes).toMatchObject({
      'polyloop.run.resumed': true,
      'polyloop.run.resolution': 'await_input',
      'polyloop.run.stop_reason': 'final_answer',
    });
    const chat = spans.find((s) => s.name === 'chat stand-in-1') as ReceivedSpan;
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'stand-in-1',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 20,
    });
    // Content is off by default: no prompt, reply, argument or result left the process.
    for (const s of spans)
      expect(Object.keys(s.attributes).filter((k) => /messages|arguments|result/.test(k))).toEqual([]);
    const note = spans.find((s) => s.name === 'execute_tool note') as ReceivedSpan;
    expect(note.parentSpanId).toBe(two.spanId);
    expect(note.attributes).toMatchObject({
      'gen_ai.tool.name': 'note',
      'gen_ai.tool.call.id': 's1.action',
      'polyloop.replay_policy': 'never',
    });
  }, 30_000);
});
