/**
 * The crash law of edited approvals over DurableObjectStore in workerd
 * (test/contract/edit-approval-law.ts, docs/design/laws.md#edited-approvals-across-crashes): a
 * fresh object per case, crashed after every write (lost, and landed) and resumed with the same
 * replies. The step with several calls only: an object per case is slow, and the one-call step's
 * records are the same kinds (InMemoryStore, FileStore and Postgres run both).
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { editApprovalLaw, editApprovalLawProblems } from '../contract/edit-approval-law.ts';
import { storeIn } from './store-in-object.ts';

describe('the crash law of edited approvals over DurableObjectStore (workerd, a fresh object per case)', () => {
  it('ends every case of a step with several calls, one payment edited, as the uninterrupted run: each never call once, with the person’s arguments; the model always sees the proposal and the sentence', async () => {
    const result = await editApprovalLaw({
      scenario: 'several-calls',
      newStore: () => storeIn(env.RUNS.get(env.RUNS.newUniqueId())),
    });
    expect(editApprovalLawProblems(result)).toEqual([]);
  }, 120_000);
});
