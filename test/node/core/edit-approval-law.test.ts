/**
 * The crash law of edited approvals over InMemoryStore (test/contract/edit-approval-law.ts): a
 * note and one payment of a step with several calls approved with other arguments, crashed at every
 * write (lost, and landed) and resumed with the same replies. And the law's checks can fail.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../../../src/core/index.ts';
import { editApprovalLaw, editApprovalLawProblems, editReply } from '../../contract/edit-approval-law.ts';

describe('the crash law of edited approvals over InMemoryStore', () => {
  it('ends every case as the uninterrupted run: each never call once, with the person’s arguments; the model always sees the proposal and the sentence', async () => {
    const result = await editApprovalLaw({ newStore: () => new InMemoryStore() });
    expect(editApprovalLawProblems(result)).toEqual([]);
    // Not vacuous: some crashes left an edited never call in flight, and a person settled it.
    expect(result.report.cases.length).toBeGreaterThan(40);
  });

  it('the checks can fail: a person who forgets the edit after a crash runs the proposal', async () => {
    let asked = 0;
    const result = await editApprovalLaw({
      newStore: () => new InMemoryStore(),
      // The first approval of every story carries the edit; a repeated one (after a crash) does not.
      reply: (world) => (p) => {
        const reply = editReply(world)(p);
        return reply.kind === 'approve' && 'arguments' in reply && asked++ % 2 === 1
          ? { kind: 'approve', resultId: p.resultId }
          : reply;
      },
    });
    expect(editApprovalLawProblems(result).some((p) => /the proposal (note:draft|pay:900:acme) ran/.test(p))).toBe(
      true,
    );
  });
});
