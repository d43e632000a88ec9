/**
 * The law of runs upgraded mid-way over InMemoryStore (`crashAtEveryWrite` with `upgrade`):
 * crashed at every write of a story where a deploy upgrades the run awaiting input, at a step
 * boundary and with a `never` action in flight — no `never` action twice, one upgrade record, the
 * steps before it unchanged; an upgrade that would remove the tool a pending approval names is
 * refused; and the harness reports a story that breaks the law.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../../../src/core/index.ts';
import type { AgentDefinition, LogRecord, RunRequestInput, RunStore } from '../../../src/core/index.ts';
import { crashAtEveryWrite } from '../../../src/testing/index.ts';
import {
  build,
  expectUpgradesRefused,
  UPGRADE_SCENARIOS,
  upgradeLaw,
  upgradeLawProblems,
  upgradeReply,
  VERSIONS,
} from '../../contract/upgrade-law.ts';

describe('the upgrade crash law over InMemoryStore', () => {
  it.each(UPGRADE_SCENARIOS)(
    'a run upgraded %s, crashed at every write and resumed (old code before the point, new code after), keeps the law',
    async (scenario) => {
      const result = await upgradeLaw({ scenario, newStore: () => new InMemoryStore() });
      expect(upgradeLawProblems(result)).toEqual([]);
    },
  );

  it('refuses, writing nothing, an upgrade that removes the tool the pending approval names or makes it replay-safe', async () => {
    await expectUpgradesRefused(new InMemoryStore());
  });
});

/** A store whose step 0 reads back with another end time once the log holds an upgrade. */
function retimingStore(): RunStore {
  const inner = new InMemoryStore();
  const retime = (log: readonly LogRecord[]): LogRecord[] =>
    log.some((r) => r.kind === 'upgrade')
      ? log.map((r) =>
          r.kind === 'step' && r.step.stepIndex === 0
            ? { ...r, step: { ...r.step, endedAt: '1999-01-01T00:00:00.000Z' } }
            : r,
        )
      : [...log];
  return Object.assign(inner, {
    readLog: async (id: string) => retime(await InMemoryStore.prototype.readLog.call(inner, id)),
  });
}

describe('the upgrade crash law can fail', () => {
  it('reports the never charge run twice when every settlement is answered with retry', async () => {
    const retry = (world: () => readonly string[]) => {
      const person = upgradeReply(world);
      return (p: Parameters<typeof person>[0]) =>
        p.kind === 'settle' ? { kind: 'retry' as const, resultId: p.resultId } : person(p);
    };
    const { report } = await upgradeLaw({ scenario: 'in flight', newStore: () => new InMemoryStore(), reply: retry });
    expect(report.failures).toContain('the uninterrupted run: the never action s1.action ran 2 times');
  });

  it('reports a step record before the upgrade that changed after the new code took over, though only its time differs', async () => {
    const { report } = await upgradeLaw({ scenario: 'boundary', newStore: retimingStore });
    expect(report.failures[0]).toBe(
      'the uninterrupted run: the step records before the upgrade (steps 0–1) are not the bytes they were when the new code took over',
    );
    expect(report.failures.length).toBeGreaterThan(report.writes);
  });
});

describe('the upgrade option of crashAtEveryWrite', () => {
  const world: string[] = [];
  const { a, b } = VERSIONS['awaiting input'];
  const old = (store: RunStore) =>
    build('awaiting input', a, store, () => world, false) as { agent: AgentDefinition; request: RunRequestInput };

  it('reports a second upgrade record when the new code differs from one process to the next', async () => {
    let deploys = 0;
    const report = await crashAtEveryWrite({
      setup: old,
      reply: upgradeReply(() => world),
      landed: false,
      upgrade: {
        setup: (store) => build('awaiting input', { ...b, system: `deploy ${++deploys}` }, store, () => world, false),
        reason: 'deploy',
        at: 'input',
      },
    });
    expect(report.failures[0]).toMatch(/^the uninterrupted run: the log holds [2-9] upgrade records, not one$/);
  });

  it('rejects when the run ends before the upgrade point, and when the new code is the old', async () => {
    const never = {
      setup: (store: RunStore) => build('awaiting input', b, store, () => world, false),
      reason: 'deploy',
      at: () => false,
    };
    await expect(crashAtEveryWrite({ setup: old, reply: upgradeReply(() => world), upgrade: never })).rejects.toThrow(
      /the run ended \(final_answer\) before the upgrade point/,
    );
    const same = {
      setup: (store: RunStore) => build('awaiting input', a, store, () => world, false),
      reason: 'deploy',
      at: 'input' as const,
    };
    await expect(crashAtEveryWrite({ setup: old, reply: upgradeReply(() => world), upgrade: same })).rejects.toThrow(
      /wrote no upgrade record/,
    );
  });
});
