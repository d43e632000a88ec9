/** Sub-agents as durable child runs: the child's approval reaches the person through its parent. */
import { describe, expect, it } from 'vitest';
import { readRunLog, resume, run } from '../../../src/core/index.ts';
import { family } from './family.ts';

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
