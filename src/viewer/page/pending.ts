/**
 * An open request and its buttons: approve, deny with a reason, answer, executed with what
 * happened, retry, cancel — exactly the replies the request accepts (one panel per request: a step
 * with several calls may wait for several, each answered on its own). A reply goes to
 * `POST /runs/:id/input`, which the viewer carries out as `resume(…, { input })` would. When the
 * viewer's agent no longer fits the run, the refusal says why and the panel offers an upgrade:
 * a reason, then `POST /runs/:id/upgrade` with the reply, as `resume(…, { upgrade, input })`.
 * A sub-agent's request shows what it really asks, in which run; its reply is the parent's, which
 * carries it down — so on a sub-agent run's own page, a reply goes to the run waiting on it.
 * An approval of a call of the run's own tools shows the proposed arguments as JSON to edit:
 * "Approve as edited" sends them with the approval, and the refusal (not JSON, or every problem
 * the tool's schema finds) is shown as any other.
 * @module
 */
import { api, ApiError } from './api.ts';
import type { ApiReplyRoute, Pending, Reply, Summary } from './api.ts';
import { h, pretty } from './dom.ts';
import { runLink } from './tree.ts';

const LABELS: Record<string, string> = {
  approve: 'Approve',
  deny: 'Deny',
  answer: 'Send answer',
  executed: 'It happened',
  retry: 'Retry',
  cancel: 'Cancel the run',
};
/** The text field a reply kind needs, and its label. */
const FIELDS: Record<string, [string, string] | undefined> = {
  deny: ['reason', 'Reason (the model reads it)'],
  answer: ['text', 'Answer'],
  executed: ['observation', 'What happened (the observation)'],
};

/** What the upgrade button does besides upgrading, per reply kind. */
const AND: Record<string, string> = {
  approve: 'approve',
  deny: 'deny',
  answer: 'answer',
  executed: 'record what happened',
  retry: 'retry',
  cancel: 'cancel',
};

/**
 * The panel for `p`; `done` is called once a reply was stored. A request of one call of a step with
 * several (`s2.a1.input`) suffixes its elements' ids with the call, so that several panels can stand
 * side by side; every other request's panel keeps the plain ids. `route`: the run and request a
 * reply goes to instead (a sub-agent run its parent waits on).
 */
export function answerPanel(
  runId: string,
  p: Pending,
  answering: Summary['answering'],
  done: () => void,
  route: ApiReplyRoute | null = null,
): HTMLElement {
  const id = idsOf(p.resultId);
  const status = h('p', { class: 'reply-status', role: 'status', id: id('reply-status') });
  const upgradeSlot = h('div', { class: 'upgrade-slot' });
  const asked = p.asked ?? null;
  const action = asked ? asked.action : p.action;
  const to = route ?? { runId, resultId: p.resultId };
  const enable = (on: boolean): void => {
    for (const b of panel.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement>(
      'button, input, textarea',
    ))
      b.disabled = !on;
  };
  /** Send `reply` (through an upgrade with `reason` when given); a mismatch offers the upgrade. */
  const send = (reply: Reply, reason: string | null): void => {
    const kind = reply['kind'] as string;
    enable(false);
    status.textContent = 'Sending…';
    (reason === null ? api.answer(to.runId, reply) : api.upgrade(to.runId, reason, reply)).then(
      () => {
        status.textContent = `${reason === null ? '' : 'Upgraded. '}Reply "${kind}" stored; the run goes on.`;
        upgradeSlot.replaceChildren();
        done();
      },
      (err: unknown) => {
        status.textContent = `Refused: ${err instanceof Error ? err.message : String(err)}`;
        enable(true);
        const mismatch = err instanceof ApiError && err.code === 'run_identity_mismatch';
        if (mismatch) upgradeSlot.replaceChildren(upgradeForm(reply, send, id));
      },
    );
  };
  // Only the run's own approval: a sub-agent's call is approved as proposed through its parent.
  const own = route === null && asked === null && p.kind === 'approval' && p.accepts.includes('approve');
  const call = own && action?.kind === 'tool_call' ? action : null;
  const edit = call ? editForm(call.arguments, id, answering.enabled, status, (r) => send(r, null), to) : null;
  const forms = p.accepts.map((kind) => {
    const field = FIELDS[kind];
    const input = field
      ? h('input', {
          type: 'text',
          name: field[0],
          id: id(`reply-${kind}-text`),
          'aria-label': field[1],
          placeholder: field[1],
          disabled: !answering.enabled,
        })
      : null;
    const button = h(
      'button',
      { type: 'submit', class: `reply ${kind}`, 'data-reply': kind, disabled: !answering.enabled },
      LABELS[kind] ?? kind,
    );
    const form = h('form', { class: 'reply-form' }, input, button);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const reply: Reply = { kind, resultId: to.resultId };
      if (field && input) reply[field[0]] = input.value;
      send(reply, null);
    });
    return form;
  });
  const panel = h(
    'div',
    { class: 'pending-panel', 'data-result-id': p.resultId },
    asked
      ? h(
          'h2',
          {},
          `Waiting for a person: ${asked.kind} at step #${asked.stepIndex} of sub-agent run `,
          runLink(asked.runId, 'asked-run'),
        )
      : h('h2', {}, `Waiting for a person: ${p.kind} at step #${p.stepIndex}`),
    h('p', { class: 'muted' }, requestNote(p, asked !== null ? asked.kind : p.kind)),
    route
      ? h(
          'p',
          { class: 'route-note' },
          'A sub-agent of ',
          runLink(route.runId),
          ` waits on this: the reply goes to its request ${route.resultId}, which carries it here.`,
        )
      : null,
    action
      ? h('p', {}, 'Action: ', h('strong', { class: 'tool-name' }, action.kind === 'tool_call' ? action.name : 'code'))
      : h('p', {}, 'The model call'),
    edit?.textarea ??
      (action
        ? h(
            'pre',
            { class: 'args', id: id('pending-args') },
            action.kind === 'tool_call' ? pretty(action.arguments) : action.source,
          )
        : null),
    h('div', { class: 'replies' }, ...forms, edit?.form ?? null),
    answering.enabled
      ? null
      : h(
          'p',
          { class: 'warning', id: id('answer-why') },
          `Buttons disabled: ${answering.why ?? 'this viewer cannot answer'}.`,
        ),
    status,
    upgradeSlot,
  );
  return panel;
}

/** The request's id(s) and, for a `settle`, what is asked. */
function requestNote(p: Pending, kind: string): string {
  const crashed = kind === 'settle' ? ' — the run crashed while this was in flight: did it happen?' : '';
  const ids = p.asked ? `${p.asked.resultId} of the sub-agent run; the reply is this run's ${p.resultId}` : p.resultId;
  return ids + crashed;
}

/** An element id of the panel of request `resultId`: plain, or suffixed with the call for a call's request. */
function idsOf(resultId: string): (name: string) => string {
  const call = /^s\d+\.(a\d+)\./.exec(resultId)?.[1];
  return (name) => (call === undefined ? name : `${name}-${call}`);
}

/**
 * The proposed arguments as JSON to edit, and "Approve as edited": the approval with the arguments
 * as edited — or as proposed when the edit changed nothing, so that the run never says a person
 * changed them when no one did. Text that is not JSON is refused here, before anything is sent.
 */
function editForm(
  proposed: unknown,
  id: (name: string) => string,
  enabled: boolean,
  status: HTMLElement,
  send: (reply: Reply) => void,
  to: ApiReplyRoute,
): { readonly textarea: HTMLTextAreaElement; readonly form: HTMLElement } {
  const text = pretty(proposed);
  const label = 'The arguments to run it with (JSON): edit them, then Approve as edited';
  const rows = Math.min(16, Math.max(3, text.split('\n').length));
  const textarea = h('textarea', {
    class: 'args',
    id: id('pending-args'),
    'aria-label': label,
    spellcheck: 'false',
    rows,
    disabled: !enabled,
  });
  textarea.value = text;
  textarea.defaultValue = text;
  const button = h(
    'button',
    { type: 'submit', class: 'reply approve', id: id('approve-edited'), disabled: !enabled },
    'Approve as edited',
  );
  const form = h('form', { class: 'reply-form' }, button);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    let edited: unknown;
    try {
      edited = JSON.parse(textarea.value);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      status.textContent = `Refused: the edited arguments are not JSON (${why})`;
      return textarea.focus();
    }
    const same = JSON.stringify(sorted(edited)) === JSON.stringify(sorted(proposed));
    send(
      same ? { kind: 'approve', resultId: to.resultId } : { kind: 'approve', resultId: to.resultId, arguments: edited },
    );
  });
  return { textarea, form };
}

/** A JSON value with its object keys sorted, to compare two values whatever the order of their keys. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort();
  return Object.fromEntries(keys.map((k) => [k, sorted((value as Record<string, unknown>)[k])]));
}

/** The offer to move the run onto the viewer's agent with a reason, then carry out `reply` under it. */
type Send = (reply: Reply, reason: string) => void;

function upgradeForm(reply: Reply, send: Send, id: (name: string) => string): HTMLElement {
  const label = 'Why the run goes on under the new code';
  const placeholder = 'Why (e.g. deploy 42: search tool added)';
  const reason = h('input', {
    type: 'text',
    id: id('upgrade-reason'),
    required: true,
    'aria-label': label,
    placeholder,
  });
  const kind = reply['kind'] as string;
  const button = h('button', { type: 'submit', id: id('upgrade-submit') }, `Upgrade and ${AND[kind] ?? kind}`);
  const why =
    'This run started under other code than the agent this viewer has. ' +
    'Upgrading records why and what changed; the run goes on under the new code from this step.';
  const fields = h('div', { class: 'reply-form' }, reason, button);
  const form = h('form', { class: 'upgrade-form', id: id('upgrade-form') }, h('p', { class: 'muted' }, why), fields);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (reason.value.trim() === '') return reason.focus();
    send(reply, reason.value);
  });
  return form;
}
