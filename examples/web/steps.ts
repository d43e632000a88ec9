/**
 * One list item per step, numbered as the CLI numbers them: `#0` is the first step (its
 * `stepIndex`), in the tab, on the Worker and in `polyloop show` alike.
 */
import type { StepRecord } from '../../src/core/index.ts';

/** The label of step `stepIndex`: `#0`, `#1`, … (the CLI's numbering). */
export const stepLabel = (stepIndex: number): string => `#${stepIndex}`;

function item(className: string, stepIndex: number, what: string, obs: string, status: string): HTMLLIElement {
  const li = document.createElement('li');
  li.className = className;
  li.dataset['step'] = String(stepIndex);
  const cells = [
    ['num', stepLabel(stepIndex)],
    ['what', what],
    ['obs', obs],
    [`pill ${status === 'running' ? 'running' : 'ok'}`, status],
  ] as const;
  li.replaceChildren(
    ...cells.map(([cls, text]) => Object.assign(document.createElement('span'), { className: cls, textContent: text })),
  );
  return li;
}

/** A finished step: what was done (or the answer), what came back, and its status. */
export function stepItem(step: StepRecord): HTMLLIElement {
  const what = step.decision === 'final' ? `answer: ${step.finalAnswer ?? ''}` : (step.actionRepr ?? step.decision);
  return item(
    'step done',
    step.stepIndex,
    what,
    step.observation ?? step.explanation ?? '',
    step.actionStatus === 'denied' ? 'denied' : 'done',
  );
}

/** The step under way: `text` says what it is doing. */
export function runningItem(stepIndex: number, text: string): HTMLLIElement {
  return item('step running', stepIndex, text, '…', 'running');
}
