/**
 * The run viewer page: a run list (`#/`) and a run page (`#/run/<id>`), routed by the hash so
 * the server serves one file. `data-state` on `#app` says what is on screen (`list`, `run`,
 * `error`), for people using assistive tools and for the end-to-end tests alike.
 * @module
 */
import { api, ApiError, takeKeyFromUrl } from './api.ts';
import type { ApiRunRow } from './api.ts';
import { h, num, when } from './dom.ts';
import { showRun } from './run.ts';

const app = document.getElementById('app') as HTMLElement;
let leave: (() => void) | null = null;

const STATUSES = ['running', 'interrupted', 'awaiting_input', 'ended', 'halted', 'corrupt'];

function route(): void {
  leave?.();
  leave = null;
  const m = /^#\/run\/(.+)$/.exec(location.hash);
  if (m) {
    let runId: string;
    try {
      runId = decodeURIComponent(m[1] as string);
    } catch {
      runId = m[1] as string;
    }
    leave = showRun(app, runId);
  } else leave = showList();
}

/**
 * The run list: status, stop reason, steps, last activity (a sub-agent's run right under its
 * parent's); filtered by status; refreshed every 2 s.
 */
function showList(): () => void {
  const filter = h(
    'select',
    { id: 'filter', 'aria-label': 'Filter by status' },
    h('option', { value: '' }, 'all statuses'),
    ...STATUSES.map((s) => h('option', { value: s }, s.replace('_', ' '))),
  );
  filter.value = sessionStorage.getItem('polyloop-filter') ?? '';
  const body = h('tbody');
  const count = h('span', { id: 'run-count' });
  const table = h(
    'table',
    { class: 'runs' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Run'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, 'Stop reason'),
        h('th', { scope: 'col', class: 'n' }, 'Steps'),
        h('th', { scope: 'col' }, 'Last activity'),
      ),
    ),
    body,
  );
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  app.replaceChildren(
    h('div', { class: 'toolbar' }, h('h1', {}, 'Runs'), count, h('label', {}, 'Show ', filter)),
    problem,
    h('div', { class: 'scroll-x' }, table),
  );
  app.dataset['state'] = 'list';
  let rows: ApiRunRow[] = [];
  const render = (): void => {
    const shown = rows.filter((r) => filter.value === '' || r.status === filter.value);
    count.textContent = `${num(shown.length)} of ${num(rows.length)}`;
    body.replaceChildren(
      ...shown.map((r) =>
        h(
          'tr',
          { class: `status-${r.status}${r.parentRunId ? ' child-run' : ''}` },
          h(
            'td',
            {},
            // A sub-agent's run, listed right under its parent's.
            r.parentRunId ? h('span', { class: 'tree-mark', title: `sub-agent run of ${r.parentRunId}` }, '└ ') : null,
            h('a', { href: `#/run/${encodeURIComponent(r.runId)}`, class: 'run-link' }, r.runId),
          ),
          h('td', {}, h('span', { class: `badge ${r.status}` }, r.status.replace('_', ' '))),
          h(
            'td',
            {},
            r.error ? h('span', { class: 'error', title: r.error }, 'unreadable log') : (r.stopReason ?? '–'),
          ),
          h('td', { class: 'n' }, r.steps === null ? '–' : num(r.steps)),
          h('td', {}, when(r.updatedAt ?? r.createdAt)),
        ),
      ),
    );
    if (shown.length === 0)
      body.append(
        h(
          'tr',
          {},
          h('td', { colspan: 5, class: 'muted' }, rows.length === 0 ? 'No runs yet.' : 'No run has this status.'),
        ),
      );
  };
  filter.addEventListener('change', () => {
    sessionStorage.setItem('polyloop-filter', filter.value);
    render();
  });
  let stopped = false;
  const load = async (): Promise<void> => {
    try {
      rows = await api.runs();
      problem.hidden = true;
      render();
    } catch (e) {
      problem.hidden = false;
      problem.textContent = `Cannot list the runs: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (!stopped) timer = setTimeout(() => void load(), 2000);
  };
  let timer: ReturnType<typeof setTimeout> | null = null;
  void load();
  // Arrow keys walk the run links; `/` jumps to the filter.
  const keys = (e: KeyboardEvent): void => {
    if (e.key === '/' && document.activeElement !== filter) {
      e.preventDefault();
      filter.focus();
      return;
    }
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const links = [...app.querySelectorAll<HTMLAnchorElement>('a.run-link')];
    if (links.length === 0) return;
    e.preventDefault();
    const at = links.indexOf(document.activeElement as HTMLAnchorElement);
    const next = at < 0 ? 0 : Math.min(links.length - 1, Math.max(0, at + (e.key === 'ArrowDown' ? 1 : -1)));
    links[next]?.focus();
  };
  document.addEventListener('keydown', keys);
  return () => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    document.removeEventListener('keydown', keys);
  };
}

async function start(): Promise<void> {
  try {
    const d = await api.describe();
    (document.getElementById('source') as HTMLElement).textContent =
      `${d.source === 'dir' ? 'directory' : 'Worker'} ${d.where}`;
  } catch (e) {
    app.dataset['state'] = 'error';
    app.replaceChildren(
      h(
        'p',
        { class: 'error', role: 'alert' },
        e instanceof ApiError && e.status === 401
          ? 'This page needs its access key: open the URL polyloop view printed.'
          : `The viewer does not answer: ${String(e)}`,
      ),
    );
    return;
  }
  addEventListener('hashchange', route);
  route();
}

// Before routing reads the hash: `#key=…` is the access key, not a route.
takeKeyFromUrl();
void start();
