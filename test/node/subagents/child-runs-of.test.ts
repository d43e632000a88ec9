/** childRunsOf: the sub-agent runs a parent's log names, finished or awaiting a person. */
import { describe, expect, it } from 'vitest';
import { childRunsOf, readRunLog, resume, run } from '../../../src/core/index.ts';
import type { InputRequest, RunLogView, StepRecord } from '../../../src/core/index.ts';
import { family } from './family.ts';

describe('childRunsOf', () => {
  it('names the child a parent waits on as awaiting input, then as finished once the parent recorded it', async () => {
    const f = family();
    await run(f.parent, { runId: 'p1', goal: 'find it' });
    const waiting = readRunLog(await f.store.readLog('p1'));
    expect(childRunsOf(waiting)).toEqual([
      { runId: 'p1.s0.action', stepIndex: 0, resultId: 's0.action', state: 'awaiting_input' },
    ]);
    await resume(f.parent, 'p1', { input: { kind: 'approve', resultId: 's0.c0' } });
    const done = readRunLog(await f.store.readLog('p1'));
    expect(childRunsOf(done)).toEqual([
      { runId: 'p1.s0.action', stepIndex: 0, resultId: 's0.action', state: 'finished' },
    ]);
  });

  it('names no child of a run that ran none, nor of a child run itself', async () => {
    const f = family({ noteNeedsApproval: false });
    await run(f.parent, { runId: 'p2', goal: 'find it' });
    expect(childRunsOf(readRunLog(await f.store.readLog('p2.s0.action')))).toEqual([]);
    expect(childRunsOf(readRunLog([]))).toEqual([]);
  });

  it('names each call of a step with several that ran a child, and a call whose child waits', () => {
    const step = {
      stepIndex: 2,
      calls: [{ resultId: 's2.a0', childRunId: 'p.s2.a0' }, { resultId: 's2.a1' }],
    } as unknown as StepRecord;
    const waiting = {
      resultId: 's3.a1.c2',
      stepIndex: 3,
      kind: 'child',
      target: 'action',
      decision: null,
      child: { runId: 'p.s3.a1', request: { resultId: 's0.input', stepIndex: 0, kind: 'approval' } },
    } as unknown as InputRequest;
    const approval = { resultId: 's3.a0.input', stepIndex: 3, kind: 'approval' } as unknown as InputRequest;
    const view = { runId: 'p', trajectory: [step], openRequests: [approval, waiting] } as unknown as RunLogView;
    expect(childRunsOf(view)).toEqual([
      { runId: 'p.s2.a0', stepIndex: 2, resultId: 's2.a0', state: 'finished' },
      { runId: 'p.s3.a1', stepIndex: 3, resultId: 's3.a1', state: 'awaiting_input' },
    ]);
  });
});
