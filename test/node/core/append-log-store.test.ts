/**
 * The record writes every store shares (src/core/append-log-store.ts): each `RunStore` write
 * method is one append of its records, a barrier exactly when `isBarrier` says so of one of them,
 * and something that is not a record is refused before any store writes it.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, RECORD_VERSION } from '../../../src/core/index.ts';
import type {
  InputRecord,
  InputRequestRecord,
  IntentRecord,
  LogRecord,
  UpgradeRecord,
} from '../../../src/core/index.ts';
import { AppendLogStore } from '../../../src/core/internal-entry.ts';
import type { LogAppend } from '../../../src/core/internal-entry.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import {
  actionIntent,
  ended,
  modelIntent,
  modelResult,
  started,
  stepWrite,
} from '../../../src/testing/contracts/records.ts';
import { tempDir } from '../../support/temp-dir.ts';

/** Keeps every append it is given, and its log. */
class Recorder extends AppendLogStore {
  readonly appends: { method: string; kinds: string[]; barrier: boolean }[] = [];
  readonly #log: LogRecord[] = [];

  protected append(write: LogAppend): Promise<void> {
    this.appends.push({ method: write.method, kinds: write.records.map((r) => r.kind), barrier: write.barrier });
    this.#log.push(...write.records);
    return Promise.resolve();
  }

  readLog(): Promise<readonly LogRecord[]> {
    return Promise.resolve([...this.#log]);
  }
}

const v = RECORD_VERSION;
const approval = { kind: 'approval', target: 'action', decision: null } as const;
const inputRequest: InputRequestRecord = {
  kind: 'input_request',
  v,
  stepIndex: 0,
  resultId: 's0.input',
  request: approval,
  requestedAt: '',
};
const input: InputRecord = {
  kind: 'input',
  v,
  stepIndex: 0,
  resultId: 's0.input',
  reply: { kind: 'approve', resultId: 's0.input' },
  receivedAt: '',
};
const upgrade: UpgradeRecord = {
  kind: 'upgrade',
  v,
  stepIndex: 1,
  reason: 'r',
  changes: {},
  snapshotHash: 'h',
  request: { cancelGraceMs: 0, defaulted: [] },
  at: '',
};
const neverModelIntent: IntentRecord = { ...modelIntent(1), replayPolicy: 'never' };

describe('AppendLogStore', () => {
  it('writes each store method as one append of its records, a barrier exactly when isBarrier says so', async () => {
    const store = new Recorder();
    await store.runStarted('r', started('r'));
    await store.intent('r', modelIntent(0));
    await store.result('r', 's0.model', modelResult(0));
    await store.resultAndIntent('r', modelResult(0), actionIntent(0) as Extract<IntentRecord, { intent: 'action' }>);
    await store.step('r', stepWrite(0));
    await store.intent('r', neverModelIntent);
    await store.inputRequest('r', inputRequest);
    await store.input('r', input);
    await store.upgrade('r', upgrade);
    await store.runEnded('r', ended(1));
    expect(store.appends).toEqual([
      { method: 'runStarted', kinds: ['run_started'], barrier: false },
      { method: 'intent', kinds: ['intent'], barrier: false },
      { method: 'result', kinds: ['result'], barrier: false },
      { method: 'resultAndIntent', kinds: ['result', 'intent'], barrier: true },
      { method: 'step', kinds: ['step'], barrier: true },
      { method: 'intent', kinds: ['intent'], barrier: true },
      { method: 'inputRequest', kinds: ['input_request'], barrier: true },
      { method: 'input', kinds: ['input'], barrier: true },
      { method: 'upgrade', kinds: ['upgrade'], barrier: true },
      { method: 'runEnded', kinds: ['run_ended'], barrier: true },
    ]);
  });

  it('refuses a write of something that is not a record with a rejection, never a throw, and appends nothing', async () => {
    const store = new Recorder();
    let written: Promise<void> | undefined;
    expect(() => (written = store.intent('r', null as unknown as IntentRecord))).not.toThrow();
    await expect(written).rejects.toThrow(TypeError);
    expect(store.appends).toEqual([]);
  });
});

describe('a store given something that is not a record', () => {
  it('InMemoryStore rejects it and keeps nothing of it', async () => {
    const store = new InMemoryStore();
    let written: Promise<void> | undefined;
    expect(() => (written = store.runStarted('r', null as never))).not.toThrow();
    await expect(written).rejects.toThrow(TypeError);
    expect(await store.readLog('r')).toEqual([]);
  });

  it('FileStore rejects it and writes no line', async () => {
    const store = new FileStore({ dir: await tempDir() });
    let written: Promise<void> | undefined;
    expect(() => (written = store.runStarted('r', null as never))).not.toThrow();
    await expect(written).rejects.toThrow(TypeError);
    expect(await store.readLog('r')).toEqual([]);
  });
});
