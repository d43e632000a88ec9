/**
 * What a tracing sink is given (docs/api.md, events): the `traceparent` hook whose answer
 * `run_started` keeps, the resumed run's `run_started` event (resolution, the first driver's trace
 * context), the messages a `withMessages` sink asks for, and a model call's usage and finish reason.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, readRunLog, resume, run } from '../../../src/core/index.ts';
import type { EventSink, ModelReply, RunEvent, RunStartedRecord, RunStore } from '../../../src/core/index.ts';
import { collectingSink, faultyStore } from '../../../src/testing/index.ts';
import { harness } from './fixtures.ts';
import type { Harness } from './fixtures.ts';

const SCRIPT = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** A collecting sink with a `traceparent` hook that answers `answer` and counts what it was asked. */
function tracingSink(answer: () => unknown): EventSink & { events: RunEvent[]; asked: string[] } {
  const sink = collectingSink();
  const asked: string[] = [];
  return {
    ...sink,
    asked,
    traceparent(runId: string): string | undefined {
      asked.push(runId);
      return answer() as string | undefined;
    },
  };
}

const withSink = (h: Harness, events: EventSink): Harness => ({ ...h, agent: { ...h.agent, events } });
const startedRecord = async (store: RunStore): Promise<RunStartedRecord> =>
  (await store.readLog('run-1'))[0] as RunStartedRecord;

async function crashed(writes: number, events: EventSink): Promise<InMemoryStore> {
  const inner = new InMemoryStore();
  const h = withSink(harness({ script: SCRIPT, store: faultyStore(inner, { crashAfterWrites: writes }) }), events);
  await expect(run(h.agent, h.request)).rejects.toMatchObject({ name: 'StoreError' });
  return inner;
}

describe('the sink’s traceparent hook', () => {
  it('is asked once for a fresh run, and its answer lands in run_started', async () => {
    const sink = tracingSink(() => TP);
    const h = withSink(harness({ script: SCRIPT }), sink);
    const result = await run(h.agent, h.request);
    expect(sink.asked).toEqual(['run-1']);
    expect((await startedRecord(h.store)).traceparent).toBe(TP);
    expect(result.eventDeliveryFailures).toBe(0);
    // The fresh run's own event carries neither: the sink opened the span it names.
    expect(sink.events[0]).toEqual({ type: 'run_started', runId: 'run-1', resumed: false, fromStep: 0 });
  });

  it('leaves run_started without one when it answers undefined, and counts nothing', async () => {
    const sink = tracingSink(() => undefined);
    const h = withSink(harness({ script: SCRIPT }), sink);
    const result = await run(h.agent, h.request);
    expect('traceparent' in (await startedRecord(h.store))).toBe(false);
    expect(result.eventDeliveryFailures).toBe(0);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('no tracer');
      },
    ],
    ['answers a malformed value', () => 'not-a-traceparent'],
    ['answers upper-case hex', () => TP.toUpperCase()],
    ['answers an all-zero trace id', () => `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['answers a number', () => 42],
  ])('counts a failed delivery when it %s, and the run goes on untraced', async (_what, answer) => {
    const sink = tracingSink(answer);
    const h = withSink(harness({ script: SCRIPT }), sink);
    const result = await run(h.agent, h.request);
    expect(result).toMatchObject({ stopReason: 'final_answer', eventDeliveryFailures: 1 });
    expect('traceparent' in (await startedRecord(h.store))).toBe(false);
    expect(sink.asked).toEqual(['run-1']);
  });

  it('is never asked on a resume, which carries the first driver’s trace context in its run_started event', async () => {
    const store = await crashed(
      2,
      tracingSink(() => TP),
    );
    const sink = tracingSink(() => '00-11111111111111111111111111111111-2222222222222222-01');
    const h = withSink(harness({ script: SCRIPT, store }), sink);
    const result = await resume(h.agent, h.request);
    expect(sink.asked).toEqual([]);
    expect(result.eventDeliveryFailures).toBe(0);
    expect((await startedRecord(store)).traceparent).toBe(TP);
    expect(sink.events[0]).toEqual({
      type: 'run_started',
      runId: 'run-1',
      resumed: true,
      fromStep: 0,
      resolution: 'reissue_model',
      traceparent: TP,
    });
  });
});

describe('the run_started event of a resumed run', () => {
  it('carries resolution null at a boundary, and no traceparent when the first driver had none', async () => {
    const store = await crashed(4, collectingSink());
    const h = harness({ script: SCRIPT, store });
    await resume(h.agent, h.request);
    expect(h.sink.events[0]).toEqual({
      type: 'run_started',
      runId: 'run-1',
      resumed: true,
      fromStep: 1,
      resolution: null,
    });
  });

  it('carries the resolution the driver’s mark holds', async () => {
    const store = await crashed(3, collectingSink());
    const h = harness({ script: SCRIPT, store });
    await resume(h.agent, h.request);
    const [mark] = readRunLog(await store.readLog('run-1')).resumes;
    expect(h.sink.events[0]).toMatchObject({ resumed: true, fromStep: 0, resolution: 'replay_action' });
    expect(mark?.resolution).toBe('replay_action');
  });
});

describe('model call events', () => {
  it('give a withMessages sink a frozen copy of the messages of each call, and other sinks none', async () => {
    const sink = { ...collectingSink(), withMessages: true };
    const h = withSink(harness({ script: SCRIPT }), sink);
    await run(h.agent, h.request);
    const started = sink.events.filter((e) => e.type === 'model_call_started');
    expect(started).toHaveLength(2);
    for (const [i, e] of started.entries()) {
      expect(Object.isFrozen(e.messages)).toBe(true);
      expect(e.messages).toEqual(h.model.calls[i]?.messages);
      expect(e).toMatchObject({ replayPolicy: 'safe', model: 'scripted' });
    }
    const other = harness({ script: SCRIPT });
    await run(other.agent, other.request);
    const plain = other.sink.events.filter((e) => e.type === 'model_call_started');
    expect(plain.map((e) => 'messages' in e)).toEqual([false, false]);
  });

  it('carry usage and the finish reason in model_call_finished when the model reported them, else neither', async () => {
    const reported: ModelReply = {
      callId: 'c0',
      text: SCRIPT[0] as string,
      reasoning: null,
      usage: { inputTokens: 12, outputTokens: 3 },
      finishReason: 'stop',
    };
    const h = harness({ script: [reported, SCRIPT[1] as string] });
    await run(h.agent, h.request);
    const finished = h.sink.events.filter((e) => e.type === 'model_call_finished');
    expect(finished[0]).toMatchObject({ usage: { inputTokens: 12, outputTokens: 3 }, finishReason: 'stop' });
    expect('usage' in (finished[1] as object) || 'finishReason' in (finished[1] as object)).toBe(false);
  });
});
