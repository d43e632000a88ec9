/**
 * Abort wins within cancelGraceMs whatever a model call, tool handler, event sink or store does,
 * and nothing is written after a failed write, even when the signal aborted.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { EventSink, ModelCall, ModelCaller, RunEvent, RunStore } from '../../../src/core/index.ts';
import { harness, makeTools } from './fixtures.ts';

/** A promise that never settles unless told to, and ignores every signal. */
function stuck<T>(): { promise: Promise<T>; settle: (v: T) => void } {
  let settle!: (v: T) => void;
  const promise = new Promise<T>((resolve) => (settle = resolve));
  return { promise, settle };
}

describe('abort wins within cancelGraceMs whatever a seam does', () => {
  it('a model call that never settles and ignores the signal: run rejects, the log ends cancelled, a late reply changes nothing', async () => {
    const h = harness();
    const hang = stuck<unknown>();
    let sawCall!: () => void;
    const called = new Promise<void>((r) => (sawCall = r));
    const model: ModelCaller = {
      params: { model: 'deaf' },
      call: (c: ModelCall) => (
        sawCall(),
        setTimeout(() => (c.onDelta?.('late delta'), c.onDelta?.('late thought', 'reasoning')), 30),
        hang.promise as never
      ),
    };
    const agent = defineAgent({ ...h.agent, model });
    const ctl = new AbortController();
    const pending = run(agent, { ...h.request, cancelGraceMs: 50 }, { signal: ctl.signal });
    await called;
    const reason = new Error('user stop');
    ctl.abort(reason);
    await expect(pending).rejects.toBe(reason);
    const log = await h.store.readLog('run-1');
    expect(log.at(-1)).toMatchObject({ kind: 'run_ended', stopReason: 'cancelled' });
    const eventsBefore = h.sink.events.length;
    hang.settle({ callId: null, text: '{"tool":"note","args":{"text":"late"}}', reasoning: null });
    await new Promise((r) => setTimeout(r, 60));
    expect(await h.store.readLog('run-1')).toHaveLength(log.length);
    expect(h.sink.events).toHaveLength(eventsBefore);
    expect(h.sink.events.at(-1)?.type).toBe('run_ended');
    expect(h.calls).toEqual([]);
  });

  it('a tool handler that never settles and ignores the signal: run rejects, the log ends cancelled, a late return changes nothing', async () => {
    const hang = stuck<string>();
    let sawCall!: () => void;
    const called = new Promise<void>((r) => (sawCall = r));
    const tools = [
      ...makeTools(),
      {
        name: 'wait',
        description: 'Waits forever.',
        parameters: { type: 'object' },
        handler: () => (sawCall(), hang.promise),
      },
    ];
    const h = harness({ tools, script: ['{"tool":"wait","args":{}}', '{"final":"x"}'] });
    const ctl = new AbortController();
    const pending = run(h.agent, { ...h.request, cancelGraceMs: 50 }, { signal: ctl.signal });
    await called;
    ctl.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    const log = await h.store.readLog('run-1');
    expect(log.at(-1)).toMatchObject({ kind: 'run_ended', stopReason: 'cancelled' });
    expect(log.filter((r) => r.kind === 'step')).toHaveLength(0);
    const eventsBefore = h.sink.events.length;
    hang.settle('finally done');
    await new Promise((r) => setTimeout(r, 20));
    expect(await h.store.readLog('run-1')).toHaveLength(log.length);
    expect(h.sink.events).toHaveLength(eventsBefore);
  });

  it('an event sink that never settles and ignores the signal: run rejects and the log still ends cancelled', async () => {
    const h = harness();
    let sawStep!: () => void;
    const inStep = new Promise<void>((r) => (sawStep = r));
    const events: EventSink = {
      params: {},
      deliver: (e: RunEvent) =>
        e.type === 'step_started' ? (sawStep(), new Promise<void>(() => undefined)) : undefined,
    };
    const agent = defineAgent({ ...h.agent, events });
    const ctl = new AbortController();
    const pending = run(agent, { ...h.request, cancelGraceMs: 50 }, { signal: ctl.signal });
    await inStep;
    ctl.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect((await h.store.readLog('run-1')).at(-1)).toMatchObject({ kind: 'run_ended', stopReason: 'cancelled' });
  });

  it('a run_ended write that outlasts the grace period: run rejects on time, and the lease is released only after that write settled', async () => {
    const inner = new InMemoryStore();
    const order: string[] = [];
    const slowEnd = stuck<void>();
    const store: RunStore = {
      runStarted: (id, r) => inner.runStarted(id, r),
      intent: (id, r) => inner.intent(id, r),
      result: (id, rid, r) => inner.result(id, rid, r),
      step: (id, r) => inner.step(id, r),
      readLog: (id) => inner.readLog(id),
      runEnded: (id, r) => slowEnd.promise.then(() => (order.push('run_ended landed'), inner.runEnded(id, r))),
      acquire: async () => async () => void order.push('released'),
    };
    const h = harness({ store });
    const hang = stuck<never>();
    let sawCall!: () => void;
    const called = new Promise<void>((r) => (sawCall = r));
    const agent = defineAgent({
      ...h.agent,
      model: { params: { model: 'deaf' }, call: () => (sawCall(), hang.promise) },
    });
    const ctl = new AbortController();
    const pending = run(agent, { ...h.request, cancelGraceMs: 20 }, { signal: ctl.signal });
    await called;
    ctl.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect(order).toEqual([]);
    slowEnd.settle();
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual(['run_ended landed', 'released']);
  });
});

describe('nothing is written after a failed write, even when the signal aborted', () => {
  it.each(['runStarted', 'intent', 'result', 'step'] as const)(
    'a %s write that fails while aborting leaves no run_ended behind it',
    async (method) => {
      const inner = new InMemoryStore();
      const ctl = new AbortController();
      const store: RunStore = {
        runStarted: (id, r) => inner.runStarted(id, r),
        intent: (id, r) => inner.intent(id, r),
        result: (id, rid, r) => inner.result(id, rid, r),
        step: (id, r) => inner.step(id, r),
        readLog: (id) => inner.readLog(id),
        runEnded: (id, r) => inner.runEnded(id, r),
        [method]: async () => {
          ctl.abort(new Error('stop'));
          throw new Error('disk gone');
        },
      };
      const h = harness({ store });
      await expect(run(h.agent, h.request, { signal: ctl.signal })).rejects.toThrow('stop');
      const log = await inner.readLog('run-1');
      expect(log.some((r) => r.kind === 'run_ended')).toBe(false);
      if (method === 'runStarted') expect(log).toEqual([]);
    },
  );
});
