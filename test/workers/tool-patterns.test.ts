/** Tool argument patterns inside workerd: matched in linear time, backreferences refused (test/fixtures/pattern-cases.ts). */
import { expect, it } from 'vitest';
import { checkPatternsInThisRuntime } from '../fixtures/pattern-cases.ts';

it('validates catastrophic-backtracking patterns against adversarial arguments at once inside workerd', () => {
  checkPatternsInThisRuntime(expect);
});
