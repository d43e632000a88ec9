/**
 * Options bags reject keys they do not know: a misspelt option (`needsAproval`) would otherwise
 * vanish, and with it the behaviour the caller asked for. One checker for every public bag, with
 * the nearest known key as a suggestion (decision 0050).
 * @module
 */
import { InvalidRequestError } from './errors.ts';
import type { RequestProblem } from './errors.ts';

/**
 * Every key of an options type, each `true` — written as an object so the compiler refuses a
 * list that misses an option or names one the type does not have.
 *
 * @example
 * const KNOWN: OptionKeys<FileStoreOptions> = { dir: true, onWarning: true };
 */
export type OptionKeys<T> = { readonly [K in keyof Required<T>]: true };

/** Sentences that replace "did you mean" for a key people give by mistake (`parameters` where `schema` is meant). */
export type OptionHints = Readonly<Record<string, string>>;

const kindOf = (v: unknown): string =>
  v === null || v === undefined ? String(v) : Array.isArray(v) ? 'an array' : `a ${typeof v}`;

/** Edit distance (insert, delete, substitute, swap neighbours), case ignored; past `limit` it is not exact. */
function distance(a: string, b: string, limit: number): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  if (Math.abs(s.length - t.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      const swapped = i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1];
      if (swapped) d = Math.min(d, (before[j - 2] as number) + 1);
      current.push(d);
    }
    before = previous;
    previous = current;
  }
  return previous[t.length] as number;
}

/** A key with a plural ending made singular, lower case: `replies` and `reply` meet. */
const stem = (key: string): string => key.toLowerCase().replace(/ies$/, 'y').replace(/s$/, '');

/**
 * How far `key` is from `candidate`, or null when too far to suggest: about one slip in three
 * characters of the longer, at most three (`signl` → `signal`, never `a` → `dir`); a plural for a
 * singular, or a key cut short (`delay` for `delayMs`, at least three characters), is one slip.
 */
function slips(key: string, candidate: string): number | null {
  const limit = Math.min(3, Math.max(1, Math.floor(Math.max(key.length, candidate.length) / 3)));
  const d = distance(key, candidate, limit);
  if (d <= limit) return d;
  const [a, b] = [key.toLowerCase(), candidate.toLowerCase()];
  const [shorter, longer] = a.length < b.length ? [a, b] : [b, a];
  if (stem(key) === stem(candidate) || (shorter.length >= 3 && longer.startsWith(shorter))) return limit;
  return null;
}

/** The known key `key` was most likely meant to be (the first of the closest), or null when none is close. */
export function nearestKey(key: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestSlips = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = slips(key, candidate);
    if (d !== null && d < bestSlips) {
      best = candidate;
      bestSlips = d;
    }
  }
  return best;
}

/**
 * One problem per own key of `value` that `known` lacks, each at `path` + the key, saying it is
 * not an option of `where` and naming the nearest known key (or, when none is near, every one).
 */
export function unknownKeyProblems(
  value: object,
  known: readonly string[],
  where: string,
  options: { readonly path?: string; readonly hints?: OptionHints; readonly noun?: string } = {},
): RequestProblem[] {
  const problems: RequestProblem[] = [];
  const noun = options.noun ?? 'an option';
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const hint = options.hints && Object.hasOwn(options.hints, key) ? options.hints[key] : undefined;
    const near = nearestKey(key, known);
    const listed = known.map((k) => `\`${k}\``).join(', ') || 'none';
    const advice = hint ?? (near !== null ? `did you mean \`${near}\`?` : `known: ${listed}`);
    problems.push({ path: `${options.path ?? ''}${key}`, message: `is not ${noun} of ${where}; ${advice}` });
  }
  return problems;
}

/**
 * Throws `InvalidRequestError` (code `invalid_request`) when `value` is not an options object or
 * has a key `known` does not list; each unknown key is a problem naming the nearest known key.
 * `where` names the function or constructor in the message (`openAIModel`, `new FileStore`).
 *
 * @example
 * const KNOWN: OptionKeys<MyOptions> = { url: true, signal: true };
 * checkOptionKeys(options, KNOWN, 'myTool'); // { urll } → "urll is not an option of myTool; did you mean `url`?"
 */
export function checkOptionKeys(
  value: unknown,
  known: Readonly<Record<string, true>>,
  where: string,
  options: { readonly hints?: OptionHints } = {},
): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const message = `${where} needs an options object, got ${kindOf(value)}`;
    throw new InvalidRequestError([{ path: '', message }]);
  }
  const problems = unknownKeyProblems(value, Object.keys(known), where, options);
  if (problems.length > 0) throw new InvalidRequestError(problems, { subject: `options of ${where}` });
}
