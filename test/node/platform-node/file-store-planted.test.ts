/**
 * A store directory may be shared and writable by others: whatever is planted at a log or lock path
 * — a symbolic link, a FIFO, a directory — is refused with a clear StoreError, never followed,
 * never waited on.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readlink, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeRecord, isPolyLoopError, run } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { inspectRun, listRuns } from '../../../src/cli/inspect.ts';
import { started } from '../../contract/run-store.contract.ts';
import { harness } from '../core/fixtures.ts';
import { tempDir } from '../../support/temp-dir.ts';

/** A store dir, plus a victim file outside it holding a valid log of another run. */
async function setup(): Promise<{ store: FileStore; victim: string; victimText: string }> {
  const root = await tempDir();
  const dir = join(root, 'runs');
  await mkdir(dir);
  const victim = join(root, 'victim.jsonl');
  const victimText = `${encodeRecord(started('elsewhere'))}\n`;
  await writeFile(victim, victimText);
  return { store: new FileStore({ dir, onWarning: () => undefined }), victim, victimText };
}

const errorOf = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

/** Fail instead of hanging when a FIFO blocks an open. */
const withinSeconds = <T>(p: Promise<T>, s = 5): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`still pending after ${s} s`)), s * 1000).unref()),
  ]);

describe('FileStore with something planted at a log path', () => {
  it('refuses a symlink planted at a log path: the run rejects with a clear StoreError and the link target is unchanged', async () => {
    const { store, victim, victimText } = await setup();
    await symlink(victim, store.logPath('run-1'));
    const h = harness({ store });
    const err = await errorOf(run(h.agent, h.request));
    expect(isPolyLoopError(err, 'store_error')).toBe(true);
    expect((err as Error).message).toMatch(/symbolic link, not a regular file/);
    expect(await readFile(victim, 'utf8')).toBe(victimText);
    expect(h.calls).toEqual([]);
  });

  it('refuses to append through a symlink at a log path, even after the tail was checked', async () => {
    const { store, victim, victimText } = await setup();
    await store.runStarted('r', started('r'));
    await execFileSync('ln', ['-sf', victim, store.logPath('r')]);
    const err = await errorOf(store.runStarted('r', started('r')));
    expect(isPolyLoopError(err, 'store_error')).toBe(true);
    expect(await readFile(victim, 'utf8')).toBe(victimText);
  });

  it('does not read a log through a symlink (a link to a log outside dir is an escape)', async () => {
    const { store, victim } = await setup();
    await symlink(victim, store.logPath('r'));
    const err = await errorOf(store.readLog('r'));
    expect(isPolyLoopError(err, 'store_error')).toBe(true);
    expect((err as Error).message).toContain(store.logPath('r'));
  });

  it('refuses a FIFO at a log path without hanging, for writes and reads', async () => {
    const { store } = await setup();
    execFileSync('mkfifo', [store.logPath('r')]);
    const write = await withinSeconds(errorOf(store.runStarted('r', started('r'))));
    expect(isPolyLoopError(write, 'store_error')).toBe(true);
    expect((write as Error).message).toMatch(/FIFO, not a regular file/);
    const read = await withinSeconds(errorOf(store.readLog('r')));
    expect(isPolyLoopError(read, 'store_error')).toBe(true);
  });

  it('refuses a directory at a log path with a clear StoreError', async () => {
    const { store } = await setup();
    await mkdir(store.logPath('r'));
    const err = await errorOf(store.runStarted('r', started('r')));
    expect(isPolyLoopError(err, 'store_error')).toBe(true);
    expect((err as Error).message).toMatch(/directory, not a regular file/);
  });
});

describe('FileStore with something planted at a lock path', () => {
  it('refuses a symlink planted at the lock path, leaves it and its target alone, even when the target looks stale', async () => {
    const { store, victim, victimText } = await setup();
    await symlink(victim, store.lockPath('r'));
    const old = new Date(Date.now() - 60_000);
    await utimes(victim, old, old); // an unreadable lock this old would be broken as stale
    const err = await errorOf(store.acquire('r', {}));
    expect(isPolyLoopError(err, 'store_error')).toBe(true);
    expect((err as Error).message).toMatch(/symbolic link, not a regular file/);
    expect(await readlink(store.lockPath('r'))).toBe(victim);
    expect(await readFile(victim, 'utf8')).toBe(victimText);
  });

  it('refuses a dangling symlink at the lock path with a clear StoreError', async () => {
    const { store, victim } = await setup();
    await symlink(`${victim}.missing`, store.lockPath('r'));
    const err = await errorOf(store.acquire('r', {}));
    expect(isPolyLoopError(err, 'store_error')).toBe(true);
    expect((err as Error).message).toMatch(/symbolic link/);
  });

  it('refuses a FIFO at the lock path without hanging', async () => {
    const { store } = await setup();
    execFileSync('mkfifo', [store.lockPath('r')]);
    const err = await withinSeconds(errorOf(store.acquire('r', {})));
    expect(isPolyLoopError(err, 'store_error')).toBe(true);
    expect((err as Error).message).toMatch(/FIFO/);
  });

  it('refuses a run whose lock path holds a symlink, and runs nothing', async () => {
    const { store, victim, victimText } = await setup();
    await symlink(victim, store.lockPath('run-1'));
    const h = harness({ store });
    const err = await errorOf(run(h.agent, h.request));
    expect(isPolyLoopError(err, 'store_error')).toBe(true);
    expect(h.model.calls).toEqual([]);
    expect(await readFile(victim, 'utf8')).toBe(victimText);
  });
});

describe('the inspector (polyloop runs / show) on planted files', () => {
  it('lists a symlinked or FIFO log with an error instead of following it or hanging', async () => {
    const { store, victim } = await setup();
    await store.runStarted('real', started('real'));
    await symlink(victim, store.logPath('linked'));
    execFileSync('mkfifo', [store.logPath('piped')]);
    const runs = await withinSeconds(listRuns(store.dir));
    const byId = new Map(runs.map((r) => [r.runId, r]));
    expect(byId.get('real')?.view?.state).toBe('at_boundary');
    expect(byId.get('linked')?.view).toBeNull();
    expect(byId.get('linked')?.error).toMatch(/symbolic link/);
    expect(byId.get('piped')?.error).toMatch(/FIFO/);
  });

  it("shows a symlinked log as an error, not the target's records", async () => {
    const { store, victim } = await setup();
    await symlink(victim, store.logPath('linked'));
    const shown = await withinSeconds(inspectRun(store.dir, 'linked'));
    expect(shown?.view).toBeNull();
    expect(shown?.error).toMatch(/symbolic link/);
  });
});
