/**
 * What the seam suites share beyond the assertions of check.ts: a seam call that must settle with
 * a value within a bound, the two abort cases (a signal aborted before the call, and one aborted
 * during it), and the `add` tool the model and interpreter suites offer.
 * @module
 */
import type { ModelToolSchema } from '../../core/index.ts';
import { abortReason, ContractViolationError, invoke, rejectsWithReason, settleWithin } from './check.ts';

/** How a suite words a call that did not settle with a value. */
export type CallFailure = {
  /** Nothing settled within `ms`. */
  readonly pending: (ms: number) => string;
  /** The call rejected with `error` (kept as the violation's `cause`). */
  readonly rejected: (error: unknown) => string;
};

/** The value `work` resolves with within `ms`; a violation worded by `failure` when it rejects or is still pending. */
export async function valueWithin(work: () => unknown, ms: number, failure: CallFailure): Promise<unknown> {
  const s = await settleWithin(invoke(work), ms);
  if (s.kind === 'pending') throw new ContractViolationError(failure.pending(ms));
  if (s.kind === 'rejected') throw new ContractViolationError(failure.rejected(s.error), { cause: s.error });
  return s.value;
}

/** Where an abort case starts the seam's call, and how it words a failure. */
export type AbortCall = {
  /** Names the abort reason (`before the call`): a reason no seam could produce by accident. */
  readonly label: string;
  /** Starts the call with `signal`. */
  readonly start: (signal: AbortSignal) => unknown;
  /** How soon the call must reject once aborted, in ms. */
  readonly withinMs: number;
  /** The call, as the violation names it (`call() with an aborted signal`). */
  readonly what: string;
};

/** Fails unless the call, started with an already aborted signal, rejects with the signal's reason. */
export async function rejectsWhenAbortedBefore(c: AbortCall): Promise<void> {
  const reason = abortReason(c.label);
  const ac = new AbortController();
  ac.abort(reason);
  await rejectsWithReason(
    invoke(() => c.start(ac.signal)),
    reason,
    c.withinMs,
    c.what,
  );
}

/**
 * Fails unless the call is still pending `afterMs` after it started and then, aborted, rejects with
 * the signal's reason. `tooEarly` words a call that settled (`resolved`, `rejected`) before the abort.
 */
export async function rejectsWhenAbortedDuring(
  c: AbortCall & { readonly afterMs: number; readonly tooEarly: (kind: string) => string },
): Promise<void> {
  const reason = abortReason(c.label);
  const ac = new AbortController();
  const pending = invoke(() => c.start(ac.signal));
  const early = await settleWithin(pending, c.afterMs);
  if (early.kind !== 'pending') throw new ContractViolationError(c.tooEarly(early.kind));
  ac.abort(reason);
  await rejectsWithReason(pending, reason, c.withinMs, c.what);
}

/** A fresh `add(a, b)` tool schema: two integers, nothing else. */
export function addTool(): ModelToolSchema {
  return {
    name: 'add',
    description: 'Add two integers.',
    parameters: {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      required: ['a', 'b'],
      additionalProperties: false,
    },
  };
}
