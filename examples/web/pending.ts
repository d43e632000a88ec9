/**
 * The pending request of the web example: what the person is asked, and one control per reply
 * the request accepts (`acceptedReplies`), built from the request alone — so a reloaded or
 * reopened tab, which reads the request from the log, shows exactly what the first tab showed.
 */
import { acceptedReplies } from '../../src/core/index.ts';
import type { InputReply, InputRequest, JsonValue } from '../../src/core/index.ts';

type Args = Readonly<Record<string, JsonValue>>;

function argsOf(pending: InputRequest): { name: string; args: Args } | null {
  const action = pending.decision?.action;
  return action?.kind === 'tool_call' ? { name: action.name, args: action.arguments as Args } : null;
}

/** One sentence saying what the person is asked. */
export function describePending(pending: InputRequest): string {
  const call = argsOf(pending);
  if (pending.kind === 'answer')
    return `The agent asks: ${String(call?.args['question'] ?? call?.name ?? 'a question')}`;
  if (pending.kind === 'approval')
    return call?.name === 'send_email'
      ? `The agent wants to email ${String(call.args['to'])}. Approve?`
      : `The agent wants to run ${call?.name ?? 'an action'}. Approve?`;
  if (pending.target === 'model_call')
    return 'The tab closed during a model call that must not be repeated unasked. Call the model again?';
  return `The tab closed while ${call?.name ?? 'an action'} was running, so nobody knows whether it happened. Check the outbox below, then say.`;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> = {},
): HTMLElementTagNameMap[K] {
  return Object.assign(document.createElement(tag), props);
}

type Control = {
  readonly id: string;
  readonly label: string;
  readonly box?: { readonly placeholder: string; readonly value: string };
  readonly reply: (text: string) => void;
};

/** A button, with a text box before it when the reply carries text. */
function control({ id, label, box, reply }: Control): HTMLElement {
  const row = el('div', { className: 'reply' });
  const input = box ? el('input', { id: `${id}-text`, placeholder: box.placeholder, value: box.value }) : null;
  const button = el('button', { id, textContent: label, type: 'button' });
  button.addEventListener('click', () => reply(input?.value ?? ''));
  row.append(...(input ? [input] : []), button);
  return row;
}

/**
 * Fill `container` with the request and its controls; `onReply` gets the reply the person chose
 * (each control names the request's resultId). Button ids: `approve`, `deny`, `answer`,
 * `executed`, `retry`, `cancel`, each after `idPrefix` (a second panel on the page keeps its ids
 * apart); text boxes `<id>-text`.
 */
export function renderPending(
  container: HTMLElement,
  pending: InputRequest,
  onReply: (reply: InputReply) => void,
  idPrefix = '',
): void {
  const call = argsOf(pending);
  const resultId = pending.resultId;
  const parts: HTMLElement[] = [el('p', { className: 'ask', textContent: describePending(pending) })];
  if (call && pending.kind !== 'answer')
    parts.push(el('pre', { className: 'call', textContent: `${call.name}(${JSON.stringify(call.args, null, 2)})` }));
  const sentText = call?.name === 'send_email' ? `Sent to ${String(call.args['to'])}.` : '';
  for (const kind of acceptedReplies(pending.kind, pending.target)) {
    const id = `${idPrefix}${kind}`;
    if (kind === 'approve') parts.push(control({ id, label: 'Approve', reply: () => onReply({ kind, resultId }) }));
    if (kind === 'deny')
      parts.push(
        control({
          id,
          label: 'Deny',
          box: { placeholder: 'why not (the agent sees this)', value: 'Not now.' },
          reply: (reason) => onReply({ kind, resultId, reason }),
        }),
      );
    if (kind === 'answer')
      parts.push(
        control({
          id,
          label: 'Answer',
          box: { placeholder: 'your answer', value: '' },
          reply: (text) => onReply({ kind, resultId, text }),
        }),
      );
    if (kind === 'executed')
      parts.push(
        control({
          id,
          label: 'It happened',
          box: { placeholder: 'what it did', value: sentText },
          reply: (observation) => onReply({ kind, resultId, observation }),
        }),
      );
    if (kind === 'retry')
      parts.push(control({ id, label: 'It did not happen: run it again', reply: () => onReply({ kind, resultId }) }));
    if (kind === 'cancel')
      parts.push(control({ id, label: 'Cancel the run', reply: () => onReply({ kind, resultId }) }));
  }
  container.replaceChildren(...parts);
  container.hidden = false;
}

/**
 * Fill `container` with one panel per open request (`.request`, `data-result-id`), in call order,
 * each answering its own request. A request of one call among several (resultId `s{i}.a{j}.…`)
 * gets ids after `s{i}-a{j}-` (so `#s0-a1-approve`), the same while the others are answered;
 * a step's only request keeps the plain ids.
 */
export function renderRequests(
  container: HTMLElement,
  open: readonly InputRequest[],
  onReply: (reply: InputReply) => void,
  idPrefix = '',
): void {
  const panels = open.map((pending) => {
    const panel = el('div', { className: 'request' });
    panel.dataset['resultId'] = pending.resultId;
    const call = /^(s\d+)\.(a\d+)\./.exec(pending.resultId);
    renderPending(panel, pending, onReply, call ? `${idPrefix}${call[1]}-${call[2]}-` : idPrefix);
    return panel;
  });
  container.replaceChildren(...panels);
  container.hidden = panels.length === 0;
}
