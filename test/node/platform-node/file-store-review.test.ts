/** Adversarial review cases for FileStore: each pins a bug that was found and fixed. */
import { spawnSync } from 'node:child_process';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPolyLoopError } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { modelIntent, modelResult, started, stepWrite } from '../../contract/run-store.contract.ts';
import { tempDir } from '../../support/temp-dir.ts';

async function freshDir(): Promise<string> {
  return tempDir();
}

describe('FileStore review: tails written by another driver', () => {
  it('repairs a torn tail left by another process before appending again after re-acquiring the run', async () => {
    const dir = await freshDir();
    const store = new FileStore({ dir, onWarning: () => undefined });
    const release = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    await release();
    // Another process took the run over, wrote half a record and was killed.
    await appendFile(store.logPath('r'), '{"v":"1.0","kind":"intent","inte');
    const again = await store.acquire('r', {});
    await store.readLog('r');
    await store.intent('r', modelIntent(0));
    await store.result('r', 's0.model', modelResult(0));
    await again();
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started', 'intent', 'result']);
    expect((await readFile(store.logPath('r'), 'utf8')).split('\n')).toHaveLength(4);
  });
});

describe('FileStore review: a lock whose pid was reused', () => {
  const lockOf = (extra: Record<string, unknown>): string =>
    JSON.stringify({ pid: process.pid, hostname: hostname(), acquiredAt: '2026-01-01T00:00:00.000Z', token: 'earlier-incarnation', runId: 'r', ...extra });

  /** This process's boot id and start time, as its own lock file records them. */
  async function myIdentity(store: FileStore): Promise<{ bootId?: string; startTime?: string }> {
    const release = await store.acquire('probe', {});
    const mine = JSON.parse(await readFile(store.lockPath('probe'), 'utf8')) as { startTime?: string; bootId?: string };
    await release();
    return { ...(mine.bootId ? { bootId: mine.bootId } : {}), ...(mine.startTime ? { startTime: mine.startTime } : {}) };
  }

  it.runIf(process.platform === 'linux')('takes over a lock left by an earlier process that had this same pid (a restarted container)', async () => {
    const store = new FileStore({ dir: await freshDir() });
    await store.runStarted('r', started('r'));
    const me = await myIdentity(store);
    await writeFile(store.lockPath('r'), lockOf({ bootId: me.bootId, startTime: '1' }));
    const release = await store.acquire('r', {});
    await release();
  });

  it.runIf(process.platform === 'linux')('recovers a stale lock whose breaker file was left by a process whose pid is now reused', async () => {
    const store = new FileStore({ dir: await freshDir() });
    const me = await myIdentity(store);
    const reused = lockOf({ pid: process.ppid, bootId: me.bootId, startTime: '1' });
    await writeFile(store.lockPath('r'), reused);
    await writeFile(`${store.lockPath('r')}.break`, reused);
    const release = await store.acquire('r', {});
    expect(JSON.parse(await readFile(store.lockPath('r'), 'utf8'))).toMatchObject({ pid: process.pid, bootId: me.bootId });
    await release();
  });

  it('refuses a lock with this pid and start time that this thread does not hold (a worker thread of this process)', async () => {
    const store = new FileStore({ dir: await freshDir() });
    await writeFile(store.lockPath('r'), lockOf(await myIdentity(store)));
    expect(isPolyLoopError(await store.acquire('r', {}).then(() => null, (e: unknown) => e), 'run_locked')).toBe(true);
  });

  it('still refuses a second acquire in this process while the first holds the run', async () => {
    const store = new FileStore({ dir: await freshDir() });
    const release = await store.acquire('r', {});
    const other = new FileStore({ dir: store.dir });
    expect(isPolyLoopError(await other.acquire('r', {}).then(() => null, (e: unknown) => e), 'run_locked')).toBe(true);
    await release();
  });

  it.runIf(process.platform === 'linux')('takes over a lock whose pid now belongs to an unrelated live process (start time differs)', async () => {
    const store = new FileStore({ dir: await freshDir() });
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
    await writeFile(store.lockPath('r'), lockOf({ pid: process.ppid, startTime: mine.startTime, bootId: 'another-boot' }));
    const third = await store.acquire('r', {});
    await third();
  });
});

describe('FileStore review: a damaged last line that ends with a newline', () => {
  it('repairs it before appending, as readers already drop it, instead of turning it into a corrupt middle line', async () => {
    const first = new FileStore({ dir: await freshDir(), onWarning: () => undefined });
    await first.runStarted('r', started('r'));
    // A power cut before the fsync: the size and the last page landed, the page before did not.
    await appendFile(first.logPath('r'), '{"v":"1.0","kind":"intent",\0\0\0\0\0\0"stepIndex":0}\n');
    const warnings: string[] = [];
    const store = new FileStore({ dir: first.dir, onWarning: (w) => void warnings.push(w.code) });
    const release = await store.acquire('r', {});
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started']);
    await store.intent('r', modelIntent(0));
    await release();
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started', 'intent']);
    expect(warnings).toContain('tail_truncated');
  });
});

describe('FileStore review: bytes that are not UTF-8', () => {
  it('rejects a complete line holding invalid UTF-8 as CorruptLogError naming the line, instead of reading U+FFFD into the record', async () => {
    const store = new FileStore({ dir: await freshDir(), onWarning: () => undefined });
    await store.runStarted('r', started('r'));
    await store.step('r', stepWrite(0, 'caf\u00e9'));
    await store.intent('r', modelIntent(1));
    const bytes = await readFile(store.logPath('r'));
    const at = bytes.indexOf(Buffer.from('caf\u00e9'));
    bytes[at + 3] = 0xff; // the first byte of "é" flipped into a byte UTF-8 never uses
    await writeFile(store.logPath('r'), bytes);
    const err = await store.readLog('r').then(() => null, (e: unknown) => e);
    expect(isPolyLoopError(err, 'corrupt_log')).toBe(true);
    expect((err as Error).message).toContain(`${store.logPath('r')}:2`);
  });

  it('drops a torn tail cut inside a multi-byte character and appends cleanly after it', async () => {
    const warnings: string[] = [];
    const first = new FileStore({ dir: await freshDir(), onWarning: () => undefined });
    await first.runStarted('r', started('r'));
    // The first process died inside "🚀"; a fresh one (a new instance) picks the run up.
    const store = new FileStore({ dir: first.dir, onWarning: (w) => void warnings.push(w.code) });
    const line = Buffer.from(JSON.stringify(stepWrite(0, '运行🚀')) + '\n');
    await appendFile(store.logPath('r'), line.subarray(0, line.indexOf(Buffer.from('🚀')) + 2));
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started']);
    await store.step('r', stepWrite(0, '运行🚀'));
    const log = await store.readLog('r');
    expect(log.map((x) => x.kind)).toEqual(['run_started', 'step']);
    expect(warnings).toEqual(['torn_tail', 'tail_truncated']);
  });
});

/** Whether strace can trace a child here (installed, and ptrace allowed in this container). */
const straceWorks = ((): boolean => {
  const r = spawnSync('strace', ['-f', '-e', 'trace=none', '-o', '/dev/null', 'true'], { stdio: 'ignore' });
  return r.status === 0;
})();

/** The paths fsynced (in order) before the traced child printed `marker`, from `strace -f` output. */
function fsyncedBefore(trace: string, marker: string): string[] {
  const fdPath = new Map<string, string>();
  const synced: string[] = [];
  for (const line of trace.split('\n')) {
    const open = /openat\(AT_FDCWD, "([^"]+)",[^)]*\) = (\d+)/.exec(line);
    if (open) fdPath.set(open[2] as string, open[1] as string);
    const sync = /\b(?:fsync|fdatasync)\((\d+)/.exec(line);
    if (sync) synced.push(fdPath.get(sync[1] as string) ?? `fd ${sync[1] as string}`);
    if (line.includes(`write(1, "${marker}`)) return synced;
  }
  throw new Error(`the trace has no write of ${marker}`);
}

/** Run the first-barrier fixture under strace; the paths it fsynced before the barrier resolved. */
async function traceFirstBarrier(dir: string, traceFile: string, args: readonly string[]): Promise<string[]> {
  const fixture = resolve(import.meta.dirname, 'fixtures/first-barrier.ts');
  const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat,fsync,fdatasync,write', '-s', '64', '-o', traceFile, process.execPath, '--import', 'tsx', fixture, dir, ...args], { encoding: 'utf8' });
  expect(r.stdout).toBe('barrier-resolved\n');
  return fsyncedBefore(await readFile(traceFile, 'utf8'), 'barrier-resolved');
}

describe('FileStore review: what is fsynced before the first barrier resolves', () => {
  it.runIf(straceWorks)('fsyncs the directory at the first barrier of an instance that found the log already created by another one', async () => {
    const root = await freshDir();
    const dir = join(root, 'logs');
    const synced = await traceFirstBarrier(dir, join(root, 'trace.txt'), ['handover']);
    expect(synced).toContain(new FileStore({ dir }).logPath('r'));
    expect(synced).toContain(dir);
  });

  it.runIf(straceWorks)('fsyncs the log, its directory and the parents of every directory it created', async () => {
    const root = await freshDir();
    const dir = join(root, 'new', 'logs');
    const traceFile = join(root, 'trace.txt');
    const synced = await traceFirstBarrier(dir, traceFile, []);
    const log = new FileStore({ dir }).logPath('r');
    expect(synced).toContain(log);
    expect(synced).toContain(dir);
    expect(synced).toContain(dirname(dir));
    expect(synced).toContain(root);
  });
});

describe('FileStore review: a record JSON cannot carry', () => {
  it('rejects the returned promise instead of throwing synchronously, and writes nothing', async () => {
    const store = new FileStore({ dir: await freshDir() });
    await store.runStarted('r', started('r'));
    const bad = { ...modelIntent(0), extra: 10n } as unknown as ReturnType<typeof modelIntent>;
    let returned: Promise<void> | null = null;
    expect(() => {
      returned = store.intent('r', bad);
    }).not.toThrow();
    await expect(returned).rejects.toThrow(TypeError);
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started']);
  });
});
