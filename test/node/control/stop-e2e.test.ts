/**
 * A stop that reaches the driver, end to end on FileStore: one process drives a run (stop-driver.ts),
 * a second one — the real `polyloop stop`, or `requestStop` in this test's process — asks it to stop
 * while it is inside a slow model call, inside a slow tool, waiting for approval, or while no
 * process drives it at all. Outcomes only: the run ends `cancelled` with the reason in `run_ended`,
 * the tool's signal aborted with `StopRequestedError`, nothing ran that should not have.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLog, requestStop } from '../../../src/core/index.ts';
import type { LogRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { sharedTempDirs, tempDir } from '../../support/temp-dir.ts';
import { finished, polyloop, waitForLine } from '../platform-node/helpers.ts';
import { pathsOf } from './stop-agent.ts';

const dirs = sharedTempDirs();
/** stop-driver.ts bundled into one file: each process starts in a fraction of what tsx takes. */
let bundle: string;
beforeAll(async () => {
  bundle = join(await dirs.make('polyloop-stop-e2e-bundle-'), 'stop-driver.mjs');
  const entryPoints = [resolve(import.meta.dirname, 'stop-driver.ts')];
  await build({ entryPoints, bundle: true, platform: 'node', format: 'esm', outfile: bundle, logLevel: 'warning' });
});
const running: ChildProcessWithoutNullStreams[] = [];
afterAll(() => {
  for (const p of running) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

type Result = { stopReason: string; stopRequest: { reason?: string } | null; pending: string | null };

function driver(root: string, ...args: string[]): ChildProcessWithoutNullStreams {
  const p = spawn(process.execPath, [bundle, root, 'run-1', ...args], { stdio: 'pipe' });
  running.push(p);
  return p;
}

/** The `RESULT` line of a driver that ran to its end. */
async function resultOf(end: ReturnType<typeof finished>): Promise<Result> {
  const { code, stdout, stderr } = await end;
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (code !== 0 || line === undefined) throw new Error(`driver failed (${code}): ${stdout} ${stderr}`);
  return JSON.parse(line.slice('RESULT '.length)) as Result;
}

const logOf = (root: string): Promise<readonly LogRecord[]> =>
  new FileStore({ dir: pathsOf(root).dir, onWarning: () => undefined }).readLog('run-1');
const linesOf = (file: string): string[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(0, -1) : [];
const endOf = (log: readonly LogRecord[]) => log.find((r) => r.kind === 'run_ended');

describe('a stop asked from another process (FileStore)', () => {
  it('ends a run inside a slow model call: polyloop stop names the driver, the run ends cancelled with the reason', async () => {
    const root = await tempDir('polyloop-stop-e2e-');
    const p = driver(root, 'start', 'model');
    const end = finished(p);
    await waitForLine(p, /^MODEL WAITING$/);
    const stop = await polyloop(['stop', pathsOf(root).dir, 'run-1', 'the customer cancelled']);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(`its driver (pid ${p.pid})`);
    expect(await resultOf(end)).toEqual({
      stopReason: 'cancelled',
      stopRequest: { reason: 'the customer cancelled' },
      pending: null,
    });
    const log = await logOf(root);
    expect(endOf(log)).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'the customer cancelled' } });
    expect(log.some((r) => r.kind === 'result')).toBe(false);
  });

  it('ends a run inside a slow tool: the handler’s signal aborts with StopRequestedError carrying the reason', async () => {
    const root = await tempDir('polyloop-stop-e2e-');
    const p = driver(root, 'start', 'tool');
    const end = finished(p);
    await waitForLine(p, /^TOOL WAITING$/);
    await requestStop(new FileStore({ dir: pathsOf(root).dir }), 'run-1', 'too slow');
    expect(await resultOf(end)).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'too slow' } });
    expect(linesOf(pathsOf(root).toolSaw).map((l) => JSON.parse(l) as unknown)).toEqual([
      { name: 'StopRequestedError', code: 'stop_requested', stop: { reason: 'too slow' } },
    ]);
    expect(endOf(await logOf(root))).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'too slow' } });
  });

  it('ends a run waiting for approval at its next resume: the approval given then is not carried out, the model not asked', async () => {
    const root = await tempDir('polyloop-stop-e2e-');
    const paths = pathsOf(root);
    expect(await resultOf(finished(driver(root, 'start', 'approval')))).toMatchObject({
      stopReason: 'awaiting_input',
      pending: 's0.input',
    });
    const stop = await polyloop(['stop', paths.dir, 'run-1', 'not needed any more']);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain('no process drives it now');
    const resumed = driver(root, 'resume', 'approve', 's0.input');
    expect(await resultOf(finished(resumed))).toEqual({
      stopReason: 'cancelled',
      stopRequest: { reason: 'not needed any more' },
      pending: null,
    });
    expect(linesOf(paths.paid)).toEqual([]);
    expect(linesOf(paths.modelCalls)).toEqual(['0']);
    const log = await logOf(root);
    expect(log.some((r) => r.kind === 'input')).toBe(false);
    expect(endOf(log)).toMatchObject({ stopRequest: { reason: 'not needed any more' } });
  });

  it('honours a stop asked while no process drives the run (its driver was killed inside a tool) before anything else at the next resume', async () => {
    const root = await tempDir('polyloop-stop-e2e-');
    const paths = pathsOf(root);
    const first = driver(root, 'start', 'tool');
    const firstEnd = finished(first);
    await waitForLine(first, /^TOOL WAITING$/);
    process.kill(first.pid as number, 'SIGKILL');
    expect((await firstEnd).signal).toBe('SIGKILL');
    const before = await logOf(root);
    const stop = await polyloop(['stop', paths.dir, 'run-1', 'after the crash']);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain('no process drives it now');
    const resumed = driver(root, 'resume');
    const end = finished(resumed);
    expect(await resultOf(end)).toEqual({
      stopReason: 'cancelled',
      stopRequest: { reason: 'after the crash' },
      pending: null,
    });
    expect((await end).stdout).not.toContain('TOOL WAITING');
    expect(linesOf(paths.toolSaw)).toEqual([]);
    expect(linesOf(paths.modelCalls)).toEqual(['0']);
    const log = await logOf(root);
    // The log is what the killed driver left, and the run's end: nothing ran in between.
    expect(log.slice(0, before.length)).toEqual(before);
    expect(log.slice(before.length).map((r) => r.kind)).toEqual(['run_ended']);
    expect(readRunLog(log).ended).toMatchObject({
      stopReason: 'cancelled',
      stopRequest: { reason: 'after the crash' },
    });
  });
});
