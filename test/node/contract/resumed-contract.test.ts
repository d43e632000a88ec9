/**
 * The store contract's cases for the marks drivers leave can fail: a store that loses marks, one
 * that holds a mark and lands it after the next record, and one whose reads do not see a held mark
 * each fail; a store without `resumed` owes them nothing.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../../../src/core/index.ts';
import type { LogRecord, ResumedRecord, RunStore } from '../../../src/core/index.ts';
import { runStoreContract } from '../../../src/testing/index.ts';
import type { ContractSuite } from '../../../src/testing/index.ts';

const markCases = (make: () => RunStore): ContractSuite['cases'] =>
  runStoreContract({ name: 'broken', makeStore: make, lease: 'none' }).cases.filter((c) =>
    c.name.includes('(stores with resumed'),
  );

/** An InMemoryStore that holds marks until its next write, then lands them after that write's records. */
class LateStore extends InMemoryStore {
  readonly held: ResumedRecord[] = [];
  readonly #seen: boolean;
  constructor(seen: boolean) {
    super();
    this.#seen = seen;
  }
  override resumed(_runId: string, rec: ResumedRecord): Promise<void> {
    this.held.push(rec);
    return Promise.resolve();
  }
  override async readLog(runId: string): Promise<readonly LogRecord[]> {
    return [...(await super.readLog(runId)), ...(this.#seen ? this.held : [])];
  }
  async #late(runId: string, write: () => Promise<void>): Promise<void> {
    await write();
    for (const held of this.held.splice(0)) await super.resumed(runId, held);
  }
  override intent(runId: string, rec: Parameters<InMemoryStore['intent']>[1]): Promise<void> {
    return this.#late(runId, () => super.intent(runId, rec));
  }
  override result(runId: string, id: string, rec: Parameters<InMemoryStore['result']>[2]): Promise<void> {
    return this.#late(runId, () => super.result(runId, id, rec));
  }
  override input(runId: string, rec: Parameters<InMemoryStore['input']>[1]): Promise<void> {
    return this.#late(runId, () => super.input(runId, rec));
  }
}

describe('the store contract cases for the marks of resumed runs', () => {
  it('are three, and all pass on InMemoryStore', async () => {
    const cases = markCases(() => new InMemoryStore());
    expect(cases).toHaveLength(3);
    for (const c of cases) await c.run();
  });

  it('fail a store that loses its marks, in every case', async () => {
    const losing = (): RunStore => Object.assign(new InMemoryStore(), { resumed: async () => undefined });
    for (const c of markCases(losing)) await expect(c.run()).rejects.toMatchObject({ name: 'ContractViolationError' });
  });

  it('fail a store that lands a held mark after the record written next, in every case', async () => {
    for (const c of markCases(() => new LateStore(true))) {
      await expect(c.run()).rejects.toMatchObject({ name: 'ContractViolationError' });
    }
  });

  it('fail a store whose read does not see a mark it holds', async () => {
    const [inOrder] = markCases(() => new LateStore(false));
    await expect(inOrder!.run()).rejects.toThrow(/readLog after a mark before the first step/);
  });

  it('hold nothing against a store without resumed', async () => {
    const without = (): RunStore => Object.assign(new InMemoryStore(), { resumed: undefined });
    for (const c of markCases(without)) await c.run();
  });
});
