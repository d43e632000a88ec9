/**
 * The run's steps as a virtualised list: rows of a fixed height, only those in view (and a few
 * around) in the DOM, pages of steps fetched as they come into view — so a run of 50,000 steps
 * opens as fast as one of five. Each row carries a bar placed on the run's time span.
 * @module
 */
import type { ApiResume, ApiStepRow, ApiUpgrade } from './api.ts';
import { clipText, duration, h, ms, when } from './dom.ts';

export const ROW_HEIGHT = 40;
const PAGE = 100;
const OVERSCAN = 8;

/** What the list needs from its run page. */
export type TimelineHost = {
  /** Fetch steps `from` … `from + limit - 1`. */
  readonly load: (from: number, limit: number) => Promise<ApiStepRow[]>;
  /** A row was chosen (click, Enter, arrow keys). */
  readonly select: (index: number, row: ApiStepRow | null) => void;
  /** The extra last row: the step in flight or waiting, or null. */
  readonly tail: () => { readonly label: string; readonly kind: string } | null;
  /** The upgrades that took effect at step `index` (the run went on under new code from it). */
  readonly upgradesAt: (index: number) => readonly ApiUpgrade[];
  /** Where a later driver took the run over at step `index` (it carried that step out). */
  readonly resumesAt: (index: number) => readonly ApiResume[];
};

/** The list element and what drives it. */
export type Timeline = {
  readonly el: HTMLElement;
  /** The run now has `count` steps spanning `span`; pages at or after `dirtyFrom` are fetched again. */
  update(count: number, span: { start: number; end: number }, dirtyFrom: number): void;
  /** Select row `index` and scroll it into view. */
  select(index: number): void;
  row(index: number): ApiStepRow | null;
  readonly selected: () => number;
};

/** The one-line text of a step: what it did. */
export function stepLabel(row: ApiStepRow): string {
  const s = row.step;
  if (s.calls) return `${s.calls.length} calls: ${s.calls.map((c) => c.actionRepr).join(', ')}`;
  if (s.decision === 'action') return s.actionRepr ?? 'action';
  if (s.decision === 'final') return `final answer: ${s.finalAnswer ?? ''}`;
  if (s.decision === 'invalid') return `invalid reply: ${s.explanation ?? ''}`;
  return `${s.decision}: ${s.observation ?? ''}`;
}

/**
 * An upgrade as `polyloop show` prints it (the time in the reader's zone):
 * `── upgrade before step 3: <reason> (changed: context, tools +search) at <time>`.
 */
export function upgradeMarker(u: ApiUpgrade): string {
  const tools = ['tools', ...u.tools.added.map((n) => `+${n}`), ...u.tools.removed.map((n) => `-${n}`)].join(' ');
  const changed = u.changed.map((key) => (key === 'tools' ? tools : key)).join(', ');
  return `── upgrade before step ${u.stepIndex}: ${u.reason} (changed: ${changed}) at ${when(u.at)}`;
}

/** The mark of a row where the run went on under new code (its markers as the tooltip), or null. */
function upgradeTag(upgrades: readonly ApiUpgrade[]): HTMLElement | null {
  if (upgrades.length === 0) return null;
  return h('span', { class: 'tag t-upgrade', title: upgrades.map(upgradeMarker).join('\n') }, 'upgrade');
}

/**
 * Where a later driver took the run over, as `polyloop show` prints it (the time in the reader's
 * zone): `── resumed by a later driver (driver 2) at step 3 (replay_action) at <time>`.
 */
export function resumeMarker(r: ApiResume): string {
  const how = r.resolution ?? 'at a step boundary';
  return `── resumed by a later driver (driver ${r.driver}) at step ${r.stepIndex} (${how}) at ${when(r.at)}`;
}

/** The mark of a row a later driver took the run over at (its markers, how it went on as the tooltip), or null. */
function resumeTag(resumes: readonly ApiResume[]): HTMLElement | null {
  if (resumes.length === 0) return null;
  return h('span', { class: 'tag t-resumed t-takeover', title: resumes.map(resumeMarker).join('\n') }, 'resumed');
}

/**
 * Short marks of a step: synthetic, denied, resumed, asked a person, ran a sub-agent. `takenOver`:
 * a later driver's mark is on the step, which says `resumed` itself (with how, in its tooltip).
 */
export function stepTags(row: ApiStepRow, takenOver = false): string[] {
  const s = row.step;
  const tags: string[] = [];
  if (s.actionStatus && s.actionStatus !== 'executed') tags.push(s.actionStatus.replace('_', ' '));
  if (s.observationIsSynthetic) tags.push('synthetic');
  if (row.input.some((i) => i.kind !== 'settle'))
    tags.push(`person: ${row.input.map((i) => String(i.reply?.['kind'] ?? '…')).join(', ')}`);
  if (row.resumed && !takenOver) tags.push('resumed');
  if (s.childRunId !== undefined || s.calls?.some((c) => c.childRunId !== undefined)) tags.push('sub-agent');
  return tags;
}

/** Build the virtualised list. */
export function timeline(host: TimelineHost): Timeline {
  const spacer = h('div', { class: 'spacer' });
  const el = h(
    'div',
    { class: 'timeline', role: 'listbox', tabindex: 0, 'aria-label': 'Steps', id: 'timeline' },
    spacer,
  );
  const pages = new Map<number, ApiStepRow[] | 'loading'>();
  let count = 0;
  let span = { start: 0, end: 1 };
  let chosen = -1;
  let frame = 0;

  const rowAt = (i: number): ApiStepRow | null => {
    const page = pages.get(Math.floor(i / PAGE));
    return page && page !== 'loading' ? (page[i % PAGE] ?? null) : null;
  };
  const fetchPage = (p: number): void => {
    if (pages.has(p)) return;
    pages.set(p, 'loading');
    host.load(p * PAGE, PAGE).then(
      (rows) => {
        pages.set(p, rows);
        schedule();
        if (chosen >= p * PAGE && chosen < (p + 1) * PAGE) host.select(chosen, rowAt(chosen));
      },
      () => pages.delete(p),
    );
  };
  const total = (): number => count + (host.tail() ? 1 : 0);

  function render(): void {
    frame = 0;
    const n = total();
    spacer.style.height = `${n * ROW_HEIGHT}px`;
    const first = Math.max(0, Math.floor(el.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(n - 1, Math.ceil((el.scrollTop + el.clientHeight) / ROW_HEIGHT) + OVERSCAN);
    const rows: HTMLElement[] = [];
    for (let i = first; i <= last; i++) rows.push(i < count ? stepRowEl(i) : tailEl(i));
    spacer.replaceChildren(...rows);
  }
  const schedule = (): void => {
    if (frame === 0) frame = requestAnimationFrame(render);
  };

  function stepRowEl(i: number): HTMLElement {
    const row = rowAt(i);
    if (!row) fetchPage(Math.floor(i / PAGE));
    const s = row?.step;
    const start = ms(s?.startedAt);
    const end = ms(s?.endedAt);
    const scale = Math.max(1, span.end - span.start);
    const left = Number.isFinite(start) ? ((start - span.start) / scale) * 100 : 0;
    const width = Number.isFinite(start) && Number.isFinite(end) ? Math.max(0.3, ((end - start) / scale) * 100) : 0;
    const resumes = host.resumesAt(i);
    const tags = row ? stepTags(row, resumes.length > 0) : [];
    const upgrades = host.upgradesAt(i);
    const resumed = row?.resumed || resumes.length > 0 ? ' resumed' : '';
    const marks = `${i === chosen ? ' selected' : ''}${s ? ` d-${s.decision}` : ''}${resumed}`;
    const attrs = {
      class: `row${marks}${upgrades.length > 0 ? ' upgraded' : ''}`,
      role: 'option',
      'aria-selected': i === chosen ? 'true' : 'false',
      'data-index': i,
      style: `top:${i * ROW_HEIGHT}px`,
      onclick: () => api.select(i),
    };
    return h(
      'div',
      attrs,
      h('span', { class: 'idx' }, `#${i}`),
      h('span', { class: 'label' }, row ? clipText(stepLabel(row), 200) : '…'),
      upgradeTag(upgrades),
      resumeTag(resumes),
      ...tags.map((t) => h('span', { class: `tag t-${t.split(/[:\s]/)[0]}` }, t)),
      h('span', { class: 'dur' }, s ? duration(end - start) : ''),
      h(
        'span',
        { class: 'track', 'aria-hidden': 'true' },
        h('span', {
          class: 'bar',
          style: `left:${Math.min(100, Math.max(0, left)).toFixed(3)}%;width:${Math.min(100, width).toFixed(3)}%`,
        }),
      ),
    );
  }

  function tailEl(i: number): HTMLElement {
    const t = host.tail();
    const upgrades = host.upgradesAt(i);
    const marks = `${t?.kind ?? ''}${i === chosen ? ' selected' : ''}${upgrades.length > 0 ? ' upgraded' : ''}`;
    const attrs = {
      class: `row tail ${marks}`,
      role: 'option',
      'aria-selected': i === chosen ? 'true' : 'false',
      'data-index': i,
      id: 'tail-row',
      style: `top:${i * ROW_HEIGHT}px`,
      onclick: () => api.select(i),
    };
    const label = h('span', { class: 'label' }, t?.label ?? '');
    const taken = resumeTag(host.resumesAt(i));
    return h('div', attrs, h('span', { class: 'idx' }, `#${i}`), label, upgradeTag(upgrades), taken);
  }

  el.addEventListener('scroll', schedule, { passive: true });
  addEventListener('resize', schedule);
  el.addEventListener('keydown', (e) => {
    const n = total();
    const moves: Record<string, number> = {
      ArrowDown: 1,
      j: 1,
      ArrowUp: -1,
      k: -1,
      PageDown: 10,
      PageUp: -10,
      Home: -n,
      End: n,
    };
    const by = moves[e.key];
    if (by === undefined || n === 0) return;
    e.preventDefault();
    api.select(Math.min(n - 1, Math.max(0, (chosen < 0 ? -1 : chosen) + by)));
  });

  const api: Timeline = {
    el,
    update(c, sp, dirtyFrom) {
      for (const p of [...pages.keys()]) if ((p + 1) * PAGE > dirtyFrom) pages.delete(p);
      count = c;
      span = sp;
      schedule();
    },
    select(index) {
      chosen = index;
      const top = index * ROW_HEIGHT;
      if (top < el.scrollTop) el.scrollTop = top;
      else if (top + ROW_HEIGHT > el.scrollTop + el.clientHeight) el.scrollTop = top + ROW_HEIGHT - el.clientHeight;
      schedule();
      host.select(index, index < count ? rowAt(index) : null);
    },
    row: rowAt,
    selected: () => chosen,
  };
  return api;
}
