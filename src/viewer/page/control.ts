/**
 * A person in control of a run from its page: stop it (with a reason, or none), and fork it from a
 * step — a new run that keeps the steps before and asks the model again there (at a step waiting
 * for a person, the fork waits for the same request). Both are collapsed until asked for. The
 * viewer answers with what happens (`POST /runs/:id/stop`, `POST /runs/:id/fork`); a refusal is
 * shown in its own words.
 * @module
 */
import { api } from './api.ts';
import type { Summary } from './api.ts';
import { h } from './dom.ts';
import { runLink } from './tree.ts';

/** The longest reason the library keeps. */
const MAX_REASON = 2000;

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * The stop form of a run that has not ended, or null (an ended run, or a sub-agent's run: its parent
 * drives it, so its parent is the one to stop). `done` is called once the stop is kept.
 */
export function stopForm(s: Summary, done: () => void): HTMLElement | null {
  if (s.state === 'ended' || s.status === 'corrupt' || s.parentRunId) return null;
  const reason = h('input', {
    type: 'text',
    id: 'stop-reason',
    maxlength: MAX_REASON,
    'aria-label': 'Why (optional; kept in the log)',
    placeholder: 'Why (optional; kept in the log)',
  });
  const button = h('button', { type: 'submit', class: 'reply cancel', id: 'stop-submit' }, 'Stop the run');
  const status = h('p', { class: 'reply-status', role: 'status', id: 'stop-status' });
  const form = h('form', { class: 'reply-form' }, reason, button);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    button.disabled = true;
    status.textContent = 'Asking the run to stop…';
    const why = reason.value.trim() === '' ? null : reason.value;
    api.stop(s.runId, why).then(
      (answer) => {
        status.textContent = `${answer.requested ? 'Stop kept' : 'Nothing to stop'}: ${answer.message ?? ''}`;
        done();
      },
      (err: unknown) => {
        status.textContent = `Refused: ${errorText(err)}`;
        button.disabled = false;
      },
    );
  });
  const why =
    'Whoever drives the run ends it cancelled, with this reason in its log: at once, or — when no ' +
    'process drives it — at its next resume, before any model call or action.';
  return h(
    'details',
    { class: 'control', id: 'stop' },
    h('summary', {}, 'Stop this run'),
    h('p', { class: 'muted' }, why),
    form,
    status,
  );
}

/**
 * "Fork from here" at step `atStep` of run `runId`: asks for the new run's id, then links the fork.
 * `waiting`: the step waits for a person (the fork waits for the same request).
 */
export function forkForm(runId: string, atStep: number, waiting: boolean): HTMLElement {
  const suggested = `${runId}-fork-${atStep}`;
  const newId = h('input', {
    type: 'text',
    id: 'fork-run-id',
    maxlength: 200,
    'aria-label': 'The new run id',
    placeholder: 'The new run id',
  });
  // The page's suggestion only where it fits the id rule (a run id of any shape may be shown here).
  if (/^[A-Za-z0-9._:-]{1,200}$/.test(suggested)) newId.value = suggested;
  const button = h('button', { type: 'submit', id: 'fork-submit' }, 'Fork');
  const status = h('p', { class: 'reply-status', role: 'status', id: 'fork-status' });
  const form = h('form', { class: 'reply-form' }, newId, button);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    button.disabled = true;
    status.textContent = 'Forking…';
    api.fork(runId, atStep, newId.value.trim()).then(
      (made) => {
        status.replaceChildren('Forked: ', runLink(made.runId, 'fork-link'), ` (from step #${atStep})`);
      },
      (err: unknown) => {
        status.textContent = `Refused: ${errorText(err)}`;
        button.disabled = false;
      },
    );
  });
  const what = waiting
    ? `A new run with steps #0–#${atStep - 1} as they are, waiting for the same request: answer it there, ` +
      'differently if you like. This run is left as it is.'
    : `A new run with ${atStep === 0 ? 'no step' : `steps #0–#${atStep - 1}`} as they are; resumed, it asks ` +
      `the model again at step #${atStep}. Nothing before runs again, and this run is left as it is.`;
  return h(
    'details',
    { class: 'control', id: 'fork', 'data-step': atStep },
    h('summary', {}, 'Fork from here'),
    h('p', { class: 'muted' }, what),
    form,
    status,
  );
}

/** "Forked from <run> at step N", linked, for a fork's page; null for any other run. */
export function forkedFromNote(s: Summary): HTMLElement | null {
  const origin = s.forkedFrom;
  if (!origin) return null;
  return h(
    'p',
    { id: 'forked-from', class: 'route-note' },
    'Forked from ',
    runLink(origin.runId, 'forked-from-link'),
    ` at step #${origin.atStep}: the steps before it are that run's.`,
  );
}
