/**
 * The laws every store keeps, on PostgresStore over a real Postgres: the crash law with human input
 * (docs/design/laws.md#human-input-across-crashes: crashed at every write, resumed, the same end; a
 * `never` note exactly once), the same law over steps with several calls (each `never` call exactly
 * once) and over one of them a person approves with other arguments (it runs once, as edited), the
 * crash law of sub-agents (a parent and its child in one schema, each approved note exactly once),
 * and portability (docs/design/laws.md#portability): a run crashed at every write on Postgres,
 * exported, imported into memory and finished there — and the other way round — ends as the
 * uninterrupted run, an imported run exports as the same bytes, and a fork at any step, in Postgres
 * or into memory, runs nothing before its fork point again (docs/design/laws.md#forks).
 */
import { describe, expect, it } from 'vitest';
import { exportRun, importRun, InMemoryStore } from '../../../src/core/index.ts';
import type { RunStore } from '../../../src/core/index.ts';
import { PostgresStore } from '../../../src/platform-postgres/index.ts';
import { editApprovalLaw, editApprovalLawProblems, editApprovalWrites } from '../../contract/edit-approval-law.ts';
import { humanInputLaw, lawProblems } from '../../contract/human-input-law.ts';
import { severalCallsLaw, severalCallsLawProblems, severalCallsWrites } from '../../contract/several-calls-law.ts';
import { subAgentsWrites } from '../../contract/sub-agents-double-crash.ts';
import { SCENARIO_NAMES, subAgentsLaw, subAgentsLawProblems } from '../../contract/sub-agents-law.ts';
import { forkLaw } from '../../portability/fork-law.ts';
import { cutRun, effectsProblem, finishOn, RUN_ID, uninterrupted } from '../../portability/reference.ts';
import { usePostgres } from '../../postgres/fixture.ts';

const db = usePostgres();

/** `n` migrated schemas made ahead, handed out synchronously (the crash law builds stores without awaiting). */
async function storesAhead(n: number): Promise<() => RunStore> {
  const schemas: string[] = [];
  for (let i = 0; i < n; i++) schemas.push(await db.freshSchema());
  return () => {
    const schema = schemas.shift();
    if (schema === undefined) throw new Error('ran out of prepared schemas');
    return new PostgresStore({ pool: db.pool(), schema });
  };
}

describe('the laws on PostgresStore', () => {
  it('keeps the human-input crash law: crashed after every write (lost, and landed), resumed, ends as the uninterrupted run', async () => {
    const newStore = await storesAhead(80);
    const result = await humanInputLaw({ modelReplayPolicy: 'safe', newStore });
    expect(lawProblems(result)).toEqual([]);
  }, 120_000);

  it('keeps the crash law of several calls a step: crashed after every write (lost, and landed), resumed, ends as the uninterrupted run, each never call exactly once', async () => {
    const newStore = await storesAhead(2 * (await severalCallsWrites()) + 1);
    const result = await severalCallsLaw({ newStore });
    expect(severalCallsLawProblems(result)).toEqual([]);
  }, 120_000);

  it('keeps the crash law of edited approvals: one of several calls approved with other arguments, crashed after every write (lost, and landed), resumed, ends as the uninterrupted run, each never call once with the person’s arguments', async () => {
    const newStore = await storesAhead(2 * (await editApprovalWrites('several-calls')) + 1);
    const result = await editApprovalLaw({ scenario: 'several-calls', newStore });
    expect(editApprovalLawProblems(result)).toEqual([]);
  }, 120_000);

  it.each(SCENARIO_NAMES)(
    'keeps the crash law of sub-agents in the %s scenario: parent and child in one schema, crashed after every write of either (lost, and landed), resumed, end as the uninterrupted runs, each approved note exactly once',
    async (scenario) => {
      const writes = await subAgentsWrites({ scenario });
      const newStore = await storesAhead(2 * (writes.parent + writes.child) + 1);
      const result = await subAgentsLaw({ scenario, newStore });
      expect(subAgentsLawProblems(result)).toEqual([]);
    },
    120_000,
  );

  it.each([false, true])(
    'carries a run crashed at every write between Postgres and memory, both ways, to the uninterrupted end (write lands before the crash: %s)',
    async (landsBeforeThrow) => {
      const { outcome: full, writes } = await uninterrupted(new InMemoryStore());
      let carried = 0;
      for (let k = 0; k < writes; k++) {
        for (const [from, to] of [
          ['postgres', 'memory'],
          ['memory', 'postgres'],
        ] as const) {
          const make = async (kind: 'postgres' | 'memory'): Promise<RunStore> =>
            kind === 'memory' ? new InMemoryStore() : db.freshStore();
          const source = await make(from);
          const effects: string[] = [];
          const log = await cutRun(source, k, landsBeforeThrow, effects);
          if (log.length === 0) continue;
          const ndjson = await exportRun(source, RUN_ID);
          const finished = await finishOn(await make(to), ndjson, effects);
          expect(finished.outcome, `${from} → ${to}, crash at write ${k}`).toEqual(full);
          expect(effectsProblem(effects, finished.outcome), `${from} → ${to}, crash at write ${k}`).toBeNull();
          carried++;
        }
      }
      expect(carried).toBe(2 * (landsBeforeThrow ? writes : writes - 1));
    },
    120_000,
  );

  it('forks a run in Postgres at every step and at a pending approval, in its schema and into memory: each fork ends as the uninterrupted run with nothing before its fork point run again; the source unchanged', async () => {
    // Into memory only: a fork into Postgres is an import, which the cases above carry from memory.
    expect(await forkLaw({ make: () => db.freshStore(), other: () => new InMemoryStore() })).toEqual([]);
  }, 60_000);

  it('exports an imported run cut after any of its writes (waiting for a person among them) as the same bytes as memory does', async () => {
    const memory = new InMemoryStore();
    await uninterrupted(memory, 'approval');
    const lines = (await exportRun(memory, RUN_ID)).split('\n').filter((l) => l !== '');
    const schema = await db.freshSchema();
    for (let k = 1; k <= lines.length; k++) {
      const ndjson = `${lines.slice(0, k).join('\n')}\n`;
      const store = new PostgresStore({ pool: db.pool(), schema });
      const runId = `${RUN_ID}-${k}`;
      await importRun(store, runId, ndjson.replaceAll(`"runId":"${RUN_ID}"`, `"runId":"${runId}"`));
      expect(await exportRun(store, runId), `cut after ${k} records`).toBe(
        ndjson.replaceAll(`"runId":"${RUN_ID}"`, `"runId":"${runId}"`),
      );
    }
  });
});
