/** Tool argument patterns in Chromium: matched in linear time, backreferences refused (test/fixtures/pattern-cases.ts). */
import { expect, it } from 'vitest';
import { checkPatternsInThisRuntime } from '../fixtures/pattern-cases.ts';

it('validates catastrophic-backtracking patterns against adversarial arguments at once in Chromium', () => {
  checkPatternsInThisRuntime(expect);
});
