/**
 * The lease cases of the {@link RunStore} contract (stores with `acquire`): one driver holds a run
 * at a time, a release is idempotent and never frees a later holder's lease, an aborted acquire
 * rejects with `signal.reason`, and reading a log takes no lease. Web APIs only.
 * @module
 */
import { isPolyLoopError } from '../../core/index.ts';
import type { ReleaseLease, RunStore } from '../../core/index.ts';
import { abortReason, check, ContractViolationError, equal, rejectsWithReason, settleWithin } from './check.ts';
import type { ContractCase } from './check.ts';
import { started } from './records.ts';

type Make = () => Promise<RunStore>;

/** What a second acquire of a held run may do, how long it is watched, how soon an abort must end it. */
export type LeaseOptions = {
  readonly mode: 'refuses' | 'waits' | 'either';
  readonly probeMs: number;
  readonly abortMs: number;
};

function acquirer(store: RunStore): NonNullable<RunStore['acquire']> {
  if (!store.acquire) {
    throw new ContractViolationError("the store has no acquire(); pass { lease: 'none' } to leave the lease cases out");
  }
  return store.acquire.bind(store);
}

/**
 * Check that `runId` is held by someone else: a second acquire is refused with `RunLockedError`,
 * or waits and then rejects with `signal.reason` once aborted — as `mode` allows.
 */
async function expectHeld(store: RunStore, runId: string, opts: LeaseOptions, what: string): Promise<void> {
  const ac = new AbortController();
  const second = acquirer(store)(runId, { signal: ac.signal });
  const s = await settleWithin(second, opts.probeMs);
  if (s.kind === 'resolved') {
    await (s.value as ReleaseLease)();
    throw new ContractViolationError(`${what}: a second acquire of a held run resolved; two drivers would hold it`);
  }
  if (s.kind === 'rejected') {
    check(opts.mode !== 'waits', `${what}: a second acquire rejected at once, but this store is declared to wait`);
    const refusal = `${what}: a second acquire rejected with ${String(s.error)}, not RunLockedError`;
    check(isPolyLoopError(s.error, 'run_locked'), refusal);
    return;
  }
  const waits = `${what}: a second acquire still waits after ${opts.probeMs} ms, but this store is declared to refuse`;
  check(opts.mode !== 'refuses', waits);
  const reason = abortReason('waiting acquire');
  ac.abort(reason);
  await rejectsWithReason(second, reason, opts.abortMs, `${what}: a waiting acquire`);
}

/** The cases, for a store whose second acquire of a held run does what `opts.mode` says. */
export function leaseCases(make: Make, opts: LeaseOptions): ContractCase[] {
  return [
    {
      name: 'lets exactly one driver hold a run, and frees it on release',
      run: async () => {
        const store = await make();
        const release = await acquirer(store)('leased', {});
        await expectHeld(store, 'leased', opts, 'while held');
        const other = await acquirer(store)('other-run', {});
        await other();
        await release();
        const again = await acquirer(store)('leased', {});
        await again();
      },
    },
    {
      name: 'has a release that is idempotent and, called again later, never frees a lease another driver took since',
      run: async () => {
        const store = await make();
        const first = await acquirer(store)('r', {});
        await first();
        await first();
        const next = await acquirer(store)('r', {});
        await first();
        await expectHeld(store, 'r', opts, 'after a stale release');
        await next();
      },
    },
    {
      name: 'rejects with signal.reason when asked to acquire with an aborted signal',
      run: async () => {
        const store = await make();
        const reason = abortReason('aborted before acquire');
        const ac = new AbortController();
        ac.abort(reason);
        const acquired = acquirer(store)('r', { signal: ac.signal });
        await rejectsWithReason(acquired, reason, opts.abortMs, 'acquire with an aborted signal');
        const release = await acquirer(store)('r', {});
        await release();
      },
    },
    {
      name: 'does not take the lease to read a log',
      run: async () => {
        const store = await make();
        const release = await acquirer(store)('r', {});
        await store.runStarted('r', started('r'));
        equal((await store.readLog('r')).length, 1, 'records read while the lease is held');
        await release();
      },
    },
  ];
}
