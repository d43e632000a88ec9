/**
 * A step's messages as the model saw them: the run context, tool section, injections and goal of
 * the code in force at that model call, then the history before it, and the tools of the call —
 * rebuilt by the viewer from the log (`GET /runs/:id/steps/:step/messages`). Collapsed until
 * opened, then fetched a page at a time; what the log cannot give back is said first.
 * @module
 */
import { api } from './api.ts';
import type { ApiBlock, ApiMessage, ApiMessages } from './api.ts';
import { clipText, h, num, pretty } from './dom.ts';

const PAGE = 200;

const PARTS: Record<ApiMessage['part'], string> = {
  context: 'context',
  tools: 'tool section',
  injection: 'injection',
  goal: 'goal',
  history: 'history',
};

/** The collapsed section of step `step` of run `runId`; its messages are fetched when it is first opened. */
export function messagesSection(runId: string, step: number): HTMLElement {
  const body = h('div', { class: 'messages-body' }, h('p', { class: 'muted' }, 'Loading…'));
  const section = h(
    'details',
    { class: 'messages', id: 'step-messages', 'data-step': step },
    h('summary', {}, 'Messages the model saw (goal, context, history, tools)'),
    body,
  );
  let loaded = false;
  section.addEventListener('toggle', () => {
    if (!section.open || loaded) return;
    loaded = true;
    void load(runId, step, body);
  });
  return section;
}

async function load(runId: string, step: number, body: HTMLElement): Promise<void> {
  let page: ApiMessages;
  try {
    page = await api.messages(runId, step, 0, PAGE);
  } catch (e) {
    body.replaceChildren(h('p', { class: 'muted' }, e instanceof Error ? e.message : String(e)));
    return;
  }
  const list = h('ol', { class: 'message-list', start: 1 });
  const more = h('div', {});
  const add = (p: ApiMessages): void => {
    list.append(...p.messages.map((m, i) => messageItem(m, p.from + i)));
    const next = p.from + p.messages.length;
    more.replaceChildren(
      next >= p.total
        ? ''
        : h(
            'button',
            { type: 'button', onclick: () => void api.messages(runId, step, next, PAGE).then(add) },
            `Show the next ${num(Math.min(PAGE, p.total - next))} of ${num(p.total - next)} messages`,
          ),
    );
  };
  add(page);
  body.replaceChildren(
    h('ul', { class: 'limits', id: 'messages-limits' }, ...page.limits.map((l) => h('li', { class: 'warning' }, l))),
    h('p', { class: 'muted' }, `${num(page.total)} messages handed to the model at step #${page.stepIndex}.`),
    list,
    more,
    toolsBlock(page),
  );
}

function messageItem(m: ApiMessage, index: number): HTMLElement {
  const from = m.part === 'history' && m.step !== null ? `${PARTS[m.part]} of step #${m.step}` : PARTS[m.part];
  return h(
    'li',
    { class: `message m-${m.part}`, 'data-part': m.part, value: index + 1 },
    h('p', { class: 'message-head' }, h('strong', {}, m.message.role), ` · ${from}`),
    ...m.message.content.map(blockEl),
    m.clippedChars > 0
      ? h('p', { class: 'muted' }, `${num(m.clippedChars)} more characters left out here (the step shows them whole).`)
      : null,
  );
}

function blockEl(b: ApiBlock): HTMLElement {
  switch (b.type) {
    case 'text':
      return h('pre', {}, b.text);
    case 'reasoning':
      return h('div', {}, h('p', { class: 'muted' }, 'reasoning'), h('pre', {}, b.text));
    case 'tool_call':
      return h(
        'div',
        {},
        h('p', {}, 'tool call ', h('strong', { class: 'tool-name' }, b.name), ` (${b.id})`),
        h('pre', { class: 'args' }, pretty(b.arguments)),
      );
    case 'tool_result':
      return h('div', {}, h('p', { class: 'muted' }, `result of ${b.toolCallId}`), h('pre', {}, b.text));
    default:
      return h('p', { class: 'muted' }, `provider data: ${clipText(JSON.stringify(b) ?? '', 200)}`);
  }
}

/** The tools of the call (its `tools` field) and its binding. */
function toolsBlock(page: ApiMessages): HTMLElement {
  const binding = Object.entries(page.binding);
  return h(
    'div',
    { class: 'block', id: 'messages-tools' },
    h('h3', {}, `Tools handed with the call (${num(page.tools.length)})`),
    page.tools.length === 0
      ? h('p', { class: 'muted' }, 'none')
      : h(
          'ul',
          {},
          ...page.tools.map((t) =>
            h(
              'li',
              {},
              h('strong', { class: 'tool-name' }, t.name),
              ` — ${t.description}`,
              h('details', {}, h('summary', {}, 'parameters'), h('pre', { class: 'args' }, pretty(t.parameters))),
            ),
          ),
        ),
    binding.length === 0
      ? null
      : h('p', { class: 'muted' }, `binding: ${binding.map(([k, v]) => `${k}=${v}`).join(', ')}`),
  );
}
