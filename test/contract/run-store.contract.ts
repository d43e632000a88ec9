/**
 * The shared RunStore contract, as every store's vitest runner (node, real Chromium, workerd)
 * calls it. The cases live in `polyloop/testing` (`runStoreContract`), where users run them
 * over their own stores; this file only adapts the call and re-exports the record builders.
 */
import { runStoreContract as storeSuite } from '../../src/testing/index.ts';
import type { RunStore } from '../../src/core/index.ts';
import type { RunStoreContractOptions } from '../../src/testing/index.ts';
import { describeContract } from './vitest-suite.ts';

export {
  actionIntent,
  actionsIntent,
  callResult,
  callsStepWrite,
  ended,
  modelIntent,
  modelResult,
  started,
  stepRecord,
  stepWrite,
  writeFullRun,
} from '../../src/testing/contracts/records.ts';

export type StoreFactory = () => RunStore | Promise<RunStore>;

export type ContractOptions = Omit<RunStoreContractOptions, 'name' | 'makeStore'>;

/** Run the RunStore contract over `makeStore` as a vitest `describe` block. */
export function runStoreContract(name: string, makeStore: StoreFactory, options: ContractOptions = {}): void {
  describeContract(storeSuite({ name, makeStore, ...options }));
}
