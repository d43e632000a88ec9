/** FileStore: the run ids as file names, the logs on disk (torn, damaged and foreign tails, bytes that are not UTF-8), the store contract. */
import { appendFile, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CorruptLogError, encodeLog, encodeRecord, isPolyLoopError } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { parseRunFileName, runIdFileName } from '../../../src/platform-node/run-id.ts';
import type { FileStoreWarning } from '../../../src/platform-node/index.ts';
import {
  modelIntent,
  modelResult,
  runStoreContract,
  started,
  stepWrite,
  writeFullRun,
} from '../../contract/run-store.contract.ts';
import { tempDir } from '../../support/temp-dir.ts';

async function freshStore(onWarning?: (w: FileStoreWarning) => void): Promise<FileStore> {
  const dir = await tempDir();
  return new FileStore(onWarning ? { dir, onWarning } : { dir });
}

// A refusal reads the lock file and looks up its pid: on a loaded 2-core machine that took over the
// default 50 ms once, so the wait is watched longer; a store that waited instead still fails.
runStoreContract('FileStore', () => freshStore(() => undefined), { lease: 'refuses', waitProbeMs: 1000 });

const HOSTILE = [
  '../../etc/passwd',
  'a/b',
  'a\\b',
  'CON',
  'con',
  'NUL',
  'nul.txt',
  '.',
  '..',
  '',
  ' ',
  'ünïcødé-运行-🚀',
  'x'.repeat(5000),
  'A',
  'a',
  '\uD800',
  '\uFFFD',
  '\u0000',
  'a\nb',
];

describe('FileStore run ids', () => {
  it.each(HOSTILE.map((id) => [JSON.stringify(id.slice(0, 30)), id]))(
    'keeps the id %s inside dir, as a name of [0-9a-f-] only',
    async (_label, id) => {
      const store = await freshStore();
      const path = store.logPath(id);
      expect(dirname(path)).toBe(store.dir);
      expect(runIdFileName(id)).toMatch(/^[rh]-[0-9a-f]*\.jsonl$/);
      expect(runIdFileName(id).length).toBeLessThanOrEqual(255 - '.lock.break'.length);
      await store.runStarted(id, started(id));
      expect(await readdir(store.dir)).toEqual([runIdFileName(id)]);
    },
  );

  it('gives every hostile id its own file (no collisions, also case-insensitively)', () => {
    const names = HOSTILE.map((id) => runIdFileName(id).toLowerCase());
    expect(new Set(names).size).toBe(HOSTILE.length);
  });

  it('reads a short id back from its file name and refuses names it did not write', () => {
    for (const id of ['run-1', '', 'ünïcødé-运行-🚀', '../../etc/passwd'])
      expect(parseRunFileName(runIdFileName(id))).toEqual({ form: 'reversible', runId: id });
    expect(parseRunFileName(runIdFileName('x'.repeat(5000)))).toMatchObject({ form: 'hashed' });
    for (const name of ['r-zz.jsonl', 'r-abc.jsonl', 'notes.txt', 'r-c0af.jsonl', 'r-41.jsonl.lock'])
      expect(parseRunFileName(name)).toBeNull();
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
    expect(lines).toEqual(encodeLog(written).trimEnd().split('\n'));
  });

  it('serializes concurrent writes to one run in call order', async () => {
    const store = await freshStore();
    const writes = [store.runStarted('r', started('r'))];
    for (let i = 0; i < 40; i++)
      writes.push(
        store.intent('r', modelIntent(i)),
        store.result('r', `s${i}.model`, modelResult(i, 'x'.repeat(i * 500))),
      );
    await Promise.all(writes);
    const log = await store.readLog('r');
    expect(log).toHaveLength(81);
    expect(
      log.slice(1).map((r) => (r.kind === 'intent' || r.kind === 'result' ? `${r.kind}${r.stepIndex}` : r.kind)),
    ).toEqual(Array.from({ length: 40 }, (_, i) => [`intent${i}`, `result${i}`]).flat());
  });

  it('ignores a torn last line on read and reports it as a warning', async () => {
    const warnings: FileStoreWarning[] = [];
    const store = await freshStore((w) => warnings.push(w));
    await store.runStarted('r', started('r'));
    await appendFile(store.logPath('r'), encodeRecord(modelIntent(0)).slice(0, 25));
    expect(await store.readLog('r')).toEqual([started('r')]);
    expect(warnings).toEqual([
      expect.objectContaining({ code: 'torn_tail', runId: 'r', line: 2, file: store.logPath('r') }),
    ]);
  });

  it('refuses a line that is not JSON before a torn last line, as a resume does, instead of dropping it too', async () => {
    const store = await freshStore(() => undefined);
    await store.runStarted('r', started('r'));
    // A damaged line (its start zeros), then a torn one: what one torn write never leaves.
    const damaged = `${'\0'.repeat(30)}${encodeRecord(modelIntent(0)).slice(30)}`;
    await appendFile(store.logPath('r'), `${damaged}\n${encodeRecord(modelResult(0, 'y')).slice(0, 30)}`);
    const err = await store.readLog('r').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CorruptLogError);
    expect((err as CorruptLogError).line).toBe(2);
    expect((err as Error).message).toBe(`corrupt run log at ${store.logPath('r')}:2: not valid JSON`);
    // readLogLines gives the damaged line, which every reader of those lines refuses.
    expect((await store.readLogLines('r')).lines).toHaveLength(2);
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

  it('repairs a last line longer than what it reads from the end first, naming the line and the bytes', async () => {
    const dir = (await freshStore()).dir;
    const path = new FileStore({ dir }).logPath('r');
    const head = [started('r'), modelIntent(0), modelResult(0, 'y'.repeat(90_000))]
      .map((r) => `${encodeRecord(r)}\n`)
      .join('');
    const long = encodeRecord(modelIntent(1)).replace('"v":', `"pad":"${'z'.repeat(300_000)}","v":`);
    const cases = [
      { text: head + long.slice(0, 250_000), code: 'tail_truncated', bytes: 250_000, kept: head },
      { text: long.slice(0, 250_000), code: 'tail_truncated', bytes: 250_000, kept: '' },
      { text: head + encodeRecord(modelIntent(1)), code: 'tail_newline_added', bytes: 1 },
    ];
    for (const c of cases) {
      const warnings: FileStoreWarning[] = [];
      await writeFile(path, c.text);
      const store = new FileStore({ dir, onWarning: (w) => warnings.push(w) });
      await store.intent('r', modelIntent(7));
      const line = c.kept === '' ? 1 : 4;
      expect(warnings).toEqual([
        expect.objectContaining({
          code: c.code,
          line,
          message: expect.stringContaining(c.bytes > 1 ? `line ${line}, ${c.bytes} bytes` : `line ${line})`),
        }),
      ]);
      const after = await readFile(path, 'utf8');
      const kept = c.kept ?? `${c.text}\n`;
      // What was kept, then the new record on a line of its own (the store writes its lean form).
      expect(after.startsWith(kept)).toBe(true);
      expect(after.slice(kept.length)).toMatch(/^\{"kind":"intent"[^\n]*"stepIndex":7[^\n]*\}\n$/);
    }
  });

  it('rejects a corrupt line in the middle with CorruptLogError naming file and line, leaving other runs readable', async () => {
    const store = await freshStore();
    await writeFullRun(store, 'good');
    const path = store.logPath('bad');
    await writeFile(
      path,
      [encodeRecord(started('bad')), '{"kind":"intent", garbage', encodeRecord(stepWrite(0)), ''].join('\n'),
    );
    const err = await store.readLog('bad').then(
      () => null,
      (e: unknown) => e,
    );
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

describe('FileStore: tails written by another driver', () => {
  it('repairs a torn tail left by another process before appending again after re-acquiring the run', async () => {
    const dir = await tempDir();
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

describe('FileStore: a damaged last line that ends with a newline', () => {
  it('repairs it before appending, as readers already drop it, instead of turning it into a corrupt middle line', async () => {
    const first = new FileStore({ dir: await tempDir(), onWarning: () => undefined });
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

describe('FileStore: bytes that are not UTF-8', () => {
  it('rejects a complete line holding invalid UTF-8 as CorruptLogError naming the line, instead of reading U+FFFD into the record', async () => {
    const store = new FileStore({ dir: await tempDir(), onWarning: () => undefined });
    await store.runStarted('r', started('r'));
    await store.step('r', stepWrite(0, 'caf\u00e9'));
    await store.intent('r', modelIntent(1));
    const bytes = await readFile(store.logPath('r'));
    const at = bytes.indexOf(Buffer.from('caf\u00e9'));
    bytes[at + 3] = 0xff; // the first byte of "é" flipped into a byte UTF-8 never uses
    await writeFile(store.logPath('r'), bytes);
    const err = await store.readLog('r').then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(err, 'corrupt_log')).toBe(true);
    expect((err as Error).message).toContain(`${store.logPath('r')}:2`);
  });

  it('drops a torn tail cut inside a multi-byte character and appends cleanly after it', async () => {
    const warnings: string[] = [];
    const first = new FileStore({ dir: await tempDir(), onWarning: () => undefined });
    await first.runStarted('r', started('r'));
    // The first process died inside "🚀"; a fresh one (a new instance) picks the run up.
    const store = new FileStore({ dir: first.dir, onWarning: (w) => void warnings.push(w.code) });
    const line = Buffer.from(`${JSON.stringify(stepWrite(0, '运行🚀'))}\n`);
    await appendFile(store.logPath('r'), line.subarray(0, line.indexOf(Buffer.from('🚀')) + 2));
    expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started']);
    await store.step('r', stepWrite(0, '运行🚀'));
    const log = await store.readLog('r');
    expect(log.map((x) => x.kind)).toEqual(['run_started', 'step']);
    expect(warnings).toEqual(['torn_tail', 'tail_truncated']);
  });
});

describe('FileStore: a record JSON cannot carry', () => {
  it('rejects the returned promise instead of throwing synchronously, and writes nothing', async () => {
    const store = new FileStore({ dir: await tempDir() });
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
