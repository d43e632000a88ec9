/**
 * The run page: what the run is and where it stands, each open request with the buttons its kind
 * accepts, the steps on a timeline (a step with several calls, each call), and the chosen step in
 * full (step-detail.ts), with the messages its model saw and "fork from here"; its sub-agent runs
 * (and a sub-agent run's parent) linked, a fork's origin, and a stop for a run that has not ended.
 * Live: each record that lands (server-sent events) refreshes the summary and the new steps,
 * without a reload.
 * @module
 */
import { api, follow } from './api.ts';
import type { ApiResume, ApiStepRow, ApiUpgrade, Pending, Summary } from './api.ts';
import { forkedFromNote, forkForm, stopForm } from './control.ts';
import { clipText, h, ms, num, when } from './dom.ts';
import { messagesSection } from './messages.ts';
import { answerPanel } from './pending.ts';
import { openOf, stepDetail, tailDetail, tailOf } from './step-detail.ts';
import { resumeMarker, timeline, upgradeMarker } from './timeline.ts';
import { renderTree } from './tree.ts';

/** Show run `runId` in `app`; returns what stops following it. */
export function showRun(app: HTMLElement, runId: string): () => void {
  const controller = new AbortController();
  const facts = h('dl', { class: 'facts' });
  const banner = h('div', { id: 'log-problems' });
  const tree = h('section', { id: 'run-tree', hidden: true });
  const control = h('section', { id: 'control' });
  const pending = h('section', { id: 'pending', 'aria-live': 'polite', hidden: true });
  const detail = h(
    'section',
    { id: 'detail', class: 'detail', tabindex: -1, 'aria-live': 'polite' },
    h('p', { class: 'muted' }, 'Choose a step (click, or focus the list and use ↑ ↓).'),
  );
  let summary: Summary | null = null;
  let count = 0;

  const tl = timeline({
    load: (from, limit) => api.steps(runId, from, limit),
    select: (i, row) => showDetail(i, row),
    tail: () => tailOf(summary),
    upgradesAt: (i) => upgradesAt(summary, i),
    resumesAt: (i) => resumesAt(summary, i),
  });
  app.replaceChildren(
    h('nav', {}, h('a', { href: '#/', id: 'back' }, '← all runs')),
    h('h1', { id: 'run-title' }, runId),
    facts,
    control,
    tree,
    banner,
    pending,
    h('div', { class: 'run-grid' }, h('section', { class: 'steps', 'aria-label': 'Timeline' }, tl.el), detail),
  );
  app.dataset['state'] = 'run-loading';

  function showDetail(i: number, row: ApiStepRow | null): void {
    const notes = markNotes(summary, i);
    if (i >= count) {
      detail.replaceChildren(...notes, ...tailDetail(summary), ...tailControl(summary));
      return;
    }
    const loading = (): HTMLElement => h('p', { class: 'muted' }, `Loading step #${i}…`);
    const resumes = summary?.resumes ?? [];
    const body = row ? h('div', {}, ...stepDetail(row, () => loadFull(i), resumes), ...stepControl(i)) : loading();
    detail.replaceChildren(...notes, body);
  }

  async function loadFull(i: number): Promise<void> {
    const [row] = await api.steps(runId, i, 1, true);
    if (!row || tl.selected() !== i) return;
    const body = h('div', {}, ...stepDetail(row, null, summary?.resumes ?? []), ...stepControl(i));
    detail.replaceChildren(...markNotes(summary, i), body);
  }

  /**
   * The element `id` of step `i` already shown (a step shown again as records land keeps its opened
   * messages and what was typed), else a new one.
   */
  function kept(id: string, i: number, make: () => HTMLElement): HTMLElement {
    const el = detail.querySelector<HTMLElement>(`#${id}`);
    return el && el.dataset['step'] === String(i) ? el : make();
  }

  /** A completed step's messages, and a fork from it (not of a sub-agent's run: its parent drives it). */
  function stepControl(i: number): HTMLElement[] {
    const fork = summary?.parentRunId ? null : kept('fork', i, () => forkForm(runId, i, false));
    return [kept('step-messages', i, () => messagesSection(runId, i)), ...(fork ? [fork] : [])];
  }

  /** The step in flight: its messages once its model was asked, and a fork where it waits for a person. */
  function tailControl(s: Summary | null): HTMLElement[] {
    if (!s?.inFlight) return [];
    const open = openOf(s);
    const forkable = !s.parentRunId && open.length > 0 && open.every((p) => ['approval', 'answer'].includes(p.kind));
    const i = s.inFlight.stepIndex;
    const fork = forkable ? kept('fork', i, () => forkForm(runId, i, true)) : null;
    return [kept('step-messages', i, () => messagesSection(runId, i)), ...(fork ? [fork] : [])];
  }

  /** The fork's origin, and the stop form while the run has not ended (kept as it is: what was typed in it too). */
  function renderControl(s: Summary): void {
    const note = forkedFromNote(s);
    const shown = control.querySelector('#stop');
    const stop = stopForm(s, () => void refresh());
    control.replaceChildren(...(note ? [note] : []), ...(stop ? [shown ?? stop] : []));
  }

  let refreshing: Promise<void> | null = null;
  let again = false;
  async function refresh(): Promise<void> {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      try {
        const next = await api.summary(runId);
        const before = count;
        const atEnd = tl.selected() >= before || tl.el.scrollTop + tl.el.clientHeight >= tl.el.scrollHeight - 2;
        summary = next;
        count = next.steps ?? 0;
        renderFacts(facts, next);
        renderControl(next);
        renderTree(tree, next);
        renderProblems(banner, next);
        renderPending(next);
        const span = { start: ms(next.span.start), end: Math.max(ms(next.span.end), ms(next.span.start) + 1) };
        tl.update(count, span, Math.min(before, count));
        app.dataset['state'] = 'run';
        app.dataset['steps'] = String(count);
        app.dataset['status'] = next.status;
        // Following the end: the newest step (or what is in flight) stays in view.
        if (before !== count && atEnd && before > 0) tl.select(count - 1 + (tailOf(next) ? 1 : 0));
        else if (tl.selected() >= count) showDetail(tl.selected(), null);
      } catch (e) {
        app.dataset['state'] = 'error';
        banner.replaceChildren(
          h(
            'p',
            { class: 'error', role: 'alert' },
            `Cannot read this run: ${e instanceof Error ? e.message : String(e)}`,
          ),
        );
      } finally {
        refreshing = null;
        if (again) {
          again = false;
          void refresh();
        }
      }
    })();
    return refreshing;
  }

  /** One panel per open request, in call order; a panel still open is kept as it is (what was typed in it too). */
  function renderPending(s: Summary): void {
    const open = openOf(s);
    pending.hidden = open.length === 0;
    const shown = new Map<string, HTMLElement>();
    for (const el of pending.querySelectorAll<HTMLElement>('.pending-panel'))
      shown.set(el.dataset['resultId'] ?? '', el);
    if (open.length === shown.size && open.every((p) => shown.has(p.resultId))) return;
    const intro =
      open.length > 1
        ? h(
            'p',
            { id: 'pending-intro' },
            `${open.length} requests wait for a person. Answer each, in any order: ` +
              'none of the step’s calls runs until all are answered.',
          )
        : null;
    const panel = (p: Pending): HTMLElement =>
      answerPanel(runId, p, s.answering, () => void refresh(), s.replyTo ?? null);
    const panels = open.map((p) => shown.get(p.resultId) ?? panel(p));
    pending.replaceChildren(...(intro ? [intro] : []), ...panels);
  }

  void refresh().then(() => {
    if (summary && summary.status !== 'ended')
      void follow(runId, summary.lastSeq, () => void refresh(), controller.signal);
  });
  const keys = (e: KeyboardEvent): void => {
    const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement;
    if (e.key === 'Escape' && !typing) location.hash = '#/';
  };
  document.addEventListener('keydown', keys);
  return () => {
    controller.abort();
    document.removeEventListener('keydown', keys);
  };
}

/** The upgrades that took effect at step `i`: the run went on under new code from there. */
function upgradesAt(s: Summary | null, i: number): readonly ApiUpgrade[] {
  return (s?.upgrades ?? []).filter((u) => u.stepIndex === i);
}

/** Where later drivers took the run over at step `i` (a viewer older than the marks gives none). */
function resumesAt(s: Summary | null, i: number): readonly ApiResume[] {
  return (s?.resumes ?? []).filter((r) => r.stepIndex === i);
}

/** Above step `i`: each upgrade's marker line where it took effect, then each later driver's where it took over. */
function markNotes(s: Summary | null, i: number): HTMLElement[] {
  return [
    ...upgradesAt(s, i).map((u) => h('p', { class: 'upgrade-note' }, upgradeMarker(u))),
    ...resumesAt(s, i).map((r) => h('p', { class: 'resume-note' }, resumeMarker(r))),
  ];
}

/**
 * Save the run's log: fetched with the access key (which a plain
 * download link could not send), then handed to the browser as a file.
 */
async function saveLog(button: HTMLButtonElement, runId: string): Promise<void> {
  button.disabled = true;
  try {
    const url = URL.createObjectURL(await api.log(runId));
    h('a', { href: url, download: `${runId}.ndjson` }).click();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    button.title = '';
  } catch (e) {
    button.title = `Cannot fetch the log: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    button.disabled = false;
  }
}

function renderFacts(dl: HTMLElement, s: Summary): void {
  const u = s.usage;
  const usage = u
    ? `${num(u.inputTokens + u.outputTokens)} (in ${num(u.inputTokens)}, out ${num(u.outputTokens)}` +
      `${u.cachedInputTokens ? `, cached ${num(u.cachedInputTokens)}` : ''})`
    : 'not reported';
  const pairs: [string, Node | string, string?][] = [
    ['Status', h('span', { class: `badge ${s.status}`, id: 'run-status' }, s.status.replace('_', ' '))],
    ['Stop reason', s.stopReason ?? '–'],
    ['Steps', h('span', { id: 'steps-count' }, num(s.steps ?? 0)), 'steps'],
    ['Valid actions', num(s.validActions)],
    ['Tokens', h('span', { id: 'usage-total' }, usage)],
    ['Started', when(s.span.start)],
    ['Last activity', when(s.span.end)],
    [
      'Log',
      h(
        'button',
        {
          type: 'button',
          id: 'log-download',
          onclick: (e: Event) => void saveLog(e.currentTarget as HTMLButtonElement, s.runId),
        },
        'NDJSON',
      ),
    ],
  ];
  if (s.stopRequest)
    pairs.push(['Stopped by a person', h('span', { id: 'stop-request' }, s.stopRequest.reason ?? '(no reason given)')]);
  if (s.finalAnswer !== null)
    pairs.push(['Final answer', h('span', { id: 'final-answer', class: 'pre-line' }, clipText(s.finalAnswer, 2000))]);
  dl.replaceChildren(...pairs.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))));
}

function renderProblems(el: HTMLElement, s: Summary): void {
  const items: HTMLElement[] = [];
  if (s.error)
    items.push(
      h(
        'p',
        { class: 'error', role: 'alert', id: 'log-error' },
        `This log cannot be read to the end — shown up to the problem. ${s.error}`,
      ),
    );
  for (const w of s.warnings) items.push(h('p', { class: 'warning', id: 'log-warning' }, `Note: ${w}.`));
  el.replaceChildren(...items);
}
