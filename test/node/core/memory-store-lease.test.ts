/**
 * InMemoryStore's in-process lease: two drivers of one run id in one process are excluded like two
 * processes on a FileStore, so a test of a second driver means the same on either.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, isPolyLoopError, resume, run } from '../../../src/core/index.ts';
import { sleep } from '../../../src/testing/scripted-model.ts';
import { harness } from './fixtures.ts';

const NOTE_THEN_FINAL = ['{"tool":"note","args":{"text":"once"}}', '{"final":"done"}'];

describe('InMemoryStore lease', () => {
  it('lets only one of two concurrent runs on one id proceed: the never tool runs once, the log has one run_started', async () => {
    const store = new InMemoryStore();
    const calls: string[] = [];
    // A slow model keeps the first driver inside its run while the second one starts.
    const slow = (call: { callSeq: number }) => sleep(20).then(() => NOTE_THEN_FINAL[call.callSeq] as string);
    const a = harness({ store, calls, script: slow });
    const b = harness({ store, calls, script: slow });
    const outcomes = await Promise.allSettled([run(a.agent, a.request), run(b.agent, b.request)]);
    const fulfilled = outcomes.filter((o) => o.status === 'fulfilled');
    const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(isPolyLoopError(rejected[0]?.reason, 'run_locked')).toBe(true);
    expect(calls).toEqual(['note:once']);
    const log = await store.readLog('run-1');
    expect(log.filter((r) => r.kind === 'run_started')).toHaveLength(1);
    expect(log.at(-1)?.kind).toBe('run_ended');
  });

  it('refuses a resume while a run on the same id is being driven, and frees the id when the run ends', async () => {
    const store = new InMemoryStore();
    const a = harness({ store, script: (call) => sleep(20).then(() => NOTE_THEN_FINAL[call.callSeq] as string) });
    const first = run(a.agent, a.request);
    await sleep(5);
    const b = harness({ store, script: NOTE_THEN_FINAL });
    const second = await resume(b.agent, b.request).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(second, 'run_locked')).toBe(true);
    const done = await first;
    expect(done.stopReason).toBe('final_answer');
    expect((await resume(b.agent, b.request)).stopReason).toBe('final_answer');
  });

  it('has an idempotent release that never frees a lease taken after it', async () => {
    const store = new InMemoryStore();
    const release = await store.acquire('r', {});
    await release();
    const next = await store.acquire('r', {});
    await release(); // a second call of the old release must not free the new holder
    expect(
      isPolyLoopError(
        await store.acquire('r', {}).then(
          () => null,
          (e: unknown) => e,
        ),
        'run_locked',
      ),
    ).toBe(true);
    await next();
    await (await store.acquire('r', {}))();
  });

  it('rejects with the signal reason when asked for a lease with an aborted signal', async () => {
    const store = new InMemoryStore();
    const reason = new Error('gave up');
    await expect(store.acquire('r', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });
});
