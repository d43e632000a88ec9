/**
 * A run outlives the code that started it: process 1 runs version A of an agent module until
 * the run waits for a person's approval of a `never` tool, and is SIGKILLed there; process 2
 * runs version B (one tool more, a new system prompt) and resumes the run by its id alone —
 * refused without `upgrade`, writing nothing, then approved and finished with it.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeLog, readRunLog } from '../../../src/core/index.ts';
import type { UpgradeRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { finished, spawnTs, waitForLine } from '../platform-node/helpers.ts';

const PROCESS = resolve(import.meta.dirname, 'process.ts');
const AGENT_A = resolve(import.meta.dirname, 'agent-a.ts');
const AGENT_B = resolve(import.meta.dirname, 'agent-b.ts');
const RUN_ID = 'weather-1';
const REASON = 'deploy 2: the forecast tool and a new system prompt';

// Removed after the afterAll below has killed any child a failed assertion left running.
const dirs = sharedTempDirs();
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

/** A child a failed assertion left running is killed when the file ends. */
const killAtEnd = (child: ChildProcess): void => {
  cleanups.unshift(async () => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
};
const payload = <T>(line: string): T => JSON.parse(line.slice(line.indexOf(' ') + 1)) as T;
type Pending = { kind: string; resultId: string; stepIndex: number };
type Summary = { stopReason: string; finalAnswer: string | null; pending: Pending | null; steps: number };

type Env = NodeJS.ProcessEnv & { readonly UPGRADE_DIR: string; readonly UPGRADE_SIDE: string };
const kinds = (bytes: Buffer): string[] => decodeLog(bytes.toString('utf8')).records.map((r) => r.kind);
const PROMPT_B = "You report the weather and tomorrow's forecast.";

/** Process 1, version A: `run` until the run waits for the approval of notify; the process is SIGKILLed there. */
async function startUnderA(env: Env, logPath: string): Promise<{ readonly pending: Pending; readonly log: Buffer }> {
  const first = spawnTs(PROCESS, ['start', AGENT_A, RUN_ID, 'What is the weather in Paris? Tell ops.'], { env });
  killAtEnd(first);
  const firstEnd = finished(first);
  const awaiting = payload<Summary>(await waitForLine(first, /^AWAITING /));
  expect(awaiting.pending).toMatchObject({ kind: 'approval', stepIndex: 1 });
  const log = readFileSync(logPath);
  expect(kinds(log).at(-1)).toBe('input_request');
  process.kill(first.pid as number, 'SIGKILL');
  expect((await firstEnd).signal).toBe('SIGKILL');
  expect(existsSync(env.UPGRADE_SIDE)).toBe(false);
  return { pending: awaiting.pending as Pending, log };
}

/** The finished log: process 1's bytes, then the upgrade at the awaiting step, then the rest under version B. */
function expectUpgradedLog(after: Buffer, before: Buffer, pending: Pending): void {
  expect(after.subarray(0, before.length).equals(before)).toBe(true);
  expect(kinds(after.subarray(before.length))[0]).toBe('upgrade');
  const view = readRunLog(decodeLog(after.toString('utf8')).records);
  const stepsDone = view.trajectory.map((s) => s.actionRepr?.split('(')[0] ?? s.decision);
  expect(stepsDone).toEqual(['lookup', 'notify', 'forecast', 'final']);
  expect(view.trajectory[1]?.actionStatus).toBe('executed');
  expect(view.upgrades).toHaveLength(1);
  const upgrade = view.upgrades[0] as UpgradeRecord;
  expect(upgrade).toMatchObject({ kind: 'upgrade', stepIndex: pending.stepIndex, reason: REASON });
  expect(Object.keys(upgrade.changes).sort()).toEqual(['context', 'tools']);
  const newRun = [{ role: 'system', content: [{ type: 'text', text: PROMPT_B }] }];
  expect(upgrade.changes['context']?.value).toMatchObject({ run: newRun });
}

describe('a run started by version A of an agent module and finished by version B', () => {
  it('is refused without upgrade (nothing written), and with it goes on from the approval: the never tool runs once, ' +
    'the old steps stay byte for byte', async () => {
    const root = await dirs.make('polyloop-upgrade-');
    const env: Env = { ...process.env, UPGRADE_DIR: join(root, 'runs'), UPGRADE_SIDE: join(root, 'sent.txt') };
    const logPath = new FileStore({ dir: env.UPGRADE_DIR }).logPath(RUN_ID);
    const { pending, log: before } = await startUnderA(env, logPath);

    // Process 2, version B: the same approval without upgrade is refused and writes nothing.
    const second = spawnTs(PROCESS, ['approve', AGENT_B, RUN_ID, pending.resultId, REASON], { env });
    killAtEnd(second);
    const secondEnd = finished(second);
    const answer = await waitForLine(second, /^(REFUSED|RESULT) /);
    expect(answer).toMatch(/^REFUSED /);
    const refused = payload<{ code: string; message: string; differingKeys: string[] }>(answer);
    expect(refused.code).toBe('run_identity_mismatch');
    expect(refused.differingKeys.some((k) => k.startsWith('context.run'))).toBe(true);
    expect(refused.differingKeys.some((k) => k.startsWith('tools'))).toBe(true);
    expect(refused.message).toContain(`differing keys: ${refused.differingKeys.join(', ')}`);
    expect(refused.message).toContain('resume with { upgrade: { reason } }');
    expect(readFileSync(logPath).equals(before)).toBe(true);
    expect(existsSync(env.UPGRADE_SIDE)).toBe(false);

    // With upgrade: approved, and finished under version B.
    second.stdin.end('upgrade\n');
    const done = await secondEnd;
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    const result = payload<Summary>(done.stdout.trimEnd().split('\n').at(-1) as string);
    expect(result).toMatchObject({ stopReason: 'final_answer', pending: null, steps: 4 });
    expect(result.finalAnswer).toBe(`last observation: rain tomorrow (under "${PROMPT_B}")`);
    expect(readFileSync(env.UPGRADE_SIDE, 'utf8')).toBe('ops: Paris is sunny\n');
    expectUpgradedLog(readFileSync(logPath), before, pending);
  }, 120_000);
});
