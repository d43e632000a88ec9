/**
 * FileStore while it holds a run's lease (decision 0041): the log stays open from the first
 * append to the release (or `run_ended`), every acknowledged record is in the file at once, a
 * big record goes through the thread pool, and what is planted at the log path meanwhile is
 * never written through.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink, rename, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/core/index.ts';
import type { ActionIntentRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import {
  actionIntent,
  ended,
  modelIntent,
  modelResult,
  started,
  stepWrite,
} from '../../contract/run-store.contract.ts';
import { machineHas } from '../../support/machine.ts';
import { tempDir } from '../../support/temp-dir.ts';

async function freshStore(): Promise<FileStore> {
  const dir = await tempDir();
  return new FileStore({ dir, onWarning: () => undefined });
}

/** How many descriptors of this process are open on `path` (Linux: /proc/self/fd). */
async function openCount(path: string): Promise<number> {
  let n = 0;
  for (const fd of await readdir('/proc/self/fd')) {
    if ((await readlink(`/proc/self/fd/${fd}`).catch(() => '')) === path) n++;
  }
  return n;
}

const linux = machineHas(
  existsSync('/proc/self/fd'),
  'the descriptors FileStore keeps open are counted in /proc/self/fd (Linux)',
);

describe('FileStore under a lease', () => {
  it.runIf(linux)(
    'keeps one descriptor of the log open from the first append to the release, and none after',
    async () => {
      const store = await freshStore();
      const path = store.logPath('r');
      const release = await store.acquire('r', {});
      await store.runStarted('r', started('r'));
      expect(await openCount(path)).toBe(1);
      await store.intent('r', modelIntent(0));
      await store.resultAndIntent('r', modelResult(0), actionIntent(0) as ActionIntentRecord);
      await store.step('r', stepWrite(0));
      expect(await openCount(path)).toBe(1);
      await release();
      expect(await openCount(path)).toBe(0);
      await release(); // idempotent
      expect((await store.readLog('r')).map((x) => x.kind)).toEqual([
        'run_started',
        'intent',
        'result',
        'intent',
        'step',
      ]);
    },
  );

  it.runIf(linux)('closes the log at run_ended, before the release', async () => {
    const store = await freshStore();
    const release = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    await store.runEnded('r', ended(0));
    expect(await openCount(store.logPath('r'))).toBe(0);
    await release();
  });

  it('has every record whose promise resolved in the file at once, for any other reader (a process crash keeps it)', async () => {
    const store = await freshStore();
    const release = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    await store.intent('r', modelIntent(0));
    const other = new FileStore({ dir: store.dir });
    expect((await other.readLog('r')).map((x) => x.kind)).toEqual(['run_started', 'intent']);
    await store.result('r', 's0.model', modelResult(0));
    expect(await other.readLog('r')).toHaveLength(3);
    await release();
  });

  it('writes a record over 64 KiB whole, in order with the small ones around it', async () => {
    const store = await freshStore();
    const release = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    const big = 'é'.repeat(300_000);
    await store.resultAndIntent('r', modelResult(0, big), actionIntent(0) as ActionIntentRecord);
    await store.step('r', stepWrite(0, big));
    await release();
    const log = await store.readLog('r');
    expect(log.map((x) => x.kind)).toEqual(['run_started', 'result', 'intent', 'step']);
    expect(log[1]?.kind === 'result' && log[1].reply.text).toBe(big);
  });

  it('never writes through a link planted at the log path after the log was opened: the lease keeps appending to its own file', async () => {
    const store = await freshStore();
    const victim = join(store.dir, 'victim.txt');
    await writeFile(victim, 'untouched\n');
    const release = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    // Someone with write access to the directory moves the log away and plants a link in its place.
    await rename(store.logPath('r'), join(store.dir, 'moved.jsonl'));
    await symlink(victim, store.logPath('r'));
    // The record went to the file the lease opened, which is no longer the log: the write is refused (decision 0047).
    await expect(store.intent('r', modelIntent(0))).rejects.toThrow(/no longer at/);
    await release();
    expect(await readFile(victim, 'utf8')).toBe('untouched\n');
    expect((await readFile(join(store.dir, 'moved.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(2);
    // Without the lease, the next write opens the path again and refuses the link.
    await expect(store.intent('r', modelIntent(1))).rejects.toThrow(/symbolic link/);
  });

  it('refuses a barrier written after another process deleted the log: it resolves only if the record is in the file at the log path', async () => {
    const store = await freshStore();
    const release = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    await store.intent('r', modelIntent(0));
    await unlink(store.logPath('r'));
    const write = store.resultAndIntent('r', modelResult(0), actionIntent(0) as ActionIntentRecord);
    await expect(write).rejects.toBeInstanceOf(StoreError);
    await expect(write).rejects.toThrow(/no longer at/);
    await release();
  });

  it('refuses a record written after the log was replaced by a rename over it, and appends the next one to the replacement (tail checked)', async () => {
    const store = await freshStore();
    const release = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    // Another process rewrites the log atomically: a copy, renamed over the path.
    const copy = join(store.dir, 'copy.tmp');
    await writeFile(copy, await readFile(store.logPath('r')));
    await rename(copy, store.logPath('r'));
    await expect(store.result('r', 's0.model', modelResult(0))).rejects.toBeInstanceOf(StoreError);
    await store.intent('r', modelIntent(1));
    await release();
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started', 'intent']);
  });

  it('refuses a record written after the log was moved away under the lease', async () => {
    const store = await freshStore();
    const release = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    await rename(store.logPath('r'), join(store.dir, 'archived.jsonl'));
    await expect(store.intent('r', modelIntent(0))).rejects.toBeInstanceOf(StoreError);
    await release();
  });

  it('acquired again by the same instance after a release, checks the tail again and appends on a fresh descriptor', async () => {
    const store = await freshStore();
    const first = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    await first();
    // Another process resumed the run and died mid-line.
    await writeFile(store.logPath('r'), `${await readFile(store.logPath('r'), 'utf8')}{"kind":"inte`);
    const second = await store.acquire('r', {});
    await store.intent('r', modelIntent(0));
    await second();
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started', 'intent']);
  });
});
