/**
 * The tree of runs on the run page: a link to a run, the sub-agent runs a run's log names, and a
 * sub-agent run's parent (and where a reply to it goes).
 * @module
 */
import type { ApiChildRun, Summary } from './api.ts';
import { h } from './dom.ts';

/** A link to run `runId`'s page. */
export function runLink(runId: string, id?: string): HTMLAnchorElement {
  return h('a', { href: `#/run/${encodeURIComponent(runId)}`, class: 'tree-link', id }, runId);
}

const STATES: Record<string, string> = { finished: 'finished', awaiting_input: 'waiting for a person' };

/** The run's parent (a sub-agent's run) and its sub-agent runs, or nothing for a run with neither. */
export function renderTree(el: HTMLElement, s: Summary): void {
  const children = s.children ?? [];
  const parent = s.parentRunId ?? null;
  el.hidden = children.length === 0 && parent === null;
  const parts: (HTMLElement | null)[] = [
    parent === null ? null : h('p', { id: 'parent-run' }, 'Sub-agent run of ', runLink(parent), '.'),
    children.length === 0
      ? null
      : h('div', { id: 'children' }, h('h2', {}, 'Sub-agent runs'), h('ul', {}, ...children.map(childItem))),
  ];
  el.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null));
}

function childItem(c: ApiChildRun): HTMLElement {
  const state = STATES[c.state] ?? c.state;
  return h(
    'li',
    { 'data-run-id': c.runId, 'data-state': c.state },
    runLink(c.runId),
    ` — step #${c.stepIndex} (${c.resultId}), ${state}`,
  );
}
