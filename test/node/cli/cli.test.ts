import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecord } from '../../../src/core/index.ts';
import type { IntentRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import {
  actionIntent,
  ended,
  modelIntent,
  modelResult,
  started,
  stepRecord,
  stepWrite,
  writeFullRun,
} from '../../contract/run-store.contract.ts';
import { sharedTempDirs, tempDir } from '../../support/temp-dir.ts';
import { polyloop as cli } from '../platform-node/helpers.ts';

const polyloop = (...args: string[]): ReturnType<typeof cli> => cli(args);

/** A `safe` tool call in flight: `add({"a":1})`. */
const safeAdd: IntentRecord = {
  ...actionIntent(0),
  replayPolicy: 'safe',
  decision: {
    kind: 'action',
    action: { kind: 'tool_call', name: 'add', arguments: { a: 1 } },
    trajectoryRepr: 'add(1)',
    historyText: 'call add',
  },
} as IntentRecord;

let dir = '';
let release = async (): Promise<void> => undefined;
let corruptDir = '';
const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make();
  corruptDir = await dirs.make();
  const store = new FileStore({ dir, onWarning: () => undefined });
  await writeFullRun(store, 'finished-run');
  await store.runStarted('flying', started('flying'));
  await store.intent('flying', modelIntent(0));
  await store.result('flying', 's0.model', modelResult(0));
  await store.intent('flying', actionIntent(0));
  await store.runStarted('replaying', started('replaying'));
  await store.intent('replaying', modelIntent(0));
  await store.result('replaying', 's0.model', modelResult(0));
  await store.intent('replaying', safeAdd);
  await store.runStarted('asking', started('asking'));
  await store.intent('asking', modelIntent(0));
  await store.runStarted('replied', started('replied'));
  await store.intent('replied', modelIntent(0));
  await store.result('replied', 's0.model', modelResult(0, 'I will add'));
  await store.runStarted('torn', started('torn'));
  await store.intent('torn', modelIntent(0));
  await store.result('torn', 's0.model', modelResult(0));
  await store.intent('torn', actionIntent(0));
  await store.step('torn', stepWrite(0, `first line\nsecond line ${'y'.repeat(400)}`));
  await appendFile(store.logPath('torn'), '{"kind":"intent","v":"1');
  await store.runStarted('driven', started('driven'));
  release = await store.acquire('driven', {});
  const bad = new FileStore({ dir: corruptDir });
  await writeFullRun(bad, 'fine');
  await writeFile(
    bad.logPath('broken'),
    [encodeRecord(started('broken')), 'not json at all', encodeRecord(modelIntent(0)), ''].join('\n'),
  );
  // Every line decodes, but an action intent with no model result before it breaks the protocol.
  await writeFile(
    bad.logPath('unordered'),
    [encodeRecord(started('unordered')), encodeRecord(actionIntent(0)), ''].join('\n'),
  );
});

afterAll(async () => {
  await release();
});

describe.concurrent('polyloop runs', () => {
  it('lists every run with its one-line state (what resume would do), steps, valid actions and last write time', async () => {
    const r = await polyloop('runs', dir);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^RUN ID\s+STATE\s+STEPS\s+VALID ACTIONS\s+LAST WRITE$/);
    expect(lines).toHaveLength(8);
    expect(r.stdout).toMatch(/finished-run\s+ended \(max_steps\)\s+1\s+1\s+\d{4}-\d\d-\d\dT/);
    expect(r.stdout).toMatch(
      /flying\s+in flight at step 0: action echo\(\{"text":"hi"\}\) — a never action was in flight: resume asks a person to settle it\s+0\s+0/,
    );
    expect(r.stdout).toMatch(
      /replaying\s+in flight at step 0: action add\(\{"a":1\}\) — will be replayed \(safe\)\s+0\s+0/,
    );
    expect(r.stdout).toMatch(/asking\s+model call in flight at step 0 — will be re-issued\s+0/);
    expect(r.stdout).toMatch(
      /replied\s+model reply stored at step 0, not yet interpreted — will be interpreted on resume/,
    );
    expect(r.stdout).toMatch(/torn\s+at step boundary \(resumable\) \(torn tail ignored\)\s+1\s+1/);
    expect(r.stdout).toMatch(new RegExp(`driven\\s+running \\(pid ${process.pid}\\) — at step boundary\\s+0\\s+0`));
  });

  it('prints machine-readable rows with --json: the readRunLog state, the in-flight step with its action, and the live driver', async () => {
    const r = await polyloop('runs', dir, '--json');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{
      runId: string;
      state: string;
      stopReason: string | null;
      steps: number;
      driverPid: number | null;
      inFlight: { resolution: string } | null;
    }>;
    expect(rows.map((x) => [x.runId, x.state, x.stopReason, x.steps, x.inFlight?.resolution ?? null]).sort()).toEqual([
      ['asking', 'in_flight', null, 0, 'reissue_model'],
      ['driven', 'at_boundary', null, 0, null],
      ['finished-run', 'ended', 'max_steps', 1, null],
      ['flying', 'in_flight', null, 0, 'settle'],
      ['replaying', 'in_flight', null, 0, 'replay_action'],
      ['replied', 'in_flight', null, 0, 'reinterpret'],
      ['torn', 'at_boundary', null, 1, null],
    ]);
    expect(rows.find((x) => x.runId === 'driven')?.driverPid).toBe(process.pid);
    expect(rows.find((x) => x.runId === 'replaying')?.inFlight).toEqual({
      stepIndex: 0,
      resolution: 'replay_action',
      target: 'action',
      action: { kind: 'tool_call', name: 'add', arguments: { a: 1 } },
      resultId: 's0.action',
      replayPolicy: 'safe',
    });
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
    expect(r.stdout).toMatch(/fine\s+ended \(max_steps\)/);
  });

  it('lists a log that breaks the write protocol as corrupt, naming its file and line', async () => {
    const r = await polyloop('runs', corruptDir);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(
      /unordered\s+corrupt: corrupt run log at .*r-756e6f726465726564\.jsonl:2: intent of step 0 without its model-call intent/,
    );
  });
});

describe.concurrent('polyloop show', () => {
  it('shows the trajectory step by step, with the observation on one line and truncated', async () => {
    const r = await polyloop('show', dir, 'torn');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('state        at step boundary (resumable)');
    expect(r.stdout).toContain('#0  action   echo(hi)  [executed]');
    expect(r.stdout).toMatch(/observation: first line ⏎ second line y+… \(\+\d+ chars\)/);
    expect(r.stdout).toContain('note         ignored a torn last line (line 6)');
  });

  it('shows the stop reason and final answer of an ended run', async (test) => {
    const store = new FileStore({ dir: await tempDir(undefined, test) });
    const final = {
      ...stepRecord(0),
      decision: 'final' as const,
      actionRepr: null,
      observation: null,
      actionStatus: null,
      finalAnswer: 'done',
    };
    await store.runStarted('answered', started('answered'));
    await store.intent('answered', modelIntent(0));
    await store.result('answered', 's0.model', modelResult(0));
    await store.step('answered', { ...stepWrite(0), step: final, actionResult: null });
    await store.runEnded('answered', { ...ended(1), stopReason: 'final_answer', finalAnswer: 'done', validActions: 0 });
    const r = await polyloop('show', store.dir, 'answered');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('state        ended (final_answer)');
    expect(r.stdout).toContain('final answer done');
  });

  it("shows the in-flight step's action with its name and arguments, and the one-line state", async () => {
    const r = await polyloop('show', dir, 'replaying');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('state        in flight at step 0: action add({"a":1}) — will be replayed (safe)');
    expect(r.stdout).toContain('#0  in flight action add({"a":1})  (s0.action, replay safe)');
  });

  it('prints the trajectory and the readRunLog fields as JSON with --json', async () => {
    const r = await polyloop('show', dir, 'flying', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      runId: 'flying',
      state: 'in_flight',
      stopReason: null,
      steps: 0,
      validActions: 0,
      driverPid: null,
      inFlight: {
        stepIndex: 0,
        resolution: 'settle',
        target: 'action',
        action: { kind: 'tool_call', name: 'echo', arguments: { text: 'hi' } },
        resultId: 's0.action',
      },
      trajectory: [],
    });
    expect(out['stateLine']).toMatch(/a never action was in flight: resume asks a person to settle it/);
    expect(out['pending']).toBeNull();
  });

  it('exits 3 naming file and line for a log that breaks the write protocol', async () => {
    const r = await polyloop('show', corruptDir, 'unordered');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/corrupt run log at .*\.jsonl:2: intent of step 0 without its model-call intent/);
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
