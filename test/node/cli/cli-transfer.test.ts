/**
 * `polyloop export` / `polyloop import` (docs/design/run-log.md#export-and-import) through the real
 * launcher, on real files.
 */
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeLog, encodeRecord, exportRun, InMemoryStore, resume, run } from '../../../src/core/index.ts';
import type { IntentRecord, LogRecord, RunStore } from '../../../src/core/index.ts';
import { runCli } from '../../../src/cli/cli.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { actionIntent, modelIntent, modelResult, started, writeFullRun } from '../../contract/run-store.contract.ts';
import { harness, safeTools, timeless } from '../core/fixtures.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { polyloop } from '../platform-node/helpers.ts';

// Removed once the file is done: the runs exported in beforeAll serve its concurrent tests.
const dirs = sharedTempDirs();
const freshDir = (): Promise<string> => dirs.make();

/** An interrupted run: its `never` action is in flight. */
async function writeInFlight(store: RunStore, runId: string): Promise<void> {
  await store.runStarted(runId, started(runId));
  await store.intent(runId, modelIntent(0));
  await store.result(runId, 's0.model', modelResult(0));
  await store.intent(runId, actionIntent(0) as IntentRecord);
}

let src = '';
let exported = '';
beforeAll(async () => {
  src = await freshDir();
  const store = new FileStore({ dir: src, onWarning: () => undefined });
  await writeFullRun(store, 'done');
  await writeInFlight(store, 'flying');
  exported = join(await freshDir(), 'flying.ndjson');
});

describe.concurrent('polyloop export', () => {
  it("writes exportRun's NDJSON to stdout: the same bytes InMemoryStore exports for the same records", async () => {
    const r = await polyloop(['export', src, 'flying']);
    expect(r.code).toBe(0);
    const memory = new InMemoryStore();
    await writeInFlight(memory, 'flying');
    expect(r.stdout).toBe(await exportRun(memory, 'flying'));
    expect(r.stdout).toBe(await exportRun(new FileStore({ dir: src }), 'flying'));
    const full = new InMemoryStore();
    await writeFullRun(full, 'done');
    expect((await polyloop(['export', src, 'done'])).stdout).toBe(await exportRun(full, 'done'));
  });

  it('writes to a file with -o and prints nothing on stdout', async () => {
    const file = join(await freshDir(), 'out.ndjson');
    const r = await polyloop(['export', src, 'done', '-o', file]);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(await readFile(file, 'utf8')).toBe(await exportRun(new FileStore({ dir: src }), 'done'));
  });

  it('leaves a torn last line out and says so on stderr', async () => {
    const dir = await freshDir();
    const store = new FileStore({ dir, onWarning: () => undefined });
    await writeInFlight(store, 'torn');
    await appendFile(store.logPath('torn'), '{"kind":"step","v":"1');
    const r = await polyloop(['export', dir, 'torn']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(4);
    expect(r.stderr).toContain('ignored a torn last line (line 5)');
  });

  it('exits 1 for an unknown run or a missing directory, and 3 naming file and line for a corrupt log', async () => {
    const dir = await freshDir();
    await writeFile(
      new FileStore({ dir }).logPath('broken'),
      [encodeRecord(started('broken')), encodeRecord(actionIntent(0)), ''].join('\n'),
    );
    const [unknown, missing, corrupt] = await Promise.all([
      polyloop(['export', src, 'nope']),
      polyloop(['export', join(src, 'nope'), 'x']),
      polyloop(['export', dir, 'broken']),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no run "nope" in');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such directory');
    expect(corrupt.code).toBe(3);
    expect(corrupt.stderr).toMatch(
      /corrupt run log at .*r-62726f6b656e\.jsonl:2: intent of step 0 without its model-call intent/,
    );
    expect(corrupt.stdout).toBe('');
  });
});

describe('polyloop import', () => {
  it('round trip: export a FileStore run, import it into another directory, and show prints the same run in both', async () => {
    const out = await polyloop(['export', src, 'flying', '-o', exported]);
    expect(out.code).toBe(0);
    const dst = await freshDir();
    const imported = await polyloop(['import', dst, exported]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(
      /^imported run "flying" into .*r-666c79696e67\.jsonl \(4 records\): in flight at step 0: action echo\(\{"text":"hi"\}\) — a never action was in flight: resume asks a person to settle it/,
    );
    const [a, b] = await Promise.all([
      polyloop(['show', src, 'flying', '--json']),
      polyloop(['show', dst, 'flying', '--json']),
    ]);
    const strip = (s: string): unknown => {
      const { file: _f, lastWriteAt: _l, ...rest } = JSON.parse(s) as Record<string, unknown>;
      return rest;
    };
    expect(strip(b.stdout)).toEqual(strip(a.stdout));
    const [ta, tb] = await Promise.all([polyloop(['show', src, 'flying']), polyloop(['show', dst, 'flying'])]);
    const text = (s: string): string => s.replace(/^(file|last write) .*\n/gm, '');
    expect(text(tb.stdout)).toBe(text(ta.stdout));
    expect(text(ta.stdout)).toContain('#0  in flight action echo({"text":"hi"})');
    expect(await readFile(new FileStore({ dir: dst }).logPath('flying'), 'utf8')).toBe(
      await readFile(exported, 'utf8'),
    );
  });

  it('reads stdin for -, and creates a directory that does not exist yet', async () => {
    const ndjson = await exportRun(new FileStore({ dir: src }), 'done');
    const dst = join(await freshDir(), 'new', 'runs');
    const r = await polyloop(['import', dst, '-'], { stdin: ndjson });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/imported run "done" .*\(6 records\): ended \(max_steps\)/);
    expect(await exportRun(new FileStore({ dir: dst }), 'done')).toBe(ndjson);
  });

  it('refuses a run that already exists with exit 1 naming it, and leaves its log as it was', async () => {
    const dst = await freshDir();
    const store = new FileStore({ dir: dst });
    await writeFullRun(store, 'flying');
    const before = await readFile(store.logPath('flying'));
    const r = await polyloop(['import', dst, '-'], { stdin: await exportRun(new FileStore({ dir: src }), 'flying') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('run "flying" already has a log in');
    expect(await readFile(store.logPath('flying'))).toEqual(before);
  });

  const ndjsonOf = (recs: readonly LogRecord[]): string => recs.map((x) => `${encodeRecord(x)}\n`).join('');
  const good = [started('x'), modelIntent(0), modelResult(0), actionIntent(0)];
  const hostile: [string, string, RegExp][] = [
    ['a torn last line', ndjsonOf(good).slice(0, -15), /corrupt run log at .*bad\.ndjson:4: the last line is torn/],
    [
      'a corrupt middle line',
      ndjsonOf(good).replace(/\n.*\n/, '\n{oops\n'),
      /corrupt run log at .*bad\.ndjson:2: not valid JSON/,
    ],
    [
      'records out of protocol order',
      ndjsonOf([good[0], good[2], good[1], good[3]] as LogRecord[]),
      /corrupt run log at .*bad\.ndjson:2: result of step 0 without its model-call intent/,
    ],
    [
      'a first record that is not run_started',
      ndjsonOf(good.slice(1)),
      /corrupt run log at .*bad\.ndjson:1: first record is intent, not run_started/,
    ],
    [
      'schema major 2',
      ndjsonOf(good).replace(/"v":"1\.\d+"/g, '"v":"2.0"'),
      /bad\.ndjson: record schema version "2\.0" is not supported/,
    ],
    ['an empty file', '', /corrupt run log at .*bad\.ndjson:1: not valid JSON/],
  ];

  it.concurrent.each(hostile)(
    'refuses %s with exit 3 naming the file (and line), writing nothing',
    async (_name, text, message) => {
      const file = join(await freshDir(), 'bad.ndjson');
      await writeFile(file, text);
      const dst = await freshDir();
      const r = await polyloop(['import', dst, file]);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(message);
      expect((await readdir(dst)).filter((n) => n.endsWith('.jsonl'))).toEqual([]);
    },
  );

  it('exits 1 for a missing file or a target that is a file, and 2 for wrong arguments', async () => {
    const file = join(await freshDir(), 'plain');
    await writeFile(file, 'x');
    const [missing, notDir, noFile, jsonFlag] = await Promise.all([
      polyloop(['import', src, join(src, 'nope.ndjson')]),
      polyloop(['import', file, exported]),
      polyloop(['import', src]),
      polyloop(['import', src, exported, '--json']),
    ]);
    expect(missing).toMatchObject({ code: 1 });
    expect(missing.stderr).toContain('no such file');
    expect(notDir).toMatchObject({ code: 1 });
    expect(notDir.stderr).toContain('not a directory');
    expect([noFile.code, jsonFlag.code]).toEqual([2, 2]);
  });

  it('moves a crashed run to another directory, where resume finishes it with the uninterrupted trajectory', async () => {
    const from = await freshDir();
    const crashing = harness({
      store: faultyStore(new FileStore({ dir: from }), { crashAfterWrites: 9 }),
      tools: safeTools(),
    });
    await expect(run(crashing.agent, crashing.request)).rejects.toThrow();
    const file = join(await freshDir(), 'run.ndjson');
    expect((await polyloop(['export', from, 'run-1', '-o', file])).code).toBe(0);
    const to = await freshDir();
    expect((await polyloop(['import', to, file])).code).toBe(0);
    const moved = harness({ store: new FileStore({ dir: to }), tools: safeTools() });
    const resumed = await resume(moved.agent, moved.request);
    const reference = harness({ tools: safeTools() });
    expect(timeless(resumed.trajectory)).toEqual(timeless((await run(reference.agent, reference.request)).trajectory));
  });
});

describe('polyloop export to a terminal', () => {
  it('escapes the control characters JSON leaves raw, so the text shown still decodes to the same records', async () => {
    const dir = await freshDir();
    const store = new FileStore({ dir });
    await store.runStarted('t', started('t'));
    await store.intent('t', modelIntent(0));
    await store.result('t', 's0.model', modelResult(0, 'red \u009b31m \u202e bidi \u2028 sep \u001b[2J esc'));
    const exportTo = async (outIsTerminal: boolean): Promise<string> => {
      let out = '';
      expect(
        await runCli(['export', dir, 't'], { out: (s) => void (out += s), err: () => undefined, outIsTerminal }),
      ).toBe(0);
      return out;
    };
    const [shown, piped] = [await exportTo(true), await exportTo(false)];
    expect(piped).toBe(await exportRun(store, 't'));
    expect(piped).toMatch(/\u009b/);
    expect(shown).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202e]/u);
    expect(decodeLog(shown).records).toEqual(decodeLog(piped).records);
  });
});
