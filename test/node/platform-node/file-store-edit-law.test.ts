/**
 * The crash law of edited approvals over FileStore (test/contract/edit-approval-law.ts,
 * docs/design/laws.md#edited-approvals-across-crashes): a fresh directory per case, crashed after
 * every write (lost, and landed) and resumed with the same replies. The one-call step: every write
 * fsyncs here, and the step with several calls is kept by the stores that run it (memory, Chromium,
 * Durable Objects, Postgres); the edit lands in the same `input` record in both.
 */
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../../src/platform-node/index.ts';
import { editApprovalLaw, editApprovalLawProblems } from '../../contract/edit-approval-law.ts';
import { tempDir } from '../../support/temp-dir.ts';

describe('the crash law of edited approvals over FileStore (a fresh directory per case)', () => {
  it('ends every case of a note approved with other arguments as the uninterrupted run: the note once, as edited; the model always sees the proposal and the sentence', async () => {
    const tmp = await tempDir('polyloop-edit-law-');
    let n = 0;
    const result = await editApprovalLaw({
      scenario: 'one-call',
      newStore: () => new FileStore({ dir: `${tmp}/case-${n++}`, onWarning: () => undefined }),
    });
    expect(editApprovalLawProblems(result)).toEqual([]);
    expect(n).toBe(result.report.cases.length + 1);
  });
});
