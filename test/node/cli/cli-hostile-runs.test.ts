/** The `polyloop` CLI on hostile run ids and log contents, and on odd directories. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { IntentRecord } from '../../../src/core/index.ts';
import { runCli } from '../../../src/cli/cli.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { runIdFileName } from '../../../src/platform-node/run-id.ts';
import { actionIntent, modelIntent, modelResult, started, stepWrite } from '../../contract/run-store.contract.ts';
import { tempDir } from '../../support/temp-dir.ts';

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

async function storeWith(...runIds: string[]): Promise<FileStore> {
  const dir = await tempDir();
  const store = new FileStore({ dir, onWarning: () => undefined });
  for (const id of runIds) await store.runStarted(id, started(id));
  return store;
}

/** Characters a terminal acts on or that reorder or break what it shows. */
const TERMINAL_HOSTILE =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]/u;

describe('polyloop on hostile run ids, logs and directories', () => {
  it('shows a run whose id and log hold terminal escapes, line separators and bidi overrides without passing them to the terminal', async () => {
    const id = 'evil\u001b]0;pwned\u0007\u001b[2J\u2028\u202e\u009b31m';
    const store = await storeWith(id);
    const obs = 'obs\u001b[31m red\u2029\u202egnirts\u009b2J';
    await store.intent(id, modelIntent(0));
    await store.result(id, 's0.model', modelResult(0));
    await store.intent(id, actionIntent(0));
    await store.step(id, stepWrite(0, obs));
    await store.intent(id, modelIntent(1));
    await store.result(id, 's1.model', modelResult(1, 'think\u001b[2J\u009b1m'));
    const hostileAction = {
      kind: 'action',
      action: { kind: 'tool_call', name: 'rm\u001b[2J\u202e', arguments: { path: '\u009b31m\u2028x' } },
      trajectoryRepr: 'rm',
      historyText: 'rm',
    };
    await store.intent(id, { ...actionIntent(1), resultId: 'x\u001b[2Jy', decision: hostileAction } as IntentRecord);
    const shown = await cli('show', store.dir, id);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('evil');
    expect(shown.out).toContain('gnirts');
    expect(shown.out).toContain('in flight action rm?[2J?({"path":"?31m?x"})');
    expect(shown.out).not.toMatch(TERMINAL_HOSTILE);
    const listed = await cli('runs', store.dir);
    expect(listed.out).toContain('evil');
    expect(listed.out).not.toMatch(TERMINAL_HOSTILE);
  });

  it('shows a run whose id starts with a dash after --', async () => {
    const store = await storeWith('-1', '--json');
    const r = await cli('show', store.dir, '--', '-1');
    expect(r).toMatchObject({ code: 0 });
    expect(r.out).toContain('run          -1');
    const j = await cli('show', '--json', store.dir, '--', '--json');
    expect(j.code).toBe(0);
    expect(JSON.parse(j.out)).toMatchObject({ runId: '--json' });
  });

  it('keeps listing the other runs when one log cannot be read, and exits 3 naming it', async () => {
    const store = await storeWith('good');
    await mkdir(`${store.dir}/${runIdFileName('odd')}`);
    const r = await cli('runs', store.dir);
    expect(r.code).toBe(3);
    expect(r.out).toContain('good');
    expect(r.out).toMatch(/odd.*directory, not a regular file/);
  });

  it('says a path that is a file is not a directory, and exits 1, for runs and show', async () => {
    const store = await storeWith('r');
    const file = store.logPath('r');
    await writeFile(`${store.dir}/plain.txt`, 'x');
    for (const argv of [
      ['runs', file],
      ['show', file, 'r'],
      ['runs', `${store.dir}/plain.txt/sub`],
    ]) {
      const r = await cli(...argv);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/not a directory/);
    }
  });

  it('lists a hashed log whose run_started names another run as an unknown id, not as a run show would not find', async () => {
    const long = 'L'.repeat(300);
    const store = await storeWith(long);
    const stray = `h-${'0'.repeat(64)}.jsonl`;
    await writeFile(`${store.dir}/${stray}`, await readFile(store.logPath(long)));
    const r = await cli('runs', '--json', store.dir);
    const rows = JSON.parse(r.out) as { runId: string | null; file: string }[];
    expect(rows.find((x) => x.file.endsWith(stray))?.runId).toBeNull();
    expect(rows.filter((x) => x.runId === long)).toHaveLength(1);
  });

  it('does not call a run whose log holds no run_started record resumable (resume would say it does not exist)', async () => {
    const store = await storeWith();
    await writeFile(store.logPath('empty'), '');
    await writeFile(store.logPath('torn-start'), '{"v":"1.0","kind":"run_sta');
    const r = await cli('runs', store.dir);
    expect(r.out).not.toContain('resumable');
    expect(r.out).toMatch(/empty\s+not started/);
    const j = JSON.parse((await cli('show', '--json', store.dir, 'torn-start')).out) as { state: string };
    expect(j.state).toBe('not_started');
  });
});
