/** The step template: a new step is `STEP_DEFAULTS`, field by field and in the canonical order. */
import { describe, expect, it } from 'vitest';
import { STEP_DEFAULTS, STEP_FIELDS } from '../../../src/core/types.ts';
import { draftStep } from '../../../src/core/step-record.ts';

describe('draftStep', () => {
  it('is STEP_DEFAULTS with its index and times set: the same keys, in the same order, with the same values', () => {
    const draft = draftStep(7, '2026-12-01T00:00:00.000Z');
    expect(Object.keys(draft)).toEqual([...STEP_FIELDS]);
    expect(draft).toEqual({
      ...STEP_DEFAULTS,
      stepIndex: 7,
      callSeq: 7,
      startedAt: '2026-12-01T00:00:00.000Z',
      endedAt: '2026-12-01T00:00:00.000Z',
    });
  });

  it('gives every step an object of its own', () => {
    const a = draftStep(0, 't');
    a.observation = 'changed';
    expect(draftStep(0, 't').observation).toBeNull();
  });
});
