/** A deploy that changes a sub-agent's code: the parent's upgrade carries to its children. */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, readRunLog, resume, run, RunIdentityMismatchError } from '../../../src/core/index.ts';
import { family } from './family.ts';

describe("a deploy that changes the child's agent", () => {
  it('halts the parent until it is resumed with an upgrade, which goes on to the child; the note runs once', async () => {
    const store = new InMemoryStore();
    const v1 = family({ store, childPrompt: 'Be brief.' });
    const first = await run(v1.parent, { runId: 'up1', goal: 'find it' });
    expect(first.pending?.resultId).toBe('s0.c0');
    const v2 = family({ store, childPrompt: 'Be thorough.', notes: v1.notes });
    const input = { kind: 'approve' as const, resultId: 's0.c0' };
    await expect(resume(v2.parent, 'up1', { input })).rejects.toBeInstanceOf(RunIdentityMismatchError);
    expect(v1.notes).toEqual([]);
    const done = await resume(v2.parent, 'up1', { upgrade: { reason: 'deploy 2: the child is thorough' } });
    expect(done.finalAnswer).toBe('parent done');
    expect(v1.notes).toEqual(['found it']);
    const child = await store.readLog('up1.s0.action');
    expect(child.filter((r) => r.kind === 'upgrade').map((r) => r.kind === 'upgrade' && r.reason)).toEqual([
      'deploy 2: the child is thorough',
    ]);
    // The parent's own identity did not change: it holds no upgrade record.
    expect((await store.readLog('up1')).some((r) => r.kind === 'upgrade')).toBe(false);
  });

  it('a child that ended before the deploy gives its answer to the resumed parent without an upgrade', async () => {
    const inner = new InMemoryStore();
    let failParentStep = true;
    // The parent's step write is lost once: the child has ended, the parent's call is in flight.
    const store = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        if (key !== 'step') return value.bind(target);
        return async (runId: string, rec: unknown) => {
          if (runId === 'up2' && failParentStep) {
            failParentStep = false;
            throw new Error('crash');
          }
          return value.call(target, runId, rec);
        };
      },
    });
    const v1 = family({ store, childPrompt: 'Be brief.', noteNeedsApproval: false });
    await expect(run(v1.parent, { runId: 'up2', goal: 'find it' })).rejects.toThrow('crash');
    expect(readRunLog(await inner.readLog('up2.s0.action')).ended?.finalAnswer).toBe('the answer is 42');
    const v2 = family({ store, childPrompt: 'Be thorough.', noteNeedsApproval: false, notes: v1.notes });
    const done = await resume(v2.parent, 'up2');
    expect(done.finalAnswer).toBe('parent done');
    expect(done.trajectory[0]?.observation).toBe('the answer is 42');
    expect(v1.notes).toEqual(['found it']);
  });
});
