/**
 * `polyloop show` on a run that several processes carried out, each after the one before was
 * killed with SIGKILL: a line before the first step each later driver carried out (the step, how
 * it went on, when), and the marks in `--json`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { readRunLog } from '../../../src/core/index.ts';
import type { ResumedRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { takenOverRun } from '../../support/takeovers.ts';
import { polyloop } from '../platform-node/helpers.ts';

const dirs = sharedTempDirs();
let dir = '';
let marks: readonly ResumedRecord[] = [];

beforeAll(async () => {
  dir = await dirs.make('polyloop-cli-takeovers-');
  await takenOverRun(dir, 'crashed');
  marks = readRunLog(await new FileStore({ dir }).readLog('crashed')).resumes;
}, 60_000);

describe('polyloop show on a run later drivers took over', () => {
  it('prints, before the first step each later driver carried out, where it took over and how', async () => {
    expect(marks.map((m) => [m.stepIndex, m.resolution])).toEqual([
      [1, 'replay_action'],
      [2, 'replay_action'],
      [4, null],
    ]);
    const r = await polyloop(['show', dir, 'crashed']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const stepLines = lines.filter((l) => /^#\d|^── resumed/.test(l));
    expect(stepLines.map((l) => l.replace(/ {2}.*$/, '').replace(/ at \d{4}-.*$/, ''))).toEqual([
      '#0',
      '── resumed by a later driver at step 1 (replay_action)',
      '#1',
      '── resumed by a later driver at step 2 (replay_action)',
      '#2',
      '#3',
      '── resumed by a later driver at step 4 (at a step boundary)',
      '#4',
    ]);
    for (const m of marks)
      expect(r.stdout).toContain(`at step ${m.stepIndex} (${m.resolution ?? 'at a step boundary'}) at ${m.at}\n`);
  });

  it('gives the marks in --json, each with its driver session, for show and for runs', async () => {
    const expected = marks.map((m, i) => ({
      stepIndex: m.stepIndex,
      resolution: m.resolution,
      at: m.at,
      driver: i + 2,
    }));
    const shown = JSON.parse((await polyloop(['show', dir, 'crashed', '--json'])).stdout) as { resumes: unknown };
    expect(shown.resumes).toEqual(expected);
    type Row = { runId: string; resumes: unknown };
    const listed = JSON.parse((await polyloop(['runs', dir, '--json'])).stdout) as Row[];
    expect(listed.find((row) => row.runId === 'crashed')?.resumes).toEqual(expected);
  });
});
