/**
 * The sink of one Worker drive wraps the run setup's own `events` sink: a run driven through it
 * gives that sink every hook a tracing sink needs — its `traceparent` lands in `run_started`, its
 * `withMessages` puts the model's messages on each `model_call_started`, and its `settled` is told
 * how each driver ended (a pause for an approval, then the end) — and a sink without them gets none.
 */
import { describe, expect, it } from 'vitest';
import { readRunLog, resume, run } from '../../../src/core/index.ts';
import type { EventSink, RunEvent, SettledRun } from '../../../src/core/index.ts';
import { driveSink } from '../../../src/platform-workers/drive-sink.ts';
import { makeTools } from '../core/fixtures.ts';
import { tracedAgent } from '../otel/sink-fixtures.ts';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const NOTE_THEN_FINAL = ['{"tool":"note","args":{"text":"hello"}}', '{"final":"done"}'];

type Recording = EventSink & { readonly events: RunEvent[]; readonly told: [string, SettledRun][] };

/** A sink with every hook, each answering only when called on the sink itself. */
function recording(): Recording {
  const events: RunEvent[] = [];
  const told: [string, SettledRun][] = [];
  return {
    params: Object.freeze({ sink: 'recording' }),
    events,
    told,
    withMessages: true,
    traceparent(this: Recording) {
      return this.events === events ? TRACEPARENT : undefined;
    },
    deliver: (e) => void events.push(e),
    settled(this: Recording, runId, outcome) {
      if (this.told === told) told.push([runId, outcome]);
    },
  };
}

const driveOf = (extra: EventSink | undefined): EventSink =>
  driveSink({
    extra,
    controller: new AbortController(),
    answer: null,
    cancelling: false,
    cancelRequested: () => false,
  });

describe('the sink of a Worker drive', () => {
  it('passes the setup sink’s traceparent, withMessages and settled on: a run paused for an approval and approved', async () => {
    const inner = recording();
    const tools = makeTools().map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
    const { agent, request, store } = tracedAgent(driveOf(inner), { script: NOTE_THEN_FINAL, tools });
    const paused = await run(agent, request);
    expect(paused.stopReason).toBe('awaiting_input');
    expect(paused.eventDeliveryFailures).toBe(0);
    expect(readRunLog(await store.readLog('run-1')).started?.traceparent).toBe(TRACEPARENT);
    const calls = inner.events.filter((e) => e.type === 'model_call_started');
    expect(calls.map((e) => Array.isArray(e.messages))).toEqual([true]);
    const input = { kind: 'approve' as const, resultId: paused.pending?.resultId as string };
    const done = await resume(agent, request, { input });
    expect(done.stopReason).toBe('final_answer');
    expect(inner.told.map(([runId, o]) => [runId, 'result' in o ? o.result.stopReason : 'error'])).toEqual([
      ['run-1', 'awaiting_input'],
      ['run-1', 'final_answer'],
    ]);
  });

  it('has none of the hooks when the setup gives no sink, or one without them', () => {
    for (const extra of [undefined, { params: {}, deliver: () => undefined }]) {
      const sink = driveOf(extra);
      expect([sink.traceparent, sink.withMessages, sink.settled]).toEqual([undefined, undefined, undefined]);
    }
  });
});
