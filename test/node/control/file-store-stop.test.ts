/**
 * FileStore's stop request and the lease's `lost` signal, with real files and real processes: a
 * stop written by one process reaches the lease holder in another, a stop asked while no one holds
 * the lease is there at the next `acquire`, a lock file taken from under a lease loses it, and the
 * stop file is as hardened as the log (no link followed, a damaged one still a stop).
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, readdir, readFile, readlink, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isPolyLoopError, LeaseLostError, requestStop, StopRequestedError } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { started } from '../../contract/run-store.contract.ts';
import { machineHas } from '../../support/machine.ts';
import { sharedTempDirs, tempDir } from '../../support/temp-dir.ts';
import { finished, waitForLine } from '../platform-node/helpers.ts';
import { parseTrace, traceRun } from '../platform-node/power-loss/trace.ts';

const straceWorks = machineHas(
  spawnSync('strace', ['-f', '-e', 'trace=none', '-o', '/dev/null', 'true'], { stdio: 'ignore' }).status === 0,
  'the stop file’s fsyncs are read from strace: install strace (in a container, allow ptrace)',
);

const dirs = sharedTempDirs();
/** stop-process.ts bundled into one file: each process starts in a fraction of what tsx takes. */
let bundle: string;
beforeAll(async () => {
  bundle = join(await dirs.make('polyloop-stop-bundle-'), 'stop-process.mjs');
  const entryPoints = [resolve(import.meta.dirname, 'stop-process.ts')];
  await build({ entryPoints, bundle: true, platform: 'node', format: 'esm', outfile: bundle, logLevel: 'warning' });
});
const running: ChildProcessWithoutNullStreams[] = [];
afterAll(() => {
  for (const p of running) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});
afterEach(() => void vi.useRealTimers());

function second(dir: string, runId: string, ...args: string[]): ChildProcessWithoutNullStreams {
  const p = spawn(process.execPath, [bundle, dir, runId, ...args], { stdio: 'pipe' });
  running.push(p);
  return p;
}

/** A store whose run `runId` has a log (a stop is asked only of a run that started). */
async function withRun(runId = 'r'): Promise<FileStore> {
  const store = new FileStore({ dir: await tempDir('polyloop-stop-'), onWarning: () => undefined });
  await store.runStarted(runId, started(runId));
  return store;
}

/** The reason `lost` aborts with (it may be aborted already). */
function lostReason(lost: AbortSignal | undefined): Promise<unknown> {
  if (!lost) throw new Error('the release carries no lost signal');
  return new Promise((done) => {
    if (lost.aborted) done(lost.reason);
    lost.addEventListener('abort', () => done(lost.reason), { once: true });
  });
}

describe('FileStore.requestStop', () => {
  it('writes the stop file beside the log, a regular file naming the run and the reason, and leaves no temporary file', async () => {
    const store = await withRun('r');
    await requestStop(store, 'r', 'the customer cancelled');
    expect(dirname(store.stopPath('r'))).toBe(store.dir);
    expect((await stat(store.stopPath('r'))).isFile()).toBe(true);
    expect(JSON.parse(await readFile(store.stopPath('r'), 'utf8'))).toMatchObject({
      runId: 'r',
      reason: 'the customer cancelled',
    });
    expect((await readdir(store.dir)).sort()).toEqual(
      [store.logPath('r'), store.stopPath('r')].map((p) => p.slice(store.dir.length + 1)).sort(),
    );
  });

  it.runIf(straceWorks)(
    'makes the stop durable before it resolves: the new file written and fsynced, renamed into place, the directory fsynced',
    async () => {
      const store = await withRun('r');
      const side = await tempDir('polyloop-stop-trace-');
      const layout = { root: store.dir, world: join(side, 'world'), acks: join(side, 'acks') };
      const { trace, stdout } = await traceRun(
        [process.execPath, bundle, store.dir, 'r', 'request', 'durable'],
        join(side, 'trace.txt'),
      );
      expect(stdout).toBe('REQUESTED\n');
      const events = parseTrace(trace, layout);
      const stopName = store.stopPath('r').slice(store.dir.length + 1);
      const renamed = events.findIndex((e) => e.kind === 'rename' && e.to === stopName);
      expect(renamed).toBeGreaterThan(0);
      const from = (events[renamed] as { from: string }).from;
      const created = events.find((e) => e.kind === 'create' && e.path === from) as { ino: number } | undefined;
      const before = events.slice(0, renamed);
      const wrote = before.findIndex((e) => e.kind === 'write' && e.ino === created?.ino);
      const synced = before.findIndex((e) => e.kind === 'fsync' && e.ino === created?.ino);
      expect(wrote).toBeGreaterThanOrEqual(0);
      expect(synced).toBeGreaterThan(wrote);
      expect(events.slice(renamed + 1).some((e) => e.kind === 'fsyncDir' && e.path === '')).toBe(true);
    },
  );

  it('keeps the stop file of a hostile run id inside the directory, under the name its log has', async () => {
    const id = '../../escape/\u0000 CON';
    const store = await withRun(id);
    await store.requestStop(id, { reason: 'stop' });
    expect(dirname(store.stopPath(id))).toBe(store.dir);
    expect(store.stopPath(id).replace(/\.stop$/, '')).toBe(store.logPath(id).replace(/\.jsonl$/, ''));
    expect((await stat(store.stopPath(id))).isFile()).toBe(true);
  });

  it('replaces a link planted at the stop path instead of writing through it, and leaves its target alone', async () => {
    const store = await withRun('r');
    const victim = join(store.dir, 'victim.txt');
    await writeFile(victim, 'precious');
    await symlink(victim, store.stopPath('r'));
    await store.requestStop('r', { reason: 'stop' });
    expect(await readFile(victim, 'utf8')).toBe('precious');
    expect(JSON.parse(await readFile(store.stopPath('r'), 'utf8'))).toMatchObject({ reason: 'stop' });
  });

  it('refuses a directory planted at the stop path with a StoreError naming it', async () => {
    const store = await withRun('r');
    await mkdir(store.stopPath('r'));
    const e = await store.requestStop('r', { reason: 'stop' }).catch((x: unknown) => x);
    expect(isPolyLoopError(e, 'store_error')).toBe(true);
    expect(String((e as Error).message)).toContain(store.stopPath('r'));
    expect((await readdir(store.dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('the lease’s lost signal', () => {
  it('is already aborted with StopRequestedError and the reason when a stop was asked while no driver ran', async () => {
    const store = await withRun('r');
    await requestStop(store, 'r', 'asked overnight');
    const release = await new FileStore({ dir: store.dir }).acquire('r', {});
    const reason = await lostReason(release.lost);
    expect(reason).toBeInstanceOf(StopRequestedError);
    expect((reason as StopRequestedError).stop).toEqual({ reason: 'asked overnight' });
    await release();
  });

  it('is not aborted while nothing was asked', async () => {
    const store = await withRun('r');
    const release = await store.acquire('r', {});
    expect(release.lost?.aborted).toBe(false);
    await release();
  });

  it('aborts with StopRequestedError when another process asks the run to stop', async () => {
    const store = await withRun('r');
    const release = await store.acquire('r', {});
    const p = second(store.dir, 'r', 'request', 'from the other process');
    const done = finished(p);
    const reason = await lostReason(release.lost);
    expect(reason).toBeInstanceOf(StopRequestedError);
    expect((reason as StopRequestedError).stop).toEqual({ reason: 'from the other process' });
    expect((await done).code).toBe(0);
    await release();
  });

  it('reaches a lease holder in another process when this one asks', async () => {
    const store = await withRun('r');
    const p = second(store.dir, 'r', 'hold');
    await waitForLine(p, /^HELD$/);
    const done = finished(p);
    await requestStop(store, 'r', 'from here');
    const { code, stdout } = await done;
    expect(code).toBe(0);
    expect(JSON.parse(stdout.replace(/^[\s\S]*LOST /, ''))).toEqual({
      name: 'StopRequestedError',
      code: 'stop_requested',
      stop: { reason: 'from here' },
    });
  });

  it('aborts at once, before requestStop resolves, when the instance holding the lease is asked', async () => {
    const store = await withRun('r');
    const release = await store.acquire('r', {});
    await store.requestStop('r', { reason: 'same process' });
    expect(release.lost?.aborted).toBe(true);
    expect(release.lost?.reason).toMatchObject({ code: 'stop_requested', stop: { reason: 'same process' } });
    await release();
  });

  it('aborts with LeaseLostError when the lock file is removed from under the lease', async () => {
    const store = await withRun('r');
    const release = await store.acquire('r', {});
    await unlink(store.lockPath('r'));
    const reason = await lostReason(release.lost);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect((reason as Error).message).toContain(store.lockPath('r'));
    await release();
  });

  it('aborts with LeaseLostError when another holder’s lock replaces this lease’s', async () => {
    const store = await withRun('r');
    const release = await store.acquire('r', {});
    const mine = JSON.parse(await readFile(store.lockPath('r'), 'utf8')) as Record<string, unknown>;
    await unlink(store.lockPath('r'));
    await writeFile(store.lockPath('r'), `${JSON.stringify({ ...mine, pid: 1, token: 'someone-else' })}\n`);
    const reason = await lostReason(release.lost);
    expect(isPolyLoopError(reason, 'lease_lost')).toBe(true);
    expect((reason as Error).message).toContain('pid 1');
    await release();
  });

  it.each([
    ['is not JSON', 'garbage\u0000\u00ff'],
    ['names another run', `${JSON.stringify({ runId: 'other', reason: 'not yours' })}\n`],
    ['is longer than any stop file', `${JSON.stringify({ runId: 'r', reason: 'x'.repeat(70_000) })}\n`],
    ['is empty', ''],
  ])('treats a stop file that %s as a stop without a reason', async (_what, content) => {
    const store = await withRun('r');
    await writeFile(store.stopPath('r'), content);
    const release = await store.acquire('r', {});
    const reason = await lostReason(release.lost);
    expect(reason).toBeInstanceOf(StopRequestedError);
    expect((reason as StopRequestedError).stop).toEqual({});
    await release();
  });

  it('treats a link or a directory planted at the stop path as a stop without a reason, and follows no link', async () => {
    const store = await withRun('r');
    const victim = join(store.dir, 'victim.json');
    await writeFile(victim, JSON.stringify({ runId: 'r', reason: 'read through a link' }));
    await symlink(victim, store.stopPath('r'));
    const first = await store.acquire('r', {});
    expect(((await lostReason(first.lost)) as StopRequestedError).stop).toEqual({});
    await first();
    expect(await readlink(store.stopPath('r'))).toBe(victim);
    await unlink(store.stopPath('r'));
    await mkdir(store.stopPath('r'));
    const second = await store.acquire('r', {});
    expect(((await lostReason(second.lost)) as StopRequestedError).stop).toEqual({});
    await second();
  });

  it('ignores and removes a stop file beside a run without a log (an earlier run of the same id), and runStarted removes one too', async () => {
    const dir = await tempDir('polyloop-stop-');
    const store = new FileStore({ dir });
    await mkdir(dir, { recursive: true });
    await writeFile(store.stopPath('reused'), `${JSON.stringify({ runId: 'reused', reason: 'old run' })}\n`);
    const release = await store.acquire('reused', {});
    expect(release.lost?.aborted).toBe(false);
    await expect(stat(store.stopPath('reused'))).rejects.toMatchObject({ code: 'ENOENT' });
    await release();
    await writeFile(store.stopPath('reused'), `${JSON.stringify({ runId: 'reused', reason: 'old run' })}\n`);
    await store.runStarted('reused', started('reused'));
    await expect(stat(store.stopPath('reused'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('looks with one timer while the lease is held, and the release ends it', async () => {
    const store = await withRun('r');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const release = await store.acquire('r', {});
    expect(vi.getTimerCount()).toBe(1);
    await release();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps no process alive: a process holding a lease and doing nothing more ends by itself', async () => {
    const store = await withRun('r');
    const p = second(store.dir, 'r', 'idle');
    const { code, stdout } = await finished(p);
    expect(stdout).toBe('HELD\n');
    expect(code).toBe(0);
  });
});
