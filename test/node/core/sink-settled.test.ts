/**
 * A sink's optional `settled`: told once, after the last event, how each driver session it heard of
 * ended — the result (a pause for input included), or what `run`/`resume` rejected with — and never
 * for a call that was refused before it drove anything (a tracing sink ends its span there).
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, InMemoryStore, requestStop, resume, run } from '../../../src/core/index.ts';
import type { AgentDefinition, EventSink, RunEvent, SettledRun } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { harness, makeTools } from './fixtures.ts';
import type { Harness } from './fixtures.ts';

type Told = { readonly runId: string; readonly outcome: SettledRun; readonly afterEvents: number };

/** A sink that records events and every `settled` call, with how many events came before it. */
function settlingSink(opts: { throws?: boolean } = {}): EventSink & { events: RunEvent[]; told: Told[] } {
  const events: RunEvent[] = [];
  const told: Told[] = [];
  return {
    params: Object.freeze({ sink: 'settling' }),
    events,
    told,
    deliver: (e) => void events.push(e),
    settled(runId, outcome) {
      told.push({ runId, outcome, afterEvents: events.length });
      if (opts.throws) throw new Error('a sink that fails in settled');
    },
  };
}

function withSink(h: Harness, sink: EventSink): AgentDefinition {
  const { model, interpreter, store, syntheticObservations } = h.agent;
  return defineAgent({ model, interpreter, store, events: sink, syntheticObservations });
}

const gated = () => makeTools().map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));

describe('EventSink.settled', () => {
  it('is told once with the result, after run_ended, when a run finishes', async () => {
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'] });
    const sink = settlingSink();
    const result = await run(withSink(h, sink), h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(sink.told).toHaveLength(1);
    expect(sink.told[0]).toMatchObject({ runId: 'run-1', outcome: { result }, afterEvents: sink.events.length });
    expect(sink.events.at(-1)?.type).toBe('run_ended');
  });

  it('is told of a pause for input (awaiting_input), then of the resume that carried the reply out', async () => {
    const h = harness({ script: ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'], tools: gated() });
    const sink = settlingSink();
    const agent = withSink(h, sink);
    const paused = await run(agent, h.request);
    expect(paused.stopReason).toBe('awaiting_input');
    expect(sink.told.map((t) => 'result' in t.outcome && t.outcome.result.stopReason)).toEqual(['awaiting_input']);
    const resumeWith = { input: { kind: 'approve', resultId: paused.pending?.resultId ?? '' } } as const;
    const done = await resume(agent, h.request, resumeWith);
    expect(done.stopReason).toBe('final_answer');
    expect(sink.told.map((t) => 'result' in t.outcome && t.outcome.result.stopReason)).toEqual([
      'awaiting_input',
      'final_answer',
    ]);
  });

  it('is told the error when the run rejects after it began (a store that fails midway)', async () => {
    const inner = new InMemoryStore();
    const h = harness({ store: faultyStore(inner, { crashAfterWrites: 3 }) });
    const sink = settlingSink();
    const rejected = await run(withSink(h, sink), h.request).then(
      () => null,
      (e: unknown) => e,
    );
    expect(rejected).toMatchObject({ name: 'StoreError' });
    expect(sink.told).toHaveLength(1);
    expect(sink.told[0]?.outcome).toEqual({ error: rejected });
  });

  it('is told even when the first write fails, so a span opened for the run does not stay open', async () => {
    const h = harness({ store: faultyStore(new InMemoryStore(), { crashAfterWrites: 0 }) });
    const sink = settlingSink();
    await expect(run(withSink(h, sink), h.request)).rejects.toMatchObject({ name: 'StoreError' });
    expect(sink.events).toEqual([]);
    expect(sink.told).toHaveLength(1);
  });

  it('is not told of a call refused before it drove anything (the run exists, its identity differs, no log)', async () => {
    const h = harness({ script: ['{"final":"3"}'] });
    const sink = settlingSink();
    const agent = withSink(h, sink);
    await run(agent, h.request);
    sink.told.length = 0;
    await expect(run(agent, h.request)).rejects.toMatchObject({ code: 'run_exists' });
    await expect(resume(agent, 'never-ran')).rejects.toMatchObject({ code: 'run_not_found' });
    await expect(resume(agent, { ...h.request, modelBinding: { user: 'someone else' } })).rejects.toMatchObject({
      code: 'run_identity_mismatch',
    });
    expect(sink.told).toEqual([]);
  });

  it('is told of a stop found when the driver took the run (the run ends cancelled)', async () => {
    const h = harness({ script: ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'], tools: gated() });
    const sink = settlingSink();
    const agent = withSink(h, sink);
    await run(agent, h.request);
    await requestStop(h.store, 'run-1', 'not needed any more');
    sink.told.length = 0;
    const stopped = await resume(agent, h.request);
    expect(stopped.stopReason).toBe('cancelled');
    expect(sink.told).toEqual([{ runId: 'run-1', outcome: { result: stopped }, afterEvents: sink.events.length }]);
  });

  it('a sink whose settled throws changes nothing about the result', async () => {
    const h = harness({ script: ['{"final":"3"}'] });
    const sink = settlingSink({ throws: true });
    const result = await run(withSink(h, sink), h.request);
    expect(result).toMatchObject({ stopReason: 'final_answer', eventDeliveryFailures: 0 });
    expect(sink.told).toHaveLength(1);
  });
});
