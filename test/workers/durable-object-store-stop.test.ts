/**
 * DurableObjectStore's stop requests in workerd: a stop is kept in the object's storage, the lease
 * holder's `lost` signal aborts with `StopRequestedError` at once, the next holder's (a new
 * instance after an eviction, too) is aborted already at `acquire`; a stop of a run with no record
 * yet reaches its driver once `run_started` is written; a dropped run's stop goes with it. The
 * sub-agent's RPC store keeps no stops (its parent's signal carries one to it).
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { requestStop, StopRequestedError } from '../../src/core/index.ts';
import { ChildRunStore } from '../../src/platform-workers/child-run-store.ts';
import { DurableObjectStore } from '../../src/platform-workers/durable-object-store.ts';
import { started, writeFullRun } from '../contract/run-store.contract.ts';

const freshObject = (): DurableObjectStub => env.RUNS.get(env.RUNS.newUniqueId());

/** Run `fn` inside `stub` on a new DurableObjectStore over its storage (as a new instance of the object would). */
const inObject = <R>(stub: DurableObjectStub, fn: (store: DurableObjectStore) => R | Promise<R>): Promise<R> =>
  runInDurableObject(stub, (_o, state) => fn(new DurableObjectStore(state.storage)));

/** What the signal aborted with, as plain values (the error's class, run id and stop). */
function abortOf(signal: AbortSignal | undefined): unknown {
  if (signal === undefined) return 'no signal';
  if (!signal.aborted) return 'not aborted';
  const e = signal.reason as StopRequestedError;
  return { isStop: e instanceof StopRequestedError, code: e.code, runId: e.runId, stop: e.stop };
}

describe('DurableObjectStore stop requests (workerd)', () => {
  it("aborts the lease holder's lost signal at once, with the reason, and keeps the stop durable", async () => {
    const stub = freshObject();
    const seen = await inObject(stub, async (store) => {
      await store.runStarted('r1', started('r1'));
      const release = await store.acquire('r1');
      const before = abortOf(release.lost);
      await requestStop(store, 'r1', 'the customer cancelled');
      const after = abortOf(release.lost);
      await release();
      return { before, after };
    });
    expect(seen.before).toBe('not aborted');
    expect(seen.after).toEqual({
      isStop: true,
      code: 'stop_requested',
      runId: 'r1',
      stop: { reason: 'the customer cancelled' },
    });
    // Another instance over the same storage (the object after an eviction): aborted already at acquire.
    const next = await inObject(stub, async (store) => {
      const release = await store.acquire('r1');
      await release();
      return { lost: abortOf(release.lost), kept: store.stopOf('r1') };
    });
    expect(next).toEqual({ lost: seen.after, kept: { reason: 'the customer cancelled' } });
  });

  it('keeps the first stop asked of a run: a second one changes nothing', async () => {
    const stub = freshObject();
    const seen = await inObject(stub, async (store) => {
      await store.runStarted('r2', started('r2'));
      await requestStop(store, 'r2');
      await requestStop(store, 'r2', 'a later reason');
      const release = await store.acquire('r2');
      await release();
      return { kept: store.stopOf('r2'), lost: abortOf(release.lost) };
    });
    expect(seen.kept).toEqual({});
    expect(seen.lost).toMatchObject({ isStop: true, stop: {} });
  });

  it('leaves a run with no stop, and every other run of the object, alone', async () => {
    const stub = freshObject();
    const seen = await inObject(stub, async (store) => {
      await store.runStarted('a', started('a'));
      await store.runStarted('b', started('b'));
      await requestStop(store, 'a', 'only a');
      const release = await store.acquire('b');
      await release();
      return { lost: abortOf(release.lost), a: store.stopOf('a'), b: store.stopOf('b') };
    });
    expect(seen).toEqual({ lost: 'not aborted', a: { reason: 'only a' }, b: null });
  });

  it('reaches the driver of a run whose stop came before its first record once run_started is written', async () => {
    const stub = freshObject();
    const seen = await inObject(stub, async (store) => {
      await store.requestStop('early', { reason: 'before it began' });
      const release = await store.acquire('early');
      const atAcquire = abortOf(release.lost);
      await store.runStarted('early', started('early'));
      const afterStart = abortOf(release.lost);
      await release();
      return { atAcquire, afterStart };
    });
    expect(seen.atAcquire).toBe('not aborted');
    expect(seen.afterStart).toMatchObject({ isStop: true, stop: { reason: 'before it began' } });
  });

  it('does nothing to a run that has ended, and drops the stop of a run discarded with its records', async () => {
    const stub = freshObject();
    const seen = await inObject(stub, async (store) => {
      await writeFullRun(store, 'done');
      await requestStop(store, 'done', 'too late');
      const endedKept = store.stopOf('done');
      await store.runStarted('dropped', started('dropped'));
      await requestStop(store, 'dropped', 'x');
      const beforeDiscard = store.stopOf('dropped');
      store.discard('dropped');
      return { endedKept, beforeDiscard, afterDiscard: store.stopOf('dropped') };
    });
    expect(seen).toEqual({ endedKept: null, beforeDiscard: { reason: 'x' }, afterDiscard: null });
  });

  it("refuses a stop on a sub-agent's RPC store: it keeps none, its parent's signal carries one", async () => {
    const store = new ChildRunStore('parent', undefined);
    expect('requestStop' in store).toBe(false);
    expect('acquire' in store).toBe(false);
    await expect(requestStop(store, 'parent.s0.action', 'x')).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('keeps no stop requests'),
    });
  });
});
