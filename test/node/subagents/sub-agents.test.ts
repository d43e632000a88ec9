/** Sub-agents as durable child runs: the child's approval reaches the person through its parent. */
import { describe, expect, it } from 'vitest';
import { readRunLog, resume, run } from '../../../src/core/index.ts';
import { family, researchCalls } from './family.ts';

describe('a sub-agent that asks for approval', () => {
  it('pauses its parent on a child request naming the child run and its pending approval', async () => {
    const f = family();
    const result = await run(f.parent, { runId: 'p1', goal: 'find it' });
    expect(result.stopReason).toBe('awaiting_input');
    expect(result.pending?.resultId).toBe('s0.c0');
    expect(result.pending?.kind).toBe('child');
    expect(result.pending?.child?.runId).toBe('p1.s0.action');
    expect(result.pending?.child?.request.kind).toBe('approval');
    expect(result.pending?.child?.request.resultId).toBe('s0.input');
    expect(f.notes).toEqual([]);
    const childView = readRunLog(await f.store.readLog('p1.s0.action'));
    expect(childView.state).toBe('awaiting_input');
  });

  it('carries the reply to the child, whose final answer is the parent step observation', async () => {
    const f = family({ childUsage: { inputTokens: 10, outputTokens: 5 } });
    const first = await run(f.parent, { runId: 'p2', goal: 'find it' });
    const done = await resume(f.parent, 'p2', { input: { kind: 'approve', resultId: first.pending?.resultId ?? '' } });
    expect(done.stopReason).toBe('final_answer');
    expect(f.notes).toEqual(['found it']);
    const step = done.trajectory[0];
    expect(step?.observation).toBe('the answer is 42');
    expect(step?.childRunId).toBe('p2.s0.action');
    expect(step?.usage).toEqual({ inputTokens: 20, outputTokens: 10 });
    const child = readRunLog(await f.store.readLog('p2.s0.action'));
    expect(child.ended?.stopReason).toBe('final_answer');
  });

  it('refuses a reply kind the child request does not accept, naming the child run', async () => {
    const f = family();
    await run(f.parent, { runId: 'p3', goal: 'find it' });
    await expect(resume(f.parent, 'p3', { input: { kind: 'answer', resultId: 's0.c0', text: 'x' } })).rejects.toThrow(
      /approval request \(of sub-agent run "p3.s0.action"\) accepts approve, deny, cancel/,
    );
  });

  it('cancel carried to the child ends both runs cancelled', async () => {
    const f = family();
    await run(f.parent, { runId: 'p4', goal: 'find it' });
    const r = await resume(f.parent, 'p4', { input: { kind: 'cancel', resultId: 's0.c0' } });
    expect(r.stopReason).toBe('cancelled');
    const child = readRunLog(await f.store.readLog('p4.s0.action'));
    expect(child.ended?.stopReason).toBe('cancelled');
    expect(f.notes).toEqual([]);
  });
});

describe('sub-agents in a step with several calls', () => {
  const final = (text: string) => ({ callId: null, text, reasoning: null });

  it('each paused child gets its own request; a reply reaches only its child; the step ends when both have', async () => {
    const f = family({
      native: { replies: [researchCalls('one?', 'two?'), final('both done')], parallelToolCalls: 2 },
      childUsage: { inputTokens: 1, outputTokens: 1 },
    });
    const first = await run(f.parent, { runId: 'm1', goal: 'find both' });
    expect(first.stopReason).toBe('awaiting_input');
    const view = readRunLog(await f.store.readLog('m1'));
    expect(view.openRequests.map((r) => [r.resultId, r.child?.runId])).toEqual([
      ['s0.a0.c0', 'm1.s0.a0'],
      ['s0.a1.c0', 'm1.s0.a1'],
    ]);
    const second = await resume(f.parent, 'm1', { input: { kind: 'approve', resultId: 's0.a1.c0' } });
    expect(second.stopReason).toBe('awaiting_input');
    expect(second.pending?.resultId).toBe('s0.a0.c0');
    expect(f.notes).toEqual(['found it']);
    expect(readRunLog(await f.store.readLog('m1.s0.a1')).ended?.stopReason).toBe('final_answer');
    const done = await resume(f.parent, 'm1', { input: { kind: 'approve', resultId: 's0.a0.c0' } });
    expect(done.stopReason).toBe('final_answer');
    expect(f.notes).toEqual(['found it', 'found it']);
    const step = done.trajectory[0];
    expect(step?.calls?.map((c) => [c.observation, c.childRunId])).toEqual([
      ['the answer is 42', 'm1.s0.a0'],
      ['the answer is 42', 'm1.s0.a1'],
    ]);
    // Two model calls of each child (1 + 1 tokens each way), and none reported by the parent's own call.
    expect(step?.usage).toEqual({ inputTokens: 4, outputTokens: 4 });
  });

  it('a cancel from one child request ends every child of the step and the parent', async () => {
    const f = family({ native: { replies: [researchCalls('one?', 'two?'), final('x')], parallelToolCalls: 2 } });
    await run(f.parent, { runId: 'm2', goal: 'find both' });
    const r = await resume(f.parent, 'm2', { input: { kind: 'cancel', resultId: 's0.a0.c0' } });
    expect(r.stopReason).toBe('cancelled');
    for (const id of ['m2.s0.a0', 'm2.s0.a1'])
      expect(readRunLog(await f.store.readLog(id)).ended?.stopReason).toBe('cancelled');
    expect(f.notes).toEqual([]);
  });
});
