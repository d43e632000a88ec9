/**
 * Comparing JSON values read from logs (pure, sync): the paths at which two parameter snapshots
 * differ, and whether two decoded values are equal.
 * @module
 */
import type { JsonValue } from '../types.ts';

/**
 * Dotted paths at which two snapshots differ, sorted; `[]` when equal. Arrays of uniquely named
 * objects (tools, injection entries) compare by name (`tools[search].description`), other arrays
 * by index (`context.run.0.content`); a path present on one side only is listed too.
 */
export function diffSnapshots(stored: JsonValue, current: JsonValue): string[] {
  const out: string[] = [];
  diff(stored, current, '', out);
  // A key a 1.0 writer did not record is no difference when the stored snapshot lacks it.
  const lacks = (key: string): boolean => isObject(stored) && !(key in stored);
  return out.filter((path) => !(ADDED_AFTER_1_0.includes(path) && lacks(path))).sort();
}

/** Top-level snapshot keys a 1.0 writer did not record. */
const ADDED_AFTER_1_0: readonly string[] = ['executorReplayPolicy'];

function diff(a: JsonValue | undefined, b: JsonValue | undefined, path: string, out: string[]): void {
  if (a === b) return;
  const bothArrays = Array.isArray(a) && Array.isArray(b);
  const bothObjects = isObject(a) && isObject(b);
  if (!bothArrays && !bothObjects) {
    out.push(path || '(root)');
    return;
  }
  if (bothArrays) {
    const l = namesOf(a as readonly JsonValue[]);
    const r = namesOf(b as readonly JsonValue[]);
    if (l !== null && r !== null)
      return diffNamed(a as readonly JsonValue[], l, b as readonly JsonValue[], r, path, out);
  }
  const left = a as Record<string, JsonValue>;
  const right = b as Record<string, JsonValue>;
  if (bothArrays && (a as readonly JsonValue[]).length !== (b as readonly JsonValue[]).length) {
    out.push(path || '(root)');
    return;
  }
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) diff(left[key], right[key], path ? `${path}.${key}` : key, out);
}

/**
 * The `name` of every element, when each is an object with a unique string name (tools, injection entries); else null.
 */
function namesOf(items: readonly JsonValue[]): string[] | null {
  const names = items.map((item) => (isObject(item) && typeof item['name'] === 'string' ? item['name'] : null));
  return names.every((n): n is string => n !== null) && new Set(names).size === names.length ? names : null;
}

/**
 * Named elements compare by name (`tools[search].description`): one added or removed is named
 * itself, and the same names in another order name the array (order is part of the prompt).
 */
function diffNamed(
  a: readonly JsonValue[],
  l: readonly string[],
  b: readonly JsonValue[],
  r: readonly string[],
  path: string,
  out: string[],
): void {
  const at = (name: string): string => `${path || '(root)'}[${name}]`;
  for (const name of new Set([...l, ...r])) {
    const i = l.indexOf(name);
    const j = r.indexOf(name);
    if (i < 0 || j < 0) out.push(at(name));
    else diff(a[i], b[j], at(name), out);
  }
  const common = (names: readonly string[], other: readonly string[]): string[] =>
    names.filter((n) => other.includes(n));
  if (common(l, r).join('\u0000') !== common(r, l).join('\u0000')) out.push(path || '(root)');
}

function isObject(v: JsonValue | undefined): v is { readonly [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deeper than any record the library writes (values inside records nest at most 100 levels). */
const SAME_JSON_DEPTH = 200;

/**
 * Whether two decoded JSON values are equal: the same scalars, arrays of equal items in order,
 * objects with the same keys (in any order) and equal values. For values read from a log.
 */
export function sameJson(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  // Deeper than any value the library stores: not equal, rather than a stack overflow on a planted log.
  if (Array.isArray(a) !== Array.isArray(b) || depth > SAME_JSON_DEPTH) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameJson(item, other[i], depth + 1));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  return (
    keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && sameJson(x[k], y[k], depth + 1))
  );
}
