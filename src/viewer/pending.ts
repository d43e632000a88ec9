/**
 * The open request and its buttons: approve, deny with a reason, answer, executed with what
 * happened, retry, cancel — exactly the replies the request accepts. A reply goes to
 * `POST /runs/:id/input`, which the viewer carries out as `resume(…, { input })` would.
 * @module
 */
import { api } from './api.ts';
import type { Pending, Summary } from './api.ts';
import { h, pretty } from './dom.ts';

const LABELS: Record<string, string> = { approve: 'Approve', deny: 'Deny', answer: 'Send answer', executed: 'It happened', retry: 'Retry', cancel: 'Cancel the run' };
/** The text field a reply kind needs, and its label. */
const FIELDS: Record<string, [string, string] | undefined> = { deny: ['reason', 'Reason (the model reads it)'], answer: ['text', 'Answer'], executed: ['observation', 'What happened (the observation)'] };

/** The panel for `p`; `done` is called once a reply was stored. */
export function answerPanel(runId: string, p: Pending, answering: Summary['answering'], done: () => void): HTMLElement {
  const status = h('p', { class: 'reply-status', role: 'status', id: 'reply-status' });
  const action = p.action;
  const forms = p.accepts.map((kind) => {
    const field = FIELDS[kind];
    const input = field ? h('input', { type: 'text', name: field[0], id: `reply-${kind}-text`, 'aria-label': field[1], placeholder: field[1], disabled: !answering.enabled }) : null;
    const button = h('button', { type: 'submit', class: `reply ${kind}`, 'data-reply': kind, disabled: !answering.enabled }, LABELS[kind] ?? kind);
    const form = h('form', { class: 'reply-form' }, input, button);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const reply: Record<string, string> = { kind, resultId: p.resultId };
      if (field && input) reply[field[0]] = input.value;
      for (const b of panel.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input')) b.disabled = true;
      status.textContent = 'Sending…';
      api.answer(runId, reply).then(
        () => {
          status.textContent = `Reply "${kind}" stored; the run goes on.`;
          done();
        },
        (err: unknown) => {
          status.textContent = `Refused: ${err instanceof Error ? err.message : String(err)}`;
          for (const b of panel.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input')) b.disabled = false;
        },
      );
    });
    return form;
  });
  const panel = h(
    'div',
    { class: 'pending-panel' },
    h('h2', {}, `Waiting for a person: ${p.kind} at step #${p.stepIndex}`),
    h('p', { class: 'muted' }, `${p.resultId}${p.kind === 'settle' ? ' — the run crashed while this was in flight: did it happen?' : ''}`),
    action ? h('p', {}, 'ApiAction: ', h('strong', { class: 'tool-name' }, action.kind === 'tool_call' ? action.name : 'code')) : h('p', {}, 'The model call'),
    action ? h('pre', { class: 'args', id: 'pending-args' }, action.kind === 'tool_call' ? pretty(action.arguments) : action.source) : null,
    h('div', { class: 'replies' }, ...forms),
    answering.enabled ? null : h('p', { class: 'warning', id: 'answer-why' }, `Buttons disabled: ${answering.why ?? 'this viewer cannot answer'}.`),
    status,
  );
  return panel;
}
