import { spawn } from 'node:child_process';
import { appendFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { actionIntent, modelIntent, modelResult, started, stepWrite, writeFullRun } from '../../contract/run-store.contract.ts';
import { tempDir } from './helpers.ts';

const BIN = resolve(import.meta.dirname, '../../../bin/polyloop.mjs');

/** Run the real `polyloop` launcher in a child process. */
function polyloop(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

let dir = '';
let release = async (): Promise<void> => undefined;
let corruptDir = '';
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  const a = await tempDir();
  const b = await tempDir();
  cleanups.push(a.cleanup, b.cleanup);
  dir = a.dir;
  corruptDir = b.dir;
  const store = new FileStore({ dir, onWarning: () => undefined });
  await writeFullRun(store, 'finished-run');
  await store.runStarted('flying', started('flying'));
  await store.intent('flying', modelIntent(0));
  await store.result('flying', 's0.model', modelResult(0));
  await store.intent('flying', actionIntent(0));
  await store.runStarted('torn', started('torn'));
  await store.step('torn', stepWrite(0, `first line\nsecond line ${'y'.repeat(400)}`));
  await appendFile(store.logPath('torn'), '{"kind":"intent","v":"1');
  await store.runStarted('driven', started('driven'));
  release = await store.acquire('driven', {});
  const bad = new FileStore({ dir: corruptDir });
  await writeFullRun(bad, 'fine');
  await writeFile(bad.logPath('broken'), [encodeRecord(started('broken')), 'not json at all', encodeRecord(modelIntent(0)), ''].join('\n'));
});

afterAll(async () => {
  await release();
  for (const c of cleanups) await c();
});

describe.concurrent('polyloop runs', () => {
  it('lists every run with status, steps, valid actions and last write time', async () => {
    const r = await polyloop('runs', dir);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^RUN ID\s+STATUS\s+STEPS\s+VALID ACTIONS\s+LAST WRITE$/);
    expect(lines).toHaveLength(5);
    expect(r.stdout).toMatch(/finished-run\s+ended: final_answer\s+1\s+1\s+\d{4}-\d\d-\d\dT/);
    expect(r.stdout).toMatch(/flying\s+in flight: action s0\.action \(never\)\s+0\s+0/);
    expect(r.stdout).toMatch(/torn\s+interrupted \(resumable\) \(torn tail ignored\)\s+1\s+1/);
    expect(r.stdout).toMatch(new RegExp(`driven\\s+running \\(pid ${process.pid}\\)\\s+0\\s+0`));
  });

  it('prints machine-readable rows with --json', async () => {
    const r = await polyloop('runs', dir, '--json');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{ runId: string; status: string; stopReason: string | null; steps: number }>;
    expect(rows.map((x) => [x.runId, x.status, x.stopReason, x.steps]).sort()).toEqual([
      ['driven', 'running', null, 0],
      ['finished-run', 'ended', 'final_answer', 1],
      ['flying', 'in_flight', null, 0],
      ['torn', 'interrupted', null, 1],
    ]);
  });

  it('exits 1 with a clear message for a missing directory', async () => {
    const r = await polyloop('runs', join(dir, 'nope'));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no such directory: ${join(dir, 'nope')}`);
  });

  it('lists a corrupt log as corrupt, keeps listing the others, and exits 3', async () => {
    const r = await polyloop('runs', corruptDir);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/broken\s+corrupt: .*:2: not valid JSON/);
    expect(r.stdout).toMatch(/fine\s+ended: final_answer/);
  });
});

describe.concurrent('polyloop show', () => {
  it('shows the trajectory step by step, with the observation on one line and truncated', async () => {
    const r = await polyloop('show', dir, 'torn');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('status       interrupted (resumable)');
    expect(r.stdout).toContain('#0  action   echo(hi)  [executed]');
    expect(r.stdout).toMatch(/observation: first line ⏎ second line y+… \(\+\d+ chars\)/);
    expect(r.stdout).toContain('note         ignored a torn last line (line 3)');
  });

  it('shows the stop reason and final answer of an ended run', async () => {
    const r = await polyloop('show', dir, 'finished-run');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('status       ended: final_answer');
    expect(r.stdout).toContain('final answer done');
  });

  it('prints the whole trajectory as JSON with --json', async () => {
    const r = await polyloop('show', dir, 'flying', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { status: string; inFlight: { resultId: string }; trajectory: unknown[] };
    expect(out.status).toBe('in_flight');
    expect(out.inFlight.resultId).toBe('s0.action');
    expect(out.trajectory).toEqual([]);
  });

  it('exits 1 naming the run for an unknown run id', async () => {
    const r = await polyloop('show', dir, 'who?');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no run "who?" in');
  });

  it('exits 3 naming file and line for a corrupt log', async () => {
    const r = await polyloop('show', corruptDir, 'broken');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/corrupt run log at .*r-62726f6b656e\.jsonl:2: not valid JSON/);
  });

  it('exits 2 with usage for missing arguments or an unknown command', async () => {
    const cases = [[], ['show', dir], ['frobnicate', dir], ['runs', dir, '--color']];
    const results = await Promise.all(cases.map((args) => polyloop(...args)));
    for (const [i, r] of results.entries()) {
      expect(r.code, cases[i]?.join(' ')).toBe(2);
      expect(r.stderr).toContain('usage:');
    }
  });
});
