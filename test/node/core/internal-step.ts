/** A step record for the pure internals' tables: a valid executed action, patched per case. */
import type { StepRecord } from '../../../src/core/index.ts';

export function step(patch: Partial<StepRecord> = {}): StepRecord {
  return {
    stepIndex: 0,
    callSeq: 0,
    modelCallId: 'resp',
    modelText: 'text',
    reasoning: null,
    decision: 'action',
    actionRepr: 'act()',
    historyText: 'I will act.',
    historyContent: null,
    observation: 'it worked',
    observationIsSynthetic: false,
    actionStatus: 'executed',
    envReportedCompletion: false,
    observationTruncatedChars: 0,
    finalAnswer: null,
    explanation: null,
    toolCallId: null,
    toolCompletedRun: false,
    startedAt: '',
    endedAt: '',
    ...patch,
  };
}
