/**
 * The crash law of sub-agents (docs/design/laws.md#sub-agents) over InMemoryStore: a parent whose
 * tool runs a child on the same store, crashed at every write of either run (lost, and landed), and
 * twice — once in each run — ends as the uninterrupted run, parent and child; each approved `never`
 * note of the child happens exactly once. And the law's checks fail when the law is broken.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../../../src/core/index.ts';
import { subAgentsDoubleCrash } from '../../contract/sub-agents-double-crash.ts';
import { SCENARIO_NAMES, subAgentsLaw, subAgentsLawProblems } from '../../contract/sub-agents-law.ts';

const newStore = (): InMemoryStore => new InMemoryStore();

describe('the crash law of sub-agents over InMemoryStore', () => {
  it.each(SCENARIO_NAMES)(
    'ends the %s scenario crashed after every write of parent or child (lost, and landed) and resumed with the same replies as the uninterrupted run, both logs; each approved note exactly once',
    async (scenario) => {
      const result = await subAgentsLaw({ scenario, newStore });
      expect(subAgentsLawProblems(result)).toEqual([]);
      if (process.env['POLYLOOP_REPORT'])
        console.log(`${scenario}: ${result.report.writes} writes, ${result.report.cases.length} cases`);
      // Settlements among the cases: a crash left the child's note in flight, and a person said what happened.
      expect(result.asks.filter((a) => a.length > result.asks[0]!.length).length).toBeGreaterThan(0);
    },
  );

  it.each(SCENARIO_NAMES)(
    'ends the %s scenario crashed once in each run (at a write of the parent, then of the child, and the other way round) as the uninterrupted run',
    async (scenario) => {
      // Every write of each run is a first crash point and a second one; half the pairs (k1 + k2 even).
      const result = await subAgentsDoubleCrash({ scenario, newStore, stride: 2 });
      expect(result.problems).toEqual([]);
      expect(result.pairs).toBeGreaterThan(result.writes.parent + result.writes.child);
      expect(result.settled).toBeGreaterThan(0);
      if (process.env['POLYLOOP_REPORT'])
        console.log(
          `${scenario}: ${JSON.stringify(result.writes)} writes, ${result.pairs} crash pairs, ${result.settled} settlements`,
        );
    },
  );
});

describe("the sub-agent crash law's checks fail when the law is broken", () => {
  it('a person who answers the settlement of a note that happened with retry makes it happen twice', async () => {
    const problems = subAgentsLawProblems(await subAgentsLaw({ scenario: 'twice', newStore, settle: 'retry' }));
    expect(problems).toContainEqual(expect.stringMatching(/^case \d+: note:one happened 2 times$/));
    expect(problems).toContainEqual(expect.stringMatching(/^case \d+: note:two happened 2 times$/));
  });

  it('a child note marked safe that is not happens twice when a crash replays it, once or twice over', async () => {
    const once = subAgentsLawProblems(await subAgentsLaw({ scenario: 'approval', newStore, notePolicy: 'safe' }));
    expect(once).toContainEqual(expect.stringMatching(/^case \d+: note:one happened 2 times$/));
    const twice = await subAgentsDoubleCrash({ scenario: 'approval', newStore, notePolicy: 'safe', stride: 5 });
    expect(twice.problems).toContainEqual(expect.stringMatching(/note:one happened 2 times$/));
  });

  it("a child tool marked safe whose replay says something else makes the child's log differ from the uninterrupted one", async () => {
    const { report } = await subAgentsLaw({ scenario: 'approval', newStore, lookCounts: true });
    expect(report.failures).toContainEqual(
      expect.stringMatching(/^crash after \d+ writes.*: the child run sub-law\.s0\.action's steps differ/),
    );
  });
});
