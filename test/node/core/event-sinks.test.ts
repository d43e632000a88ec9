/** The two event sinks core exports for a short first agent: consoleSink prints a line per event, silentSink takes them. */
import { describe, expect, it } from 'vitest';
import { consoleSink, defineAgent, run, silentSink } from '../../../src/core/index.ts';
import type { RunEvent } from '../../../src/core/index.ts';
import { eventSinkContract } from '../../../src/testing/index.ts';
import { harness } from './fixtures.ts';

async function linesOf(
  script: readonly string[],
  opts: { maxChars?: number; deltas?: boolean } = {},
): Promise<string[]> {
  const lines: string[] = [];
  const h = harness({ script });
  const agent = defineAgent({ ...h.agent, events: consoleSink({ ...opts, write: (line) => void lines.push(line) }) });
  await run(agent, h.request);
  return lines;
}

describe('consoleSink', () => {
  it('prints one readable line per event, with the run id and the step number', async () => {
    const lines = await linesOf(['{"tool":"add","args":{"a":2,"b":40}}', '{"final":"42"}']);
    expect(lines).toEqual([
      '[run-1] run started',
      '[run-1] #0 step started',
      '[run-1] #0 model call',
      '[run-1] #0 model replied',
      '[run-1] #0 action: add({"a":2,"b":40})',
      '[run-1] #0 running add({"a":2,"b":40})',
      '[run-1] #0 executed: 42',
      '[run-1] #0 step finished (action, executed)',
      '[run-1] #1 step started',
      '[run-1] #1 model call',
      '[run-1] #1 model replied',
      '[run-1] #1 final: 42',
      '[run-1] #1 step finished (final)',
      '[run-1] run ended: final_answer after 2 steps, 1 valid action; answer: 42',
    ]);
  });

  it('folds whitespace and cuts long texts at maxChars', async () => {
    const lines = await linesOf([JSON.stringify({ final: `a\n\n${'x'.repeat(50)}` })], { maxChars: 10 });
    expect(lines).toContain('[run-1] #0 final: a xxxxxxx…');
    expect(lines.at(-1)).toBe('[run-1] run ended: final_answer after 1 step, 0 valid actions; answer: a xxxxxxx…');
  });

  it('prints model deltas only when asked, and a failed model call with its error', () => {
    const lines: string[] = [];
    const quiet = consoleSink({ write: (l) => void lines.push(l) });
    const loud = consoleSink({ write: (l) => void lines.push(l), deltas: true });
    const delta: RunEvent = { type: 'model_delta', runId: 'r', stepIndex: 0, callSeq: 0, delta: 'Hel' };
    void quiet.deliver(delta);
    void loud.deliver(delta);
    void quiet.deliver({
      type: 'model_call_finished',
      runId: 'r',
      stepIndex: 3,
      callSeq: 3,
      callId: null,
      error: 'ModelCallError: openai: invalid api key (status 401)',
    });
    void quiet.deliver({ type: 'warning', runId: 'r', code: 'usage_missing', message: 'no usage' });
    expect(lines).toEqual([
      '[r] #0 model: Hel',
      '[r] #3 model call failed: ModelCallError: openai: invalid api key (status 401)',
      '[r] warning usage_missing: no usage',
    ]);
  });

  it('reports its options in its params, and refuses a maxChars that is not a positive integer', () => {
    expect(consoleSink().params).toEqual({ sink: 'console', maxChars: 200, deltas: false });
    expect(consoleSink({ maxChars: 80, deltas: true }).params).toEqual({ sink: 'console', maxChars: 80, deltas: true });
    expect(() => consoleSink({ maxChars: 0 })).toThrow(RangeError);
  });

  it('passes the event sink contract, as does silentSink', async () => {
    for (const make of [() => consoleSink({ write: () => undefined }), silentSink]) {
      const suite = eventSinkContract({ name: 'sink', makeSink: make });
      expect(suite.cases.length).toBeGreaterThan(0);
      for (const c of suite.cases) await c.run();
    }
  });
});

describe('silentSink', () => {
  it('takes every event and says so in its params', async () => {
    const h = harness({ script: ['{"final":"7"}'] });
    const result = await run(defineAgent({ ...h.agent, events: silentSink() }), h.request);
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: '7', eventDeliveryFailures: 0 });
    expect(silentSink().params).toEqual({ sink: 'silent' });
  });
});
