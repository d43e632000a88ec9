/** forkRun: a new run from a step of another, nothing before the fork point run again, the source only read. */
import { describe, expect, it } from 'vitest';
import {
  exportRun,
  forkRun,
  InMemoryStore,
  InvalidRequestError,
  readRunLog,
  resume,
  run,
  RunExistsError,
  RunNotFoundError,
} from '../../../src/core/index.ts';
import { harness, makeTools, STANDARD_SCRIPT } from './fixtures.ts';

describe('forkRun', () => {
  it('forks a finished run at every step: the fork asks the model again there and runs nothing before it', async () => {
    const calls: string[] = [];
    const h = harness({ calls });
    const source = await run(h.agent, h.request);
    expect(source.stopReason).toBe('final_answer');
    const bytes = await exportRun(h.store, 'run-1');
    for (let at = 0; at < source.steps; at++) {
      const forkCalls: string[] = [];
      const newRunId = `fork-${at}`;
      await forkRun(h.store, 'run-1', { atStep: at, newRunId });
      const view = readRunLog(await h.store.readLog(newRunId));
      expect(view.started?.forkedFrom).toEqual({ runId: 'run-1', atStep: at });
      expect(view.trajectory).toEqual(source.trajectory.slice(0, at));
      const f = harness({ calls: forkCalls, store: h.store, runId: newRunId, script: STANDARD_SCRIPT });
      const forked = await resume(f.agent, { ...f.request, runId: newRunId });
      expect(forked.stopReason).toBe('final_answer');
      expect(f.model.calls[0]?.callSeq).toBe(at);
      // Only the tools of the steps from the fork point on ran in the fork.
      const ranAfter =
        calls.length - source.trajectory.slice(0, at).filter((s) => s.actionStatus === 'executed').length;
      expect([at, forkCalls]).toEqual([at, calls.slice(calls.length - ranAfter)]);
    }
    expect(await exportRun(h.store, 'run-1')).toBe(bytes);
  });

  it('forks at a pending approval into another store: approve in one, deny in the other', async () => {
    const calls: string[] = [];
    const tools = makeTools(calls).map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
    const script = ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'];
    const h = harness({ tools, script, calls });
    const paused = await run(h.agent, h.request);
    expect(paused.pending?.resultId).toBe('s0.input');
    const elsewhere = new InMemoryStore();
    await forkRun(h.store, 'run-1', { atStep: 0, newRunId: 'run-1', into: elsewhere });
    const fork = harness({ tools, script, store: elsewhere, calls });
    const denied = await resume(fork.agent, h.request, { input: { kind: 'deny', resultId: 's0.input', reason: 'no' } });
    expect(denied.stopReason).toBe('final_answer');
    expect(denied.trajectory[0]?.actionStatus).toBe('denied');
    expect(calls).toEqual([]);
    const approved = await resume(h.agent, h.request, { input: { kind: 'approve', resultId: 's0.input' } });
    expect(approved.stopReason).toBe('final_answer');
    expect(calls).toEqual(['note:x']);
  });

  it('refuses a step past the last, a step in flight, an existing id and an unknown source, writing nothing', async () => {
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'] });
    await run(h.agent, h.request);
    await expect(forkRun(h.store, 'run-1', { atStep: 2, newRunId: 'f' })).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(forkRun(h.store, 'run-1', { atStep: -1, newRunId: 'f' })).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(forkRun(h.store, 'run-1', { atStep: 0, newRunId: 'run-1' })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    await forkRun(h.store, 'run-1', { atStep: 1, newRunId: 'f' });
    await expect(forkRun(h.store, 'run-1', { atStep: 0, newRunId: 'f' })).rejects.toBeInstanceOf(RunExistsError);
    await expect(forkRun(h.store, 'nope', { atStep: 0, newRunId: 'g' })).rejects.toBeInstanceOf(RunNotFoundError);
    await expect(forkRun(h.store, 'run-1', { atStep: 0, newRunId: 'g', atstep: 1 } as never)).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    expect(await h.store.readLog('g')).toEqual([]);
  });
});
