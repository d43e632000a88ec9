/**
 * DurableObjectStore remembers the next sequence number of a run it wrote (no `MAX(seq)` query a
 * write): two stores on one storage, a discarded run and a failed write keep the log in order.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/core/index.ts';
import { DurableObjectStore } from '../../src/platform-workers/durable-object-store.ts';
import { started, stepWrite } from '../contract/run-store.contract.ts';

const fresh = (): DurableObjectStub => env.RUNS.get(env.RUNS.newUniqueId());
const stepsOf = (log: readonly LogRecord[]): number[] =>
  log.flatMap((r) => (r.kind === 'step' ? [r.step.stepIndex] : []));

describe('DurableObjectStore sequence numbers', () => {
  it('two stores on one storage appending in turn keep every record, in write order', async () => {
    const steps = await runInDurableObject(fresh(), async (_o, state) => {
      const a = new DurableObjectStore(state.storage);
      const b = new DurableObjectStore(state.storage);
      for (let i = 0; i < 6; i++) await (i % 2 === 0 ? a : b).step('r', stepWrite(i));
      return { a: stepsOf(await a.readLog('r')), seqs: a.readLines('r').map((l) => l.seq) };
    });
    expect(steps).toEqual({ a: [0, 1, 2, 3, 4, 5], seqs: [0, 1, 2, 3, 4, 5] });
  });

  it('a run discarded and written again starts over at sequence 0', async () => {
    const seqs = await runInDurableObject(fresh(), async (_o, state) => {
      const store = new DurableObjectStore(state.storage);
      await store.runStarted('r', started('r'));
      await store.step('r', stepWrite(0));
      store.discard('r');
      await store.runStarted('r', started('r'));
      return store.readLines('r').map((l) => l.seq);
    });
    expect(seqs).toEqual([0]);
  });

  it('a write that fails writes nothing, and the next one takes its sequence number', async () => {
    const seqs = await runInDurableObject(fresh(), async (_o, state) => {
      const store = new DurableObjectStore(state.storage);
      await store.runStarted('r', started('r'));
      const failed = await store.step('r', stepWrite(0, 'x'.repeat(17 * 1024 * 1024))).then(
        () => false,
        () => true,
      );
      await store.step('r', stepWrite(0));
      return { failed, seqs: store.readLines('r').map((l) => l.seq) };
    });
    expect(seqs).toEqual({ failed: true, seqs: [0, 1] });
  });
});
