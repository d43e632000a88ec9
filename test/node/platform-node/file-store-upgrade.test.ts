/**
 * The law of runs upgraded mid-way over FileStore (real files, a fresh directory per case):
 * crashed at every write of a story where a deploy upgrades the run awaiting input, at a step
 * boundary and with a `never` action in flight, and resumed (old code before the point, new code
 * with `{ upgrade }` after it); and an upgrade the pending approval forbids writes nothing.
 */
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../../src/platform-node/index.ts';
import {
  expectUpgradesRefused,
  UPGRADE_SCENARIOS,
  upgradeLaw,
  upgradeLawProblems,
} from '../../contract/upgrade-law.ts';
import { tempDir } from '../../support/temp-dir.ts';

async function freshDir(): Promise<string> {
  return tempDir('polyloop-upgrade-');
}

describe('the upgrade crash law over FileStore', () => {
  it.each(UPGRADE_SCENARIOS)(
    'a run upgraded %s, crashed at every write and resumed, keeps the law in real files',
    async (scenario) => {
      const tmp = await freshDir();
      const dirs: string[] = [];
      const result = await upgradeLaw({
        scenario,
        newStore: () => {
          dirs.push(`${tmp}/case-${dirs.length}`);
          return new FileStore({ dir: dirs.at(-1)! });
        },
      });
      expect(upgradeLawProblems(result)).toEqual([]);
      expect(new Set(dirs).size).toBe(result.report.cases.length + 1);
    },
  );

  it('refuses, writing nothing to the file, an upgrade that removes the tool the pending approval names or makes it replay-safe', async () => {
    await expectUpgradesRefused(new FileStore({ dir: await freshDir() }));
  });
});
