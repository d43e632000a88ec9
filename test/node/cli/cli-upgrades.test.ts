/**
 * `polyloop show` and `runs` on runs that went on under new code: a line where each upgrade took
 * effect (its reason, what it changed, the tools it added and removed, its time), and the
 * upgrades in `--json`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { resume, run } from '../../../src/core/index.ts';
import type { UpgradeRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { readRunLog } from '../../../src/core/index.ts';
import { agentVersions } from '../viewer/upgrade-agents.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { polyloop } from '../platform-node/helpers.ts';

const dirs = sharedTempDirs();
let dir = '';
let finished: UpgradeRecord;
let waiting: UpgradeRecord;

const upgradesOf = async (runId: string): Promise<readonly UpgradeRecord[]> =>
  readRunLog(await new FileStore({ dir }).readLog(runId)).upgrades;
const approve = { kind: 'approve', resultId: 's1.input' } as const;
const CHANGED = 'context, tools +search';

beforeAll(async () => {
  dir = await dirs.make('polyloop-cli-upgrades-');
  const { v1, v2, v3 } = agentVersions(dir);
  // Started under v1, waiting for approval of `send` at step 1; upgraded to v2 with the approval.
  await run(v1, { runId: 'upgraded', goal: 'Tell Ana the weather.' });
  await resume(v2, 'upgraded', { upgrade: { reason: 'deploy 42: search added' }, input: approve });
  [finished] = (await upgradesOf('upgraded')) as [UpgradeRecord];
  // Upgraded without a reply (still waiting), its reason on two lines; then to v3 would drop `send`: refused.
  await run(v1, { runId: 'waiting', goal: 'Tell Ana the weather.' });
  await resume(v2, 'waiting', { upgrade: { reason: 'new tools\nsecond line' } });
  await expect(resume(v3, 'waiting', { upgrade: { reason: 'drop send' } })).rejects.toThrow(/cannot be upgraded/);
  [waiting] = (await upgradesOf('waiting')) as [UpgradeRecord];
}, 30_000);

describe('polyloop show on an upgraded run', () => {
  it('prints a line where the upgrade took effect: before its step, with reason, changes, tools added, time', async () => {
    const r = await polyloop(['show', dir, 'upgraded']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const line = `── upgrade before step 1: deploy 42: search added (changed: ${CHANGED}) at ${finished.at}`;
    const at = lines.indexOf(line);
    expect(at).toBeGreaterThan(0);
    expect(lines[at - 2]).toMatch(/^#0 {2}action/);
    // The driver that upgraded the run took it over there too: its mark follows the upgrade's.
    expect(lines[at + 1]).toMatch(/^── resumed by a later driver at step 1 \(await_input\) at /);
    expect(lines[at + 2]).toMatch(/^#1 {2}action +send/);
  });

  it('prints an upgrade of the step still waiting before the line of that step, its reason on one line', async () => {
    const r = await polyloop(['show', dir, 'waiting']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const line = `── upgrade before step 1: new tools ⏎ second line (changed: ${CHANGED}) at ${waiting.at}`;
    const at = lines.indexOf(line);
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^#1 {2}awaiting approval of action send/);
  });

  it('says in the runs table how often a run was upgraded', async () => {
    const r = await polyloop(['runs', dir]);
    expect(r.stdout).toMatch(/upgraded +ended \(final_answer\); upgraded once +3 +2 /);
    expect(r.stdout).toMatch(/waiting +awaiting input at step 1: .*; upgraded once +1 +1 /);
  });

  it('gives the upgrades in --json, for show and for runs', async () => {
    const expected = {
      stepIndex: 1,
      reason: 'deploy 42: search added',
      at: finished.at,
      changed: ['context', 'tools'],
      tools: { added: ['search'], removed: [] },
      snapshotHash: finished.snapshotHash,
    };
    const shown = JSON.parse((await polyloop(['show', dir, 'upgraded', '--json'])).stdout) as { upgrades: unknown[] };
    expect(shown.upgrades).toEqual([expected]);
    type Row = { runId: string; upgrades: unknown[] };
    const listed = JSON.parse((await polyloop(['runs', dir, '--json'])).stdout) as Row[];
    expect(listed.find((r) => r.runId === 'upgraded')?.upgrades).toEqual([expected]);
    expect(listed.find((r) => r.runId === 'waiting')?.upgrades).toHaveLength(1);
  });
});
