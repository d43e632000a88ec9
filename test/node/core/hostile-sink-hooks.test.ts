/**
 * A sink's tracing hooks are the sink's affair (docs/api.md, events): a hook that is a getter
 * that throws, an answer that is no trace context (huge, with a newline, a promise), a `settled`
 * that throws or rejects, a sink that changes the messages it is given or keeps its events — none
 * of them changes the run, its log or what its model is given; each failure is counted.
 */
import { describe, expect, it } from 'vitest';
import { run } from '../../../src/core/index.ts';
import type { EventSink, Message, RunEvent, RunStartedRecord } from '../../../src/core/index.ts';
import { collectingSink } from '../../../src/testing/index.ts';
import { harness } from './fixtures.ts';
import type { Harness } from './fixtures.ts';

const SCRIPT = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const withSink = (h: Harness, events: EventSink): Harness => ({ ...h, agent: { ...h.agent, events } });

/** A collecting sink with `hooks` defined on it as they are given (getters included). */
function sinkWith(hooks: PropertyDescriptorMap): EventSink & { events: RunEvent[] } {
  const sink = collectingSink();
  return Object.defineProperties({ ...sink }, hooks) as EventSink & { events: RunEvent[] };
}

const boom = (): never => {
  throw new Error('hook getter');
};

async function runTraced(sink: EventSink): Promise<{ failures: number; record: RunStartedRecord; h: Harness }> {
  const h = withSink(harness({ script: SCRIPT }), sink);
  const result = await run(h.agent, h.request);
  expect(result.stopReason).toBe('final_answer');
  const record = (await h.store.readLog('run-1'))[0] as RunStartedRecord;
  return { failures: result.eventDeliveryFailures, record, h };
}

describe('a hostile traceparent hook', () => {
  it('that is a getter that throws counts one failed delivery and the run goes on untraced', async () => {
    const { failures, record } = await runTraced(sinkWith({ traceparent: { get: boom } }));
    expect(failures).toBe(1);
    expect('traceparent' in record).toBe(false);
  });

  it.each([
    ['a 10 MB string', () => `${TP}${'0'.repeat(10_000_000)}`],
    ['a trace context and a newline', () => `${TP}\n`],
    ['a promise of a trace context', () => Promise.resolve(TP)],
    ['a trace context whose version is ff', () => `ff${TP.slice(2)}`],
  ])('that answers %s counts one failed delivery and keeps none', async (_name, answer) => {
    const { failures, record } = await runTraced(sinkWith({ traceparent: { value: answer } }));
    expect(failures).toBe(1);
    expect('traceparent' in record).toBe(false);
  });
});

describe('a hostile withMessages flag', () => {
  it('that is a getter that throws leaves the sink without messages and the run unchanged', async () => {
    const sink = sinkWith({ withMessages: { get: boom } });
    const { failures } = await runTraced(sink);
    expect(failures).toBe(0);
    const started = sink.events.filter((e) => e.type === 'model_call_started');
    expect(started.map((e) => 'messages' in e)).toEqual([false, false]);
  });
});

describe('a hostile settled hook', () => {
  it('that is a getter that throws does not turn the finished run into a rejection', async () => {
    const { failures } = await runTraced(sinkWith({ settled: { get: boom } }));
    expect(failures).toBe(0);
  });

  it('that returns a rejected promise leaves no unhandled rejection behind', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const settled = (): Promise<never> => Promise.reject(new Error('settled rejects'));
      await runTraced(sinkWith({ settled: { value: settled } }));
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});

describe('a sink given the messages', () => {
  it('cannot change the history the model is given next, however it tries', async () => {
    const kept: (readonly Message[])[] = [];
    const deliver = (e: RunEvent): void => {
      if (e.type !== 'model_call_started' || !e.messages) return;
      kept.push(e.messages);
      const messages = e.messages as Message[];
      Reflect.apply(Array.prototype.push, messages, [{ role: 'user', content: [{ type: 'text', text: 'x' }] }]);
    };
    const tamper = (e: RunEvent): void => {
      try {
        deliver(e);
      } catch {}
      if (e.type !== 'model_call_started' || !e.messages) return;
      for (const m of e.messages) {
        Reflect.set(m, 'role', 'system');
        Reflect.set(m.content, 0, { type: 'text', text: 'tampered' });
        for (const b of m.content) Reflect.set(b, 'text', 'tampered');
      }
    };
    const sink = { ...collectingSink(), withMessages: true, deliver: tamper };
    const h = withSink(harness({ script: SCRIPT }), sink);
    const clean = harness({ script: SCRIPT });
    await run(h.agent, h.request);
    await run(clean.agent, clean.request);
    expect(h.model.calls.map((c) => c.messages)).toEqual(clean.model.calls.map((c) => c.messages));
    expect(JSON.stringify(kept)).not.toContain('tampered');
  });

  it('that keeps its events reads the messages of each call as they were, after the run went on', async () => {
    const sink = { ...collectingSink(), withMessages: true };
    const h = withSink(harness({ script: SCRIPT }), sink);
    await run(h.agent, h.request);
    const started = sink.events.filter((e) => e.type === 'model_call_started');
    expect(started.map((e) => e.messages?.length)).toEqual(h.model.calls.map((c) => c.messages.length));
    expect(started[0]?.messages?.length).toBeLessThan(started[1]?.messages?.length ?? 0);
  });
});

describe('a sink that changes what its events hold', () => {
  it("cannot change an action's arguments, a step's record or what the model is given next", async () => {
    const calls: string[] = [];
    const tamper = (e: RunEvent): void => {
      const set = (o: unknown, k: string, v: unknown): void => {
        if (typeof o === 'object' && o !== null) Reflect.set(o, k, v);
      };
      if (e.type === 'action_started' && e.action.kind === 'tool_call') set(e.action.arguments, 'a', 1000);
      if (e.type === 'decision') set(e, 'summary', 'tampered');
      if (e.type === 'step_finished') {
        set(e.step, 'modelText', 'tampered');
        set(e.step, 'observation', 'tampered');
        set(e.step, 'actionRepr', 'tampered');
        set(e.step.usage, 'inputTokens', 1_000_000);
      }
    };
    const sink = { ...collectingSink(), deliver: tamper };
    const h = withSink(harness({ script: SCRIPT, calls }), sink);
    const clean = harness({ script: SCRIPT });
    await run(h.agent, h.request);
    await run(clean.agent, clean.request);
    expect(calls).toEqual(['add:{"a":1,"b":2}']);
    expect(h.model.calls.map((c) => c.messages)).toEqual(clean.model.calls.map((c) => c.messages));
    expect(JSON.stringify(await h.store.readLog('run-1'))).not.toContain('tampered');
  });
});
