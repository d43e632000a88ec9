/**
 * The shape every contract suite shares, and the few assertions its cases need. No test
 * framework and no `node:` module: the suites ship in `polyloop/testing` and run in Node,
 * workerd and browsers, under vitest, jest, node:test or a plain loop.
 * @module
 */
import { PolyLoopError } from '../../core/index.ts';

/** One check of a seam. `run` resolves when the seam keeps the contract, and rejects when it breaks it. */
export type ContractCase = {
  /** A sentence saying what the seam does ("returns an empty log for a run never written"). */
  readonly name: string;
  /** Builds a fresh seam from the suite's factory and checks it; rejects with a {@link ContractViolationError}. */
  readonly run: () => Promise<void>;
};

/**
 * A named list of independent cases: each builds its own seam, so they may run in any order or
 * alone. Suites import no test framework; two lines turn one into tests of yours.
 *
 * @example
 * // vitest or jest
 * describe(suite.name, () => { for (const c of suite.cases) it(c.name, c.run); });
 * // node:test
 * describe(suite.name, () => { for (const c of suite.cases) test(c.name, c.run); });
 * // anything else
 * for (const c of suite.cases) await c.run();
 */
export type ContractSuite = {
  /** `"<Seam> contract: <the name you gave>"`, for a `describe` block. */
  readonly name: string;
  readonly cases: readonly ContractCase[];
};

/**
 * A seam broke its contract. `actual` and `expected` (when set) are what test runners show as a
 * diff, as they do for `node:assert`'s `AssertionError`. Code `contract_violation`.
 */
export class ContractViolationError extends PolyLoopError {
  override readonly name = 'ContractViolationError';
  declare readonly code: 'contract_violation';
  readonly actual: unknown;
  readonly expected: unknown;
  /** Runners (vitest, jest) print a diff only when this is true. */
  readonly showDiff: boolean;

  constructor(
    message: string,
    opts: { readonly actual?: unknown; readonly expected?: unknown; readonly cause?: unknown } = {},
  ) {
    super('contract_violation', message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.actual = opts.actual;
    this.expected = opts.expected;
    this.showDiff = 'actual' in opts && 'expected' in opts;
  }
}

/** Fails with `message` unless `condition` holds. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new ContractViolationError(message);
}

/** Fails with `message` when `problem` is a string (the convention of the core shape checks). */
export function noProblem(problem: string | null, message: string): void {
  if (problem !== null) throw new ContractViolationError(`${message}: ${problem}`);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * Structural equality of JSON-like values, as `toEqual` reads it: arrays by index, objects by
 * their keys, a key holding `undefined` the same as a missing key, leaves by `Object.is`.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (!isRecord(a) || !isRecord(b)) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const keys = (o: Record<string, unknown>): string[] =>
    Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
  const ka = keys(a);
  const kb = keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && deepEqual(a[k], b[k]));
}

/** Fails with `message` and a diff unless `actual` equals `expected` structurally ({@link deepEqual}). */
export function equal(actual: unknown, expected: unknown, message: string): void {
  if (!deepEqual(actual, expected)) throw new ContractViolationError(message, { actual, expected });
}

/** Freeze `value` and everything reachable from it, so a seam that writes to it throws (ES modules are strict). */
export function deepFreeze<T>(value: T): T {
  if (isRecord(value) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** A deep copy to compare against later: proves a seam did not write to what it was lent. */
export function snapshot<T>(value: T): T {
  return structuredClone(value);
}

/** What a promise did within a time bound. */
export type Settled =
  | { readonly kind: 'resolved'; readonly value: unknown }
  | { readonly kind: 'rejected'; readonly error: unknown }
  | { readonly kind: 'pending' };

/** How `promise` settles within `ms` (`pending` if it has not). Clears its timer either way. */
export async function settleWithin(promise: Promise<unknown>, ms: number): Promise<Settled> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<Settled>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'pending' }), ms);
  });
  const settled = promise.then(
    (value): Settled => ({ kind: 'resolved', value }),
    (error: unknown): Settled => ({ kind: 'rejected', error }),
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

const describeValue = (v: unknown): string =>
  v instanceof Error ? `${v.name}: ${v.message}` : typeof v === 'string' ? JSON.stringify(v) : String(v);

/**
 * Fails unless `promise` rejects with exactly `reason` (the same object: a seam rethrows
 * `signal.reason` untouched) within `ms`.
 */
export async function rejectsWithReason(
  promise: Promise<unknown>,
  reason: unknown,
  ms: number,
  what: string,
): Promise<void> {
  const s = await settleWithin(promise, ms);
  if (s.kind === 'pending')
    throw new ContractViolationError(
      `${what}: still pending ${ms} ms after the abort; it must reject with signal.reason`,
    );
  if (s.kind === 'resolved')
    throw new ContractViolationError(`${what}: resolved after the abort; it must reject with signal.reason`, {
      actual: s.value,
      expected: reason,
    });
  if (s.error !== reason) {
    throw new ContractViolationError(
      `${what}: rejected with ${describeValue(s.error)}, not with signal.reason itself`,
      { actual: s.error, expected: reason, cause: s.error },
    );
  }
}

/** The first reason `params` is not flat JSON scalars (`SeamParams`), or null. */
export function paramsProblem(params: unknown): string | null {
  if (!isRecord(params) || Array.isArray(params))
    return `params must be an object, got ${params === null ? 'null' : typeof params}`;
  for (const [k, v] of Object.entries(params)) {
    const ok =
      v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
    if (!ok) return `params.${k} must be a string, a finite number, a boolean or null, got ${typeof v}`;
  }
  return null;
}

/** Run `work` with an error that says which seam call failed, keeping the original as `cause`. */
export async function expectNoThrow<T>(work: () => T | Promise<T>, what: string): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw new ContractViolationError(`${what} threw ${describeValue(e)}`, { cause: e });
  }
}

/** Call a seam method, turning a synchronous throw into a rejection with the same value. */
export function invoke<T>(work: () => T | Promise<T>): Promise<T> {
  return new Promise<T>((resolve) => resolve(work()));
}

/** A reason object no seam could produce by accident, for checking that it is passed on untouched. */
export function abortReason(label: string): Error {
  return new Error(`contract abort: ${label}`);
}
