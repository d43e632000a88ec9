/**
 * The crash law of edited approvals over InMemoryStore (test/contract/edit-approval-law.ts): a
 * note alone in its step and one payment of a step with several calls approved with other
 * arguments, crashed at every write (lost, and landed) and resumed with the same replies. And the
 * law's checks can fail.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../../../src/core/index.ts';
import { editApprovalLaw, editApprovalLawProblems, editReply } from '../../contract/edit-approval-law.ts';

describe('the crash law of edited approvals over InMemoryStore', () => {
  it('ends every case as the uninterrupted run: each never call once, with the person’s arguments; the model always sees the proposal and the sentence', async () => {
    const result = await editApprovalLaw({ newStore: () => new InMemoryStore() });
    expect(editApprovalLawProblems(result)).toEqual([]);
  });

  it('the checks can fail: a person who approves as proposed every other time runs a proposal', async () => {
    let asked = 0;
    const result = await editApprovalLaw({
      scenario: 'one-call',
      newStore: () => new InMemoryStore(),
      reply: (world) => (p) => {
        const reply = editReply(world)(p);
        return reply.kind === 'approve' && reply.arguments !== undefined && asked++ % 2 === 1
          ? { kind: 'approve', resultId: p.resultId }
          : reply;
      },
    });
    expect(editApprovalLawProblems(result).some((p) => /the proposal note:draft ran/.test(p))).toBe(true);
  });

  it('the checks can fail: a person who settles every call in doubt with retry runs an edited never call twice', async () => {
    const result = await editApprovalLaw({
      scenario: 'one-call',
      newStore: () => new InMemoryStore(),
      reply: (world) => (p) => (p.kind === 'settle' ? { kind: 'retry', resultId: p.resultId } : editReply(world)(p)),
    });
    const problems = editApprovalLawProblems(result);
    expect(problems.some((p) => /note:final happened 2 times/.test(p))).toBe(true);
  });
});
