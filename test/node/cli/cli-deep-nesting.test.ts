/** A planted or imported log whose values nest deeper than JSON.stringify can go: the CLI names it corrupt and keeps working. */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeRecord, RECORD_VERSION } from '../../../src/core/index.ts';
import type { ActionDecision, InputRequestRecord, LogRecord } from '../../../src/core/index.ts';
import { runCli } from '../../../src/cli/cli.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { modelIntent, modelResult, started } from '../../contract/run-store.contract.ts';
import { tempDir } from '../../support/temp-dir.ts';

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

const DEPTH = 20_000;

/** An awaiting run whose pending action's arguments nest DEPTH arrays deep, as NDJSON text (JSON.parse reads it; JSON.stringify cannot write it). */
function deepLog(runId: string): string {
  const decision: ActionDecision = {
    kind: 'action',
    action: { kind: 'tool_call', name: 'note', arguments: { text: '__DEEP__' } },
    trajectoryRepr: 'note',
    historyText: 'call note',
  };
  const request: InputRequestRecord = {
    kind: 'input_request',
    v: RECORD_VERSION,
    stepIndex: 0,
    resultId: 's0.input',
    request: { kind: 'approval', target: 'action', decision },
    requestedAt: '2026-01-01T00:00:01.000Z',
  };
  const records: LogRecord[] = [started(runId), modelIntent(0), modelResult(0), request];
  return records
    .map((r) => `${encodeRecord(r).replace('"__DEEP__"', '['.repeat(DEPTH) + ']'.repeat(DEPTH))}\n`)
    .join('');
}

describe('polyloop on a log nested too deeply to encode', () => {
  it('lists it as corrupt beside the other runs, and show, export and import exit 3 naming it, import writing nothing', async () => {
    const root = await tempDir();
    const dir = join(root, 'runs');
    await mkdir(dir);
    const store = new FileStore({ dir, onWarning: () => undefined });
    await store.runStarted('good', started('good'));
    const text = deepLog('deep');
    await writeFile(store.logPath('deep'), text);

    const listed = await cli('runs', dir);
    expect(listed.code).toBe(3);
    expect(listed.out).toMatch(/good\s+at step boundary/);
    expect(listed.out).toMatch(/deep\s+corrupt: .*:4: .*nested too deeply/);
    expect((await cli('runs', '--json', dir)).code).toBe(3);

    for (const argv of [
      ['show', dir, 'deep'],
      ['show', '--json', dir, 'deep'],
      ['export', dir, 'deep'],
    ]) {
      const r = await cli(...argv);
      expect(r.code).toBe(3);
      expect(r.err).toMatch(/:4: .*nested too deeply/);
    }

    const file = join(root, 'deep.ndjson');
    await writeFile(file, text);
    const target = join(root, 'target');
    const imported = await cli('import', target, file);
    expect(imported.code).toBe(3);
    expect(imported.err).toContain(`${file}:4`);
    expect(await readdir(target).catch(() => [])).toEqual([]);
  });
});
