/** `polyloop runs --json` / `show --json` to a terminal: log contents never drive the terminal. */
import { describe, expect, it } from 'vitest';
import { RECORD_VERSION } from '../../../src/core/index.ts';
import type { ActionDecision, InputRequestRecord } from '../../../src/core/index.ts';
import { runCli } from '../../../src/cli/cli.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { modelIntent, modelResult, started } from '../../contract/run-store.contract.ts';
import { tempDir } from '../../support/temp-dir.ts';

/** What a terminal acts on, or what reorders or breaks what it shows; JSON.stringify escapes only U+0000–U+001F. */
const TERMINAL_HOSTILE =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]/u;
const HOSTILE = 'x\u009b2J\u202eevil\u2028\u007f\u0085y';

async function awaitingStore(runId: string): Promise<string> {
  const dir = await tempDir();
  const store = new FileStore({ dir, onWarning: () => undefined });
  const decision: ActionDecision = {
    kind: 'action',
    action: { kind: 'tool_call', name: `note${HOSTILE}`, arguments: { text: HOSTILE } },
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
  await store.runStarted(runId, started(runId));
  await store.intent(runId, modelIntent(0));
  await store.result(runId, 's0.model', modelResult(0));
  await store.inputRequest(runId, request);
  return dir;
}

async function cliTo(outIsTerminal: boolean, ...argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runCli(argv, { out: (t) => void (out += t), err: () => undefined, outIsTerminal });
  return { code, out };
}

describe('polyloop --json to a terminal', () => {
  it('shows C1 controls, DEL, line separators and bidi overrides of an awaiting run as \\u escapes, still the same JSON', async () => {
    const runId = `run${HOSTILE}`;
    const dir = await awaitingStore(runId);
    for (const argv of [
      ['show', '--json', dir, runId],
      ['runs', '--json', dir],
    ]) {
      const [shown, piped] = [await cliTo(true, ...argv), await cliTo(false, ...argv)];
      expect(shown.code).toBe(0);
      expect(piped.out).toMatch(/\u009b/);
      expect(shown.out).not.toMatch(TERMINAL_HOSTILE);
      expect(JSON.parse(shown.out)).toEqual(JSON.parse(piped.out));
    }
  });
});
