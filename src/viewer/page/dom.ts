/**
 * Building the page's DOM. Every text from a log goes in as a text node (`textContent`), never
 * as markup: a model that writes `<script>` shows those characters.
 * @module
 */

type Attrs = Readonly<Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>>;
type Child = Node | string | number | null | undefined | false;

/**
 * An element with attributes (`on*` functions become listeners;
 * false/null/undefined are left out) and children (strings become text).
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    // Through the CSSOM: the page's content security policy refuses inline style attributes.
    else if (k === 'style' && typeof v === 'string') el.style.cssText = v;
    else if (v === true) el.setAttribute(k, '');
    else if (v !== false && v !== null && v !== undefined) el.setAttribute(k, String(v));
  }
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'number' ? String(c) : c);
  return el;
}

/** `text` cut to `max` characters with an ellipsis. */
export function clipText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A duration in ms as `850 ms`, `12.4 s`, `3 min 5 s`, `2 h 4 min`. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

/** An ISO time as the reader's local date and time, or `–`. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Milliseconds of an ISO time, or NaN. */
export function ms(iso: string | null | undefined): number {
  return iso ? Date.parse(iso) : Number.NaN;
}

/** A number with thousands separators. */
export function num(n: number): string {
  return n.toLocaleString('en-US');
}

/** JSON of a value, indented, for arguments and replies. */
export function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
