/**
 * A sub-agent's approval outlives a real crash: process 1 runs a parent whose child asks for the
 * approval of a `never` tool and is SIGKILLed once the parent's log shows the `child` request;
 * the parent is then resumed by its id alone, elsewhere, and the reply reaches the child. Kills
 * later on (while the approved tool runs, after the child ended) end the same way: the tool ran
 * once, and every byte a killed process wrote stays the start of each log.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeLog, innermostRequest, readRunLog, resume } from '../../../src/core/index.ts';
import type { InputRequestRecord, RunLogView } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { finished, waitForLine } from '../platform-node/helpers.ts';
import { crashFamily, pathsOf } from './crash-family.ts';

const dirs = sharedTempDirs();
/** crash-process.ts bundled into one file: each process starts in a fraction of what tsx takes. */
let bundle: string;
beforeAll(async () => {
  bundle = join(await dirs.make('polyloop-sub-crash-bundle-'), 'crash-process.mjs');
  const entryPoints = [resolve(import.meta.dirname, 'crash-process.ts')];
  await build({ entryPoints, bundle: true, platform: 'node', format: 'esm', outfile: bundle, logLevel: 'warning' });
});
const running: ChildProcessWithoutNullStreams[] = [];
// A process a failed assertion left running is killed when the file ends.
afterAll(() => {
  for (const p of running) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

type Logs = { readonly parent: Buffer; readonly child: Buffer; readonly childRunId: string };

function spawnProcess(root: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  const p = spawn(process.execPath, [bundle, root, ...args], { stdio: 'pipe' });
  running.push(p);
  return p;
}

/** The parent's log, and the log of the child `childRunId` (the one the parent's first request named). */
function logsOf(root: string, runId: string, childRunId = ''): Logs {
  const store = new FileStore({ dir: pathsOf(root).dir });
  const read = (id: string): Buffer =>
    existsSync(store.logPath(id)) ? readFileSync(store.logPath(id)) : Buffer.alloc(0);
  return { parent: read(runId), child: childRunId === '' ? Buffer.alloc(0) : read(childRunId), childRunId };
}

const viewOf = (bytes: Buffer): RunLogView => readRunLog(decodeLog(bytes.toString('utf8')).records);

/** The complete lines of a log another process is writing. */
const recordsSoFar = (bytes: Buffer): Array<{ kind: string }> =>
  bytes
    .toString('utf8')
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line) as { kind: string });

/** Lines the marker file has: one per run of the child's `note` tool. */
const noteRuns = (root: string): string[] => {
  const { marker } = pathsOf(root);
  return existsSync(marker) ? readFileSync(marker, 'utf8').split('\n').slice(0, -1) : [];
};

/** SIGKILL `p` and wait until it is gone. */
async function kill(p: ChildProcessWithoutNullStreams, end: ReturnType<typeof finished>): Promise<void> {
  process.kill(p.pid as number, 'SIGKILL');
  expect((await end).signal).toBe('SIGKILL');
}

/** Process 1: start the parent, SIGKILL it once its log shows the child's approval request `s0.c0`. */
async function startAndKillWhenAsked(root: string, runId: string): Promise<Logs> {
  const p = spawnProcess(root, [runId, 'start']);
  const end = finished(p);
  let asked: InputRequestRecord | undefined;
  while (asked === undefined) {
    if (p.exitCode !== null) throw new Error(`process 1 ended: ${JSON.stringify(await end)}`);
    const records = recordsSoFar(logsOf(root, runId).parent);
    asked = records.find((r): r is InputRequestRecord => r.kind === 'input_request');
    if (asked === undefined) await new Promise((r) => setTimeout(r, 5));
  }
  await kill(p, end);
  expect(asked.resultId).toBe('s0.c0');
  expect(asked.request.kind).toBe('child');
  expect(asked.request.child?.request).toMatchObject({ kind: 'approval', resultId: 's0.input' });
  expect(noteRuns(root)).toEqual([]);
  const logs = logsOf(root, runId, asked.request.child?.runId);
  expect(viewOf(logs.child).state).toBe('awaiting_input');
  return logs;
}

/** Process 2: approve `s0.c0`, SIGKILLed once it prints `HELD <what>` (the hold file is removed then). */
async function approveAndKillAt(root: string, runId: string, what: 'note' | 'parent-step'): Promise<void> {
  const hold = join(root, `hold-${what}`);
  writeFileSync(hold, '');
  const p = spawnProcess(root, [runId, 'approve', 's0.c0']);
  const end = finished(p);
  await waitForLine(p, new RegExp(`^HELD ${what}$`));
  await kill(p, end);
  rmSync(hold);
}

/** Both runs ended with a final answer; `before`'s bytes start each log; `note` ran once. */
function expectBothFinished(root: string, runId: string, before: Logs): void {
  const after = logsOf(root, runId, before.childRunId);
  expect(after.parent.subarray(0, before.parent.length).equals(before.parent)).toBe(true);
  expect(after.child.subarray(0, before.child.length).equals(before.child)).toBe(true);
  const parent = viewOf(after.parent);
  const child = viewOf(after.child);
  expect(parent.ended).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'parent done' });
  expect(child.ended).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'the answer is 42' });
  expect(parent.trajectory[0]).toMatchObject({ observation: 'the answer is 42', childRunId: before.childRunId });
  expect(child.trajectory[0]?.actionStatus).toBe('executed');
  expect(noteRuns(root)).toEqual(['found it']);
}

describe("a sub-agent's approval across a SIGKILL of the process that asked", () => {
  it('is answered by a second process resuming the parent by id: both runs end, the never tool runs once', async () => {
    const root = await dirs.make('polyloop-sub-crash-');
    const before = await startAndKillWhenAsked(root, 'p1');
    const p = spawnProcess(root, ['p1', 'approve', 's0.c0']);
    const end = finished(p);
    const done = await end;
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout.trim().replace(/^RESULT /, ''))).toEqual({
      stopReason: 'final_answer',
      pending: null,
    });
    expectBothFinished(root, 'p1', before);
  });

  it(
    'killed again while the approved tool runs, is settled through the parent (executed): ' +
      'the tool does not run twice',
    async () => {
      const root = await dirs.make('polyloop-sub-crash-');
      const before = await startAndKillWhenAsked(root, 'p2');
      await approveAndKillAt(root, 'p2', 'note');
      expect(noteRuns(root)).toEqual(['found it']);
      const mid = logsOf(root, 'p2', before.childRunId);
      expect(viewOf(mid.child).inFlight).not.toBeNull();

      const { parent } = crashFamily(root);
      const asked = await resume(parent, 'p2');
      expect(asked.stopReason).toBe('awaiting_input');
      expect(asked.pending).toMatchObject({ kind: 'child', resultId: 's0.c1', child: { runId: before.childRunId } });
      const settle = innermostRequest(asked.pending as NonNullable<typeof asked.pending>);
      expect(settle).toMatchObject({ kind: 'settle', target: 'action' });
      expect(settle.decision?.action).toMatchObject({
        kind: 'tool_call',
        name: 'note',
        arguments: { text: 'found it' },
      });
      expect(noteRuns(root)).toEqual(['found it']);

      const input = { kind: 'executed', resultId: 's0.c1', observation: 'noted found it' } as const;
      const done = await resume(parent, 'p2', { input });
      expect(done.stopReason).toBe('final_answer');
      expectBothFinished(root, 'p2', before);
      const after = logsOf(root, 'p2', before.childRunId);
      expect(after.parent.subarray(0, mid.parent.length).equals(mid.parent)).toBe(true);
      expect(after.child.subarray(0, mid.child.length).equals(mid.child)).toBe(true);
      expect(viewOf(after.child).trajectory[0]?.observation).toBe('noted found it');
    },
  );

  it('killed again after the child ended, before the parent wrote its step, ends on resume asking no one', async () => {
    const root = await dirs.make('polyloop-sub-crash-');
    const before = await startAndKillWhenAsked(root, 'p3');
    await approveAndKillAt(root, 'p3', 'parent-step');
    const mid = logsOf(root, 'p3', before.childRunId);
    expect(viewOf(mid.child).ended?.stopReason).toBe('final_answer');
    expect(viewOf(mid.parent).trajectory).toEqual([]);

    const { parent } = crashFamily(root);
    const done = await resume(parent, 'p3');
    expect(done.stopReason).toBe('final_answer');
    expectBothFinished(root, 'p3', before);
    const after = logsOf(root, 'p3', before.childRunId);
    // The child had ended: its log is untouched, and the parent read its answer from it.
    expect(after.child.equals(mid.child)).toBe(true);
    expect(after.parent.subarray(0, mid.parent.length).equals(mid.parent)).toBe(true);
  });
});
