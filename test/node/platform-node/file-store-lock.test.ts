/**
 * The FileStore lock: one driver per run across processes, a stale lock taken over once (its
 * owner dead, or its pid reused by another process), held locks refused with how to clear them.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPolyLoopError } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { runIdFileName } from '../../../src/platform-node/run-id.ts';
import { started } from '../../contract/run-store.contract.ts';
import { machineHas } from '../../support/machine.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { finished, spawnTs, waitForLine } from './helpers.ts';

async function freshStore(): Promise<FileStore> {
  return new FileStore({ dir: await tempDir() });
}

describe('FileStore lock', () => {
  const holder = resolve(import.meta.dirname, 'fixtures/hold-lock.ts');

  it('refuses a second process while the first holds the run, then recovers the lock once that process is SIGKILLed', async () => {
    const store = await freshStore();
    const child = spawnTs(holder, [store.dir, 'shared-run']);
    const line = await waitForLine(child, /^held \d+$/);
    const pid = Number(line.split(' ')[1]);
    expect(pid).toBe(child.pid);
    const refused = await store.acquire('shared-run', {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(refused, 'run_locked')).toBe(true);
    expect((refused as Error).message).toContain(`pid ${pid} on ${hostname()}`);
    const exit = finished(child);
    child.kill('SIGKILL');
    expect((await exit).signal).toBe('SIGKILL');
    expect(await readdir(store.dir)).toContain(runIdFileName('shared-run').replace('.jsonl', '.lock'));
    const release = await store.acquire('shared-run', {});
    const owner = JSON.parse(await readFile(store.lockPath('shared-run'), 'utf8')) as { pid: number };
    expect(owner.pid).toBe(process.pid);
    await release();
    await expect(stat(store.lockPath('shared-run'))).rejects.toThrow();
  });

  it('lets exactly one of several processes take over a stale lock at once', async () => {
    const store = await freshStore();
    const dead = spawn(process.execPath, ['-e', '']);
    const deadPid = dead.pid as number;
    await new Promise((r) => dead.once('exit', r));
    await writeFile(
      store.lockPath('contested'),
      JSON.stringify({
        pid: deadPid,
        hostname: hostname(),
        acquiredAt: '2026-01-01T00:00:00.000Z',
        token: 'dead',
        runId: 'contested',
      }),
    );
    const children = [0, 1, 2].map(() => spawnTs(holder, [store.dir, 'contested']));
    const exits = children.map((c) => finished(c)); // listen for 'close' before any child can exit
    const outcomes = await Promise.all(
      children.map((child) => waitForLine(child, /^(held|refused) /).catch((e: unknown) => `error ${String(e)}`)),
    );
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(exits);
    expect(outcomes.filter((o) => o.startsWith('held'))).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'refused RunLockedError')).toHaveLength(2);
  });

  it('recovers a stale lock even when a recoverer died holding the breaker file', async () => {
    const store = await freshStore();
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => dead.once('exit', r));
    const stale = (token: string): string =>
      JSON.stringify({
        pid: dead.pid,
        hostname: hostname(),
        acquiredAt: '2026-01-01T00:00:00.000Z',
        token,
        runId: 'r',
      });
    await writeFile(store.lockPath('r'), stale('lock'));
    await writeFile(`${store.lockPath('r')}.break`, stale('breaker'));
    const release = await store.acquire('r', {});
    expect(await readdir(store.dir)).toEqual([runIdFileName('r').replace('.jsonl', '.lock')]);
    await release();
  });

  it('makes a second process get RunLockedError while this one holds the run', async () => {
    const store = await freshStore();
    const release = await store.acquire('mine', {});
    const child = spawnTs(holder, [store.dir, 'mine']);
    const done = finished(child);
    const result = await done;
    expect(result.stdout).toContain('refused RunLockedError');
    expect(result.code).toBe(3);
    await release();
  });

  it('refuses a lock held on another host, telling how to clear it', async () => {
    const store = await freshStore();
    await store.runStarted('r', started('r'));
    await writeFile(
      store.lockPath('r'),
      JSON.stringify({
        pid: 1,
        hostname: `${hostname()}-elsewhere`,
        acquiredAt: '2026-01-01T00:00:00.000Z',
        token: 't',
        runId: 'r',
      }),
    );
    const err = await store.acquire('r', {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(err, 'run_locked')).toBe(true);
    expect((err as Error).message).toContain('delete the lock file');
  });

  it('treats an unreadable lock file as held while fresh and as stale once old', async () => {
    const store = await freshStore();
    await store.runStarted('r', started('r'));
    await writeFile(store.lockPath('r'), '');
    expect(
      isPolyLoopError(
        await store.acquire('r', {}).then(
          () => null,
          (e: unknown) => e,
        ),
        'run_locked',
      ),
    ).toBe(true);
    const old = new Date(Date.now() - 60_000);
    await utimes(store.lockPath('r'), old, old);
    const release = await store.acquire('r', {});
    await release();
  });

  it('does not remove a lock someone else took after this one was released', async () => {
    const store = await freshStore();
    const release = await store.acquire('r', {});
    await release();
    const second = await store.acquire('r', {});
    await release();
    expect(
      isPolyLoopError(
        await store.acquire('r', {}).then(
          () => null,
          (e: unknown) => e,
        ),
        'run_locked',
      ),
    ).toBe(true);
    await second();
  });

  it('rejects with the abort reason when the signal is already aborted', async () => {
    const store = await freshStore();
    const ac = new AbortController();
    ac.abort(new Error('stop now'));
    await expect(store.acquire('r', { signal: ac.signal })).rejects.toThrow('stop now');
  });
});

describe('FileStore: a lock whose pid was reused', () => {
  // A lock tells a reused pid apart by the process start time and boot id, read from /proc.
  const linux = machineHas(
    process.platform === 'linux',
    'a lock whose pid was reused is told apart on Linux only (/proc start time and boot id)',
  );
  const lockOf = (extra: Record<string, unknown>): string =>
    JSON.stringify({
      pid: process.pid,
      hostname: hostname(),
      acquiredAt: '2026-01-01T00:00:00.000Z',
      token: 'earlier-incarnation',
      runId: 'r',
      ...extra,
    });

  /** This process's boot id and start time, as its own lock file records them. */
  async function myIdentity(store: FileStore): Promise<{ bootId?: string; startTime?: string }> {
    const release = await store.acquire('probe', {});
    const mine = JSON.parse(await readFile(store.lockPath('probe'), 'utf8')) as { startTime?: string; bootId?: string };
    await release();
    return {
      ...(mine.bootId ? { bootId: mine.bootId } : {}),
      ...(mine.startTime ? { startTime: mine.startTime } : {}),
    };
  }

  it.runIf(linux)(
    'takes over a lock left by an earlier process that had this same pid (a restarted container)',
    async () => {
      const store = new FileStore({ dir: await tempDir() });
      await store.runStarted('r', started('r'));
      const me = await myIdentity(store);
      await writeFile(store.lockPath('r'), lockOf({ bootId: me.bootId, startTime: '1' }));
      const release = await store.acquire('r', {});
      await release();
    },
  );

  it.runIf(linux)(
    'recovers a stale lock whose breaker file was left by a process whose pid is now reused',
    async () => {
      const store = new FileStore({ dir: await tempDir() });
      const me = await myIdentity(store);
      const reused = lockOf({ pid: process.ppid, bootId: me.bootId, startTime: '1' });
      await writeFile(store.lockPath('r'), reused);
      await writeFile(`${store.lockPath('r')}.break`, reused);
      const release = await store.acquire('r', {});
      expect(JSON.parse(await readFile(store.lockPath('r'), 'utf8'))).toMatchObject({
        pid: process.pid,
        bootId: me.bootId,
      });
      await release();
    },
  );

  it('refuses a lock with this pid and start time that this thread does not hold (a worker thread of this process)', async () => {
    const store = new FileStore({ dir: await tempDir() });
    await writeFile(store.lockPath('r'), lockOf(await myIdentity(store)));
    expect(
      isPolyLoopError(
        await store.acquire('r', {}).then(
          () => null,
          (e: unknown) => e,
        ),
        'run_locked',
      ),
    ).toBe(true);
  });

  it('still refuses a second acquire in this process while the first holds the run', async () => {
    const store = new FileStore({ dir: await tempDir() });
    const release = await store.acquire('r', {});
    const other = new FileStore({ dir: store.dir });
    expect(
      isPolyLoopError(
        await other.acquire('r', {}).then(
          () => null,
          (e: unknown) => e,
        ),
        'run_locked',
      ),
    ).toBe(true);
    await release();
  });

  it.runIf(linux)(
    'takes over a lock whose pid now belongs to an unrelated live process (start time differs)',
    async () => {
      const store = new FileStore({ dir: await tempDir() });
      await store.runStarted('r', started('r'));
      const release = await store.acquire('r', {});
      const mine = JSON.parse(await readFile(store.lockPath('r'), 'utf8')) as { startTime?: string; bootId?: string };
      await release();
      expect(typeof mine.startTime).toBe('string');
      expect(typeof mine.bootId).toBe('string');
      // The parent process is alive; a lock claiming its pid but another start time is stale.
      await writeFile(store.lockPath('r'), lockOf({ pid: process.ppid, startTime: '1', bootId: mine.bootId }));
      const again = await store.acquire('r', {});
      await again();
      // The same with a lock written before a reboot.
      await writeFile(
        store.lockPath('r'),
        lockOf({ pid: process.ppid, startTime: mine.startTime, bootId: 'another-boot' }),
      );
      const third = await store.acquire('r', {});
      await third();
    },
  );
});
