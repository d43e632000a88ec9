import { spawn } from 'node:child_process';
import { appendFile, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CorruptLogError, encodeRecord, isPolyLoopError } from '../../../src/core/index.ts';
import { FileStore, parseRunFileName, runIdFileName } from '../../../src/platform-node/index.ts';
import type { FileStoreWarning } from '../../../src/platform-node/index.ts';
import { modelIntent, modelResult, runStoreContract, started, stepWrite, writeFullRun } from '../../contract/run-store.contract.ts';
import { finished, spawnTs, waitForLine } from './helpers.ts';
import { tempDir } from '../../support/temp-dir.ts';

const here = dirname(fileURLToPath(import.meta.url));

async function freshStore(onWarning?: (w: FileStoreWarning) => void): Promise<FileStore> {
  const dir = await tempDir();
  return new FileStore(onWarning ? { dir, onWarning } : { dir });
}

runStoreContract('FileStore', () => freshStore(() => undefined), { lease: 'refuses' });

const HOSTILE = ['../../etc/passwd', 'a/b', 'a\\b', 'CON', 'con', 'NUL', 'nul.txt', '.', '..', '', ' ', 'ünïcødé-运行-🚀', 'x'.repeat(5000), 'A', 'a', '\uD800', '\uFFFD', '\u0000', 'a\nb'];

describe('FileStore run ids', () => {
  it.each(HOSTILE.map((id) => [JSON.stringify(id.slice(0, 30)), id]))('keeps the id %s inside dir, as a name of [0-9a-f-] only', async (_label, id) => {
    const store = await freshStore();
    const path = store.logPath(id);
    expect(dirname(path)).toBe(store.dir);
    expect(runIdFileName(id)).toMatch(/^[rh]-[0-9a-f]*\.jsonl$/);
    expect(runIdFileName(id).length).toBeLessThanOrEqual(255 - '.lock.break'.length);
    await store.runStarted(id, started(id));
    expect(await readdir(store.dir)).toEqual([runIdFileName(id)]);
  });

  it('gives every hostile id its own file (no collisions, also case-insensitively)', () => {
    const names = HOSTILE.map((id) => runIdFileName(id).toLowerCase());
    expect(new Set(names).size).toBe(HOSTILE.length);
  });

  it('reads a short id back from its file name and refuses names it did not write', () => {
    for (const id of ['run-1', '', 'ünïcødé-运行-🚀', '../../etc/passwd']) expect(parseRunFileName(runIdFileName(id))).toEqual({ form: 'reversible', runId: id });
    expect(parseRunFileName(runIdFileName('x'.repeat(5000)))).toMatchObject({ form: 'hashed' });
    for (const name of ['r-zz.jsonl', 'r-abc.jsonl', 'notes.txt', 'r-c0af.jsonl', 'r-41.jsonl.lock']) expect(parseRunFileName(name)).toBeNull();
  });
});

describe('FileStore logs on disk', () => {
  it('makes its directory again when it was removed between writes, and keeps appending', async () => {
    const store = await freshStore();
    await store.runStarted('r', started('r'));
    await rm(store.dir, { recursive: true });
    await store.intent('r', modelIntent(0));
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['intent']);
    await store.result('r', 's0.model', modelResult(0));
    expect(await store.readLog('r')).toHaveLength(2);
  });

  it('writes one JSON line per record, the step write included', async () => {
    const store = await freshStore();
    const written = await writeFullRun(store, 'r');
    const lines = (await readFile(store.logPath('r'), 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toEqual(written.map((rec) => encodeRecord(rec)));
  });

  it('serializes concurrent writes to one run in call order', async () => {
    const store = await freshStore();
    const writes = [store.runStarted('r', started('r'))];
    for (let i = 0; i < 40; i++) writes.push(store.intent('r', modelIntent(i)), store.result('r', `s${i}.model`, modelResult(i, 'x'.repeat(i * 500))));
    await Promise.all(writes);
    const log = await store.readLog('r');
    expect(log).toHaveLength(81);
    expect(log.slice(1).map((r) => (r.kind === 'intent' || r.kind === 'result' ? `${r.kind}${r.stepIndex}` : r.kind))).toEqual(
      Array.from({ length: 40 }, (_, i) => [`intent${i}`, `result${i}`]).flat(),
    );
  });

  it('ignores a torn last line on read and reports it as a warning', async () => {
    const warnings: FileStoreWarning[] = [];
    const store = await freshStore((w) => warnings.push(w));
    await store.runStarted('r', started('r'));
    await appendFile(store.logPath('r'), encodeRecord(modelIntent(0)).slice(0, 25));
    expect(await store.readLog('r')).toEqual([started('r')]);
    expect(warnings).toEqual([expect.objectContaining({ code: 'torn_tail', runId: 'r', line: 2, file: store.logPath('r') })]);
  });

  it('cuts a torn tail off before the next append, so the new line stands on its own', async () => {
    const warnings: FileStoreWarning[] = [];
    const dir = (await freshStore()).dir;
    await new FileStore({ dir }).runStarted('r', started('r'));
    const path = new FileStore({ dir }).logPath('r');
    await appendFile(path, '{"kind":"intent","v":"1.0","inte');
    const store = new FileStore({ dir, onWarning: (w) => warnings.push(w) });
    await store.intent('r', modelIntent(0));
    expect(await store.readLog('r')).toEqual([started('r'), modelIntent(0)]);
    expect(warnings.map((w) => w.code)).toEqual(['tail_truncated']);
    expect((await readFile(path, 'utf8')).split('\n')).toHaveLength(3);
  });

  it('keeps a complete last record that lost only its newline, and adds the newline', async () => {
    const warnings: FileStoreWarning[] = [];
    const dir = (await freshStore()).dir;
    const path = new FileStore({ dir }).logPath('r');
    await writeFile(path, encodeRecord(started('r')));
    const store = new FileStore({ dir, onWarning: (w) => warnings.push(w) });
    await store.intent('r', modelIntent(0));
    expect(await store.readLog('r')).toEqual([started('r'), modelIntent(0)]);
    expect(warnings.map((w) => w.code)).toEqual(['tail_newline_added']);
  });

  it('rejects a corrupt line in the middle with CorruptLogError naming file and line, leaving other runs readable', async () => {
    const store = await freshStore();
    await writeFullRun(store, 'good');
    const path = store.logPath('bad');
    await writeFile(path, [encodeRecord(started('bad')), '{"kind":"intent", garbage', encodeRecord(stepWrite(0)), ''].join('\n'));
    const err = await store.readLog('bad').then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptLogError);
    expect((err as CorruptLogError).line).toBe(2);
    expect((err as CorruptLogError).source).toBe(path);
    expect((err as Error).message).toContain(`${path}:2`);
    expect(await store.readLog('good')).toHaveLength(6);
    expect(await readFile(path, 'utf8')).toContain('garbage');
  });

  it('reads an empty log for a missing directory without creating it', async () => {
    const root = await tempDir();
    const store = new FileStore({ dir: join(root, 'not', 'yet') });
    expect(await store.readLog('r')).toEqual([]);
    await expect(stat(store.dir)).rejects.toThrow();
    await store.runStarted('r', started('r'));
    expect(await store.readLog('r')).toHaveLength(1);
  });

  it('refuses a missing or empty dir option with a clear error', () => {
    expect(() => new FileStore({ dir: '' })).toThrow('`dir` must be a non-empty path');
  });
});

describe('FileStore lock', () => {
  const holder = resolve(here, 'fixtures/hold-lock.ts');

  it('refuses a second process while the first holds the run, then recovers the lock once that process is SIGKILLed', async () => {
    const store = await freshStore();
    const child = spawnTs(holder, [store.dir, 'shared-run']);
    const line = await waitForLine(child, /^held \d+$/);
    const pid = Number(line.split(' ')[1]);
    expect(pid).toBe(child.pid);
    const refused = await store.acquire('shared-run', {}).then(() => null, (e: unknown) => e);
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
    await writeFile(store.lockPath('contested'), JSON.stringify({ pid: deadPid, hostname: hostname(), acquiredAt: '2026-01-01T00:00:00.000Z', token: 'dead', runId: 'contested' }));
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
    const stale = (token: string): string => JSON.stringify({ pid: dead.pid, hostname: hostname(), acquiredAt: '2026-01-01T00:00:00.000Z', token, runId: 'r' });
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
    await writeFile(store.lockPath('r'), JSON.stringify({ pid: 1, hostname: `${hostname()}-elsewhere`, acquiredAt: '2026-01-01T00:00:00.000Z', token: 't', runId: 'r' }));
    const err = await store.acquire('r', {}).then(() => null, (e: unknown) => e);
    expect(isPolyLoopError(err, 'run_locked')).toBe(true);
    expect((err as Error).message).toContain('delete the lock file');
  });

  it('treats an unreadable lock file as held while fresh and as stale once old', async () => {
    const store = await freshStore();
    await store.runStarted('r', started('r'));
    await writeFile(store.lockPath('r'), '');
    expect(isPolyLoopError(await store.acquire('r', {}).then(() => null, (e: unknown) => e), 'run_locked')).toBe(true);
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
    expect(isPolyLoopError(await store.acquire('r', {}).then(() => null, (e: unknown) => e), 'run_locked')).toBe(true);
    await second();
  });

  it('rejects with the abort reason when the signal is already aborted', async () => {
    const store = await freshStore();
    const ac = new AbortController();
    ac.abort(new Error('stop now'));
    await expect(store.acquire('r', { signal: ac.signal })).rejects.toThrow('stop now');
  });
});
