/**
 * The stdout table of `npm run bench`, and the derived growth row of section 1.
 * @module
 */
import type { Row } from './kernel.ts';

/**
 * µs/step at the largest N ÷ at the smallest, kernel and floor: near 1 when nothing per step
 * grows with the history; well above 1 means O(history) work per step.
 */
export function growthRow(rows: readonly Row[]): Row {
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (!first || !last || first.floor === null || last.floor === null)
    throw new Error('growth needs at least one overhead row with a floor');
  return {
    section: 'overhead',
    name: `growth: µs/step at ${last.name.split('N=')[1] ?? '?'} ÷ at ${first.name.split('N=')[1] ?? '?'}`,
    unit: '×',
    value: last.value / first.value,
    floor: last.floor / first.floor,
    samples: [],
    floorSamples: [],
    note: 'must stay near 1 (no O(history) work per step)',
  };
}

function fmt(n: number | null): string {
  if (n === null) return '';
  const abs = Math.abs(n);
  if (abs >= 10_000) return Math.round(n).toLocaleString('en-US');
  if (abs >= 100) return n.toFixed(0);
  if (abs >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

/** A fixed-width text table: figure, median, floor, ratio, unit, note. */
export function formatTable(rows: readonly Row[]): string {
  const head = ['section', 'figure', 'median', 'floor', 'ratio', 'unit', 'note'];
  const body = rows.map((r) => [
    r.section,
    r.name,
    fmt(r.value),
    fmt(r.floor),
    r.floor ? `${(r.value / r.floor).toFixed(2)}×` : '',
    r.unit,
    r.note ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** The same table in Markdown, for docs/performance.md. */
export function formatMarkdown(rows: readonly Row[]): string {
  const out = ['| section | figure | median | floor | ratio | unit | note |', '|---|---|--:|--:|--:|---|---|'];
  for (const r of rows)
    out.push(
      `| ${r.section} | ${r.name} | ${fmt(r.value)} | ${fmt(r.floor)} | ${r.floor ? `${(r.value / r.floor).toFixed(2)}×` : ''} | ${r.unit} | ${r.note ?? ''} |`,
    );
  return out.join('\n');
}
