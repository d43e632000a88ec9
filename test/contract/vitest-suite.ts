/** Turns a framework-agnostic contract suite of `polyloop/testing` into vitest `describe`/`it` calls. */
import { describe, it } from 'vitest';
import type { ContractSuite } from '../../src/testing/index.ts';

/** One `describe` per suite, one `it` per case, in the suite's order. */
export function describeContract(suite: ContractSuite, timeoutMs?: number): void {
  describe(suite.name, () => {
    for (const c of suite.cases) it(c.name, () => c.run(), timeoutMs);
  });
}
