/**
 * The store contract's cases for steps with several calls can fail: a store that loses call
 * results, one that holds them and lands them after the next record, and one that writes the
 * `actions` intent of a joint write but not the model result each fail their case.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore } from '../../../src/core/index.ts';
import type { CallResultRecord, LogRecord, RunStore } from '../../../src/core/index.ts';
import { runStoreContract } from '../../../src/testing/index.ts';
import type { ContractSuite } from '../../../src/testing/index.ts';

const callCases = (make: () => RunStore): ContractSuite['cases'] =>
  runStoreContract({ name: 'broken', makeStore: make, lease: 'none' }).cases.filter((c) =>
    c.name.includes('(stores with callResult'),
  );

/** An InMemoryStore that holds call results and appends them after the next record instead of before it. */
class LateStore extends InMemoryStore {
  readonly #held: CallResultRecord[] = [];
  override callResult(_runId: string, rec: CallResultRecord): Promise<void> {
    this.#held.push(rec);
    return Promise.resolve();
  }
  override async readLog(runId: string): Promise<readonly LogRecord[]> {
    return [...(await super.readLog(runId)), ...this.#held];
  }
  override async step(runId: string, rec: Parameters<InMemoryStore['step']>[1]): Promise<void> {
    await super.step(runId, rec);
    for (const held of this.#held.splice(0)) await super.callResult(runId, held);
  }
}

describe('the store contract cases for several calls a step', () => {
  it('are three, and all pass on InMemoryStore', async () => {
    const cases = callCases(() => new InMemoryStore());
    expect(cases).toHaveLength(3);
    for (const c of cases) await c.run();
  });

  it('fail a store that loses its call results, in the two cases that write them', async () => {
    const losing = (): RunStore => Object.assign(new InMemoryStore(), { callResult: async () => undefined });
    const [landing, kept] = callCases(losing);
    await expect(landing!.run()).rejects.toMatchObject({ name: 'ContractViolationError' });
    await expect(kept!.run()).rejects.toMatchObject({ name: 'ContractViolationError' });
  });

  it('fail a store that lands a held call result after the record written next', async () => {
    const [landing] = callCases(() => new LateStore());
    await expect(landing!.run()).rejects.toThrow(/readLog after the step record and run_ended/);
  });

  it('fail a store whose joint write keeps the actions intent but loses the model result', async () => {
    const dropping = (): RunStore =>
      Object.assign(new InMemoryStore(), {
        resultAndIntent(
          this: InMemoryStore,
          runId: string,
          _result: unknown,
          intent: Parameters<RunStore['intent']>[1],
        ) {
          return this.intent(runId, intent);
        },
      });
    const joint = callCases(dropping)[2];
    await expect(joint!.run()).rejects.toThrow(/readLog after the joint write/);
  });

  it('hold nothing against a store without callResult', async () => {
    const without = (): RunStore => Object.assign(new InMemoryStore(), { callResult: undefined });
    for (const c of callCases(without)) await c.run();
  });
});
