/**
 * The marks half of the crash law (`crashAtEveryWrite`): each driver that carries a run on leaves
 * one `resumed` record where it took over, one that carries nothing on leaves none, and the law
 * crashes at the mark's own write too. It fails a driver (here: a store standing in for one) that
 * writes a mark twice, at the wrong step, with the wrong resolution, or not at all.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, resume, run } from '../../../src/core/index.ts';
import type { InputRequest, ResumedRecord, RunStore } from '../../../src/core/index.ts';
import { crashAtEveryWrite, faultyStore } from '../../../src/testing/index.ts';
import { CHILD_RUN, subAgentsLaw } from '../../contract/sub-agents-law.ts';
import { harness, makeTools } from '../core/fixtures.ts';

const SCRIPT = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];
const tools = () => makeTools().map((t) => (t.name === 'add' ? { ...t, needsApproval: true } : t));
const setup = (store: RunStore) => {
  const { agent, request } = harness({ script: SCRIPT, store, tools: tools() });
  return { agent, request };
};
const reply = (p: InputRequest) => ({ kind: 'approve', resultId: p.resultId }) as const;

/** What a driver standing in for the real one writes instead of the mark it was given. */
type Change = (rec: ResumedRecord) => readonly ResumedRecord[];

/** An InMemoryStore whose `resumed` writes `change(rec)` instead (each record it returns, in order). */
function markingStore(change: Change): () => RunStore {
  return () => {
    const store = new InMemoryStore();
    return Object.assign(store, {
      async resumed(runId: string, rec: ResumedRecord): Promise<void> {
        for (const r of change(rec)) await InMemoryStore.prototype.resumed.call(store, runId, r);
      },
    });
  };
}

describe('the crash law checks where each driver took the run over', () => {
  it('holds for a run a person approves, crashed at every write, the mark’s own write among them', async () => {
    const counting = faultyStore(new InMemoryStore(), { crashAfterWrites: Number.POSITIVE_INFINITY });
    const { agent, request } = setup(counting);
    const paused = await run(agent, request);
    await resume(agent, request, { input: reply(paused.pending as InputRequest) });
    const methods = counting.writes.map((w) => w.method);
    expect(methods.filter((m) => m === 'resumed')).toHaveLength(1);
    const report = await crashAtEveryWrite({ setup, reply });
    expect(report.failures).toEqual([]);
    expect(report.writes).toBe(methods.length);
    // Crashed at the mark, lost and landed: the next driver resumes and marks again.
    const atMark = methods.indexOf('resumed');
    expect(report.cases.filter((c) => c.crashAfterWrites === atMark)).toHaveLength(2);
  });

  it('holds over a store without resumed, whose resumed runs carry no marks', async () => {
    const without = () => Object.assign(new InMemoryStore(), { resumed: undefined });
    expect((await crashAtEveryWrite({ setup, reply, store: without })).failures).toEqual([]);
  });

  const drivers: [string, Change, RegExp][] = [
    ['writes its mark twice', (r) => [r, r], /wrote 2 resumed records, not one/],
    [
      'marks the wrong resolution',
      (r) => [{ ...r, resolution: r.resolution === null ? 'settle' : null }],
      // The reader refuses the mark itself: its resolution is not its log's.
      /marked step \d+, \w+, not step \d+, \w+|a resumed mark says \w+, its log \w+/,
    ],
    ['marks no step at all', () => [], /wrote input before its resumed record/],
    [
      'marks a step past the one it carries on',
      (r) => [{ ...r, stepIndex: r.stepIndex + 1 }],
      /resumed for step 1 while step 0 is next/,
    ],
  ];
  it.each(drivers)('fails a driver that %s', async (_what, change, failure) => {
    // A mark the log cannot hold fails the uninterrupted run already: the law rejects.
    const failures = await crashAtEveryWrite({ setup, reply, store: markingStore(change) }).then(
      (report) => report.failures.join('\n'),
      (e: unknown) => String(e),
    );
    expect(failures).toMatch(failure);
  });

  it("fails a sub-agent's driver whose mark in the child run says the wrong resolution", async () => {
    const wrong = (r: ResumedRecord): ResumedRecord => ({ ...r, resolution: r.resolution === null ? 'settle' : null });
    const newStore = (): RunStore => {
      const store = new InMemoryStore();
      return Object.assign(store, {
        resumed(runId: string, rec: ResumedRecord): Promise<void> {
          return InMemoryStore.prototype.resumed.call(store, runId, runId === CHILD_RUN ? wrong(rec) : rec);
        },
      });
    };
    // Either the law reports the mark, or the reader refuses it (its resolution is not its log's) and the law rejects.
    const failures = await subAgentsLaw({ scenario: 'approval', newStore }).then(
      ({ report }) => report.failures.join('\n'),
      (e: unknown) => String(e),
    );
    expect(failures).toMatch(
      /the child run sub-law\.s0\.action's record \d+ marks step 0, \w+, not step 0, \w+$|a resumed mark says \w+, its log \w+/m,
    );
  });
});
