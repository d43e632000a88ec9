/**
 * The crash law of edited approvals over IndexedDBStore in real Chromium
 * (test/contract/edit-approval-law.ts, docs/design/laws.md#edited-approvals-across-crashes): a
 * fresh database per case, crashed after every write (lost, and landed) and resumed with the same
 * replies: a note alone in its step and one payment of a step with several calls (whose results
 * the store holds until the step lands) approved with other arguments.
 */
import { describe, expect, it } from 'vitest';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { editApprovalLaw, editApprovalLawProblems } from '../contract/edit-approval-law.ts';
import { freshDbName } from './idb-store.cases.ts';

describe('the crash law of edited approvals over IndexedDBStore (Chromium, a fresh database per case)', () => {
  it('ends every case, a note and one of several calls edited, as the uninterrupted run: each never call once, with the person’s arguments; the model always sees the proposal and the sentence', async () => {
    const stores: IndexedDBStore[] = [];
    const result = await editApprovalLaw({
      newStore: () => {
        const store = new IndexedDBStore({ dbName: freshDbName('edit-law') });
        stores.push(store);
        return store;
      },
    });
    await Promise.all(stores.map((s) => s.close()));
    expect(editApprovalLawProblems(result)).toEqual([]);
  }, 120_000);
});
