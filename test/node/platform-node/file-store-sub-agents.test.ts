/**
 * The crash law of sub-agents over FileStore (docs/design/laws.md#sub-agents): a parent and the
 * child its tool runs, both logs in one directory (a fresh one per case), crashed at every write of
 * either run (lost, and landed) — and a sample of crashes once in each run (the pairs every
 * pair over memory: test/node/subagents/sub-agents-law.test.ts) — end as the
 * uninterrupted run, both logs; each approved `never` note of the child happens exactly once.
 */
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../../src/platform-node/index.ts';
import { subAgentsDoubleCrash } from '../../contract/sub-agents-double-crash.ts';
import { SCENARIO_NAMES, subAgentsLaw, subAgentsLawProblems } from '../../contract/sub-agents-law.ts';
import { tempDir } from '../../support/temp-dir.ts';

const quiet = (): void => undefined;

describe('the crash law of sub-agents over FileStore (a fresh directory per case)', () => {
  // Two of the three scenarios (a child out of steps runs over memory, IndexedDB and Postgres): each case here fsyncs.
  it.each(SCENARIO_NAMES.filter((s) => s !== 'unfinished'))(
    'ends the %s scenario crashed after every write of parent or child (lost, and landed) and resumed with the same replies as the uninterrupted run, both logs; each approved note exactly once',
    async (scenario) => {
      const tmp = await tempDir('polyloop-sub-law-');
      let dirs = 0;
      const result = await subAgentsLaw({
        scenario,
        newStore: () => new FileStore({ dir: `${tmp}/case-${dirs++}`, onWarning: quiet }),
      });
      expect(subAgentsLawProblems(result)).toEqual([]);
      expect(dirs).toBe(result.report.cases.length + 1);
    },
    120_000,
  );

  it('ends the approval scenario crashed once in each run (a sample of the pairs, parent then child and the other way round) as the uninterrupted run', async () => {
    const tmp = await tempDir('polyloop-sub-law-2-');
    let dirs = 0;
    const result = await subAgentsDoubleCrash({
      scenario: 'approval',
      newStore: () => new FileStore({ dir: `${tmp}/case-${dirs++}`, onWarning: quiet }),
      // Every fifth write of each run as the first crash, every fifth of the resume as the second.
      every: 5,
      stride: 5,
    });
    expect(result.problems).toEqual([]);
    expect(result.pairs).toBeGreaterThan(8);
    if (process.env['POLYLOOP_REPORT']) console.log(`${result.pairs} crash pairs, ${result.settled} settlements`);
  }, 120_000);
});
