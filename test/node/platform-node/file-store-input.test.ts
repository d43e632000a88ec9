/**
 * FileStore and human input: the two barriers, their tail discipline, and the law over real files
 * (docs/design/laws.md#human-input-across-crashes).
 */
import { appendFile, open, readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InMemoryStore, RECORD_VERSION } from '../../../src/core/index.ts';
import type { RunStore } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { runStoreContract } from '../../../src/testing/index.ts';
import type { ContractSuite } from '../../../src/testing/index.ts';
import { humanInputLaw, lawProblems } from '../../contract/human-input-law.ts';
import { modelIntent, modelResult, started } from '../../contract/run-store.contract.ts';
import { tempDir } from '../../support/temp-dir.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

async function freshDir(): Promise<string> {
  return tempDir('polyloop-input-');
}

const quiet = (): void => undefined;
const v = RECORD_VERSION;
const approvalRequest = {
  kind: 'input_request',
  v,
  stepIndex: 0,
  resultId: 's0.input',
  request: { kind: 'approval', target: 'model_call', decision: null },
  requestedAt: '2026-01-01T00:00:00.000Z',
} as const;
const approveReply = {
  kind: 'input',
  v,
  stepIndex: 0,
  resultId: 's0.input',
  reply: { kind: 'approve', resultId: 's0.input' },
  receivedAt: '2026-01-01T00:00:01.000Z',
} as const;

/** Counts `fsync` calls on every file handle while `fn` runs. */
async function syncsDuring(fn: () => Promise<void>): Promise<number> {
  const probe = await open(process.execPath, 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const spy = vi.spyOn(proto, 'sync');
  try {
    await fn();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('FileStore input records', () => {
  it('makes inputRequest and input barriers: each resolves after an fsync of the log, as intent does and result does not', async () => {
    const store = new FileStore({ dir: await freshDir(), onWarning: quiet });
    await store.runStarted('r', started('r'));
    await store.intent('r', modelIntent(0));
    expect(await syncsDuring(() => store.result('r', 's0.model', modelResult(0)))).toBe(0);
    expect(await syncsDuring(() => store.inputRequest('r', approvalRequest))).toBeGreaterThanOrEqual(1);
    expect(await syncsDuring(() => store.input('r', approveReply))).toBeGreaterThanOrEqual(1);
    expect((await store.readLog('r')).map((r) => r.kind)).toEqual([
      'run_started',
      'intent',
      'result',
      'input_request',
      'input',
    ]);
  });

  it('cuts a torn tail off before writing a reply, so the reply stands on its own line and reads back', async () => {
    const dir = await freshDir();
    const warnings: string[] = [];
    const first = new FileStore({ dir, onWarning: quiet });
    await first.runStarted('r', started('r'));
    await first.inputRequest('r', approvalRequest);
    await appendFile(first.logPath('r'), '{"kind":"input","v":"1.1","stepIn');
    const second = new FileStore({ dir, onWarning: (w) => warnings.push(w.code) });
    await second.input('r', approveReply);
    expect(warnings).toContain('tail_truncated');
    expect((await readFile(second.logPath('r'), 'utf8')).split('\n')).toHaveLength(4);
    expect((await second.readLog('r')).at(-1)).toEqual(approveReply);
  });
});

describe('the store contract input cases can fail', () => {
  const inputCases = (suite: ContractSuite): ContractSuite['cases'] =>
    suite.cases.filter((c) => c.name.includes('stores with inputRequest/input'));

  it('fails a store that loses its input records, in every input case', async () => {
    const losing = (): RunStore => Object.assign(new InMemoryStore(), { input: async () => undefined });
    const cases = inputCases(runStoreContract({ name: 'losing', makeStore: losing, lease: 'none' }));
    expect(cases).toHaveLength(3);
    for (const c of cases) await expect(c.run(), c.name).rejects.toMatchObject({ name: 'ContractViolationError' });
  });

  it('fails a store with inputRequest but no input', async () => {
    const half = (): RunStore => Object.assign(new InMemoryStore(), { input: undefined });
    const [first] = inputCases(runStoreContract({ name: 'half', makeStore: half, lease: 'none' }));
    await expect(first!.run()).rejects.toThrow(/inputRequest\(\) but no input\(\)/);
  });
});

describe('the human-input law over FileStore (crashAtEveryWrite, a fresh directory per case)', () => {
  it('ends every case crashed at each write and resumed with the same replies as the uninterrupted run; the approved never action once, the denied one never', async () => {
    const tmp = await freshDir();
    const dirs: string[] = [];
    const result = await humanInputLaw({
      modelReplayPolicy: 'safe',
      newStore: () => {
        dirs.push(`${tmp}/case-${dirs.length}`);
        return new FileStore({ dir: dirs.at(-1)!, onWarning: quiet });
      },
    });
    expect(lawProblems(result)).toEqual([]);
    expect(new Set(dirs).size).toBe(result.report.cases.length + 1);
  });
});
