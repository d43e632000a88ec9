/**
 * A store wrapper that "crashes" after the k-th write.
 * @module
 */
import { PolyLoopError } from '../core/index.ts';
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { LogRecord, RunStore } from '../core/index.ts';
import type { OptionKeys, StoreWriteMethod } from '../core/internal-entry.ts';

/**
 * The error a {@link faultyStore} throws once it has "crashed". Code `store_error`: the library
 * treats it as it treats a real store's failure (wrapped in a `StoreError`, the run resumable).
 */
export class SimulatedCrashError extends PolyLoopError {
  override readonly name = 'SimulatedCrashError';
  constructor(message?: string, options?: { cause?: unknown }) {
    super('store_error', message ?? '', options);
  }
}

/** The write methods of a store, in the names {@link faultyStore} counts. */
export type WriteMethod = StoreWriteMethod;

/** A store that crashes on cue, and tells what it let through. */
export type FaultyStore = RunStore & {
  /** Writes that landed, in order. */
  readonly writes: { readonly method: WriteMethod; readonly runId: string }[];
  /** True once the crash point was reached. */
  readonly crashed: boolean;
};

/** Options of {@link faultyStore}. */
type FaultyStoreOptions = { readonly crashAfterWrites: number; readonly landsBeforeThrow?: boolean };
const KNOWN: OptionKeys<FaultyStoreOptions> = { crashAfterWrites: true, landsBeforeThrow: true };

/**
 * Wrap a store so that it "crashes" after `crashAfterWrites` writes: that many writes land, every
 * later write rejects with {@link SimulatedCrashError} without landing (as if the process died),
 * and the inner store keeps exactly the log a real crash would leave. `landsBeforeThrow: true`
 * makes the first failing write land and then reject — the "settled on disk but the promise never
 * resolved" case. Reads pass through; `acquire`, `resultAndIntent`, `inputRequest`, `input`,
 * `upgrade`, `callResult` and `resumed` are there exactly when the inner store has them (each write counts as
 * one, like any other).
 */
export function faultyStore(inner: RunStore, opts: FaultyStoreOptions): FaultyStore {
  checkOptionKeys(opts, KNOWN, 'faultyStore');
  const writes: { method: WriteMethod; runId: string }[] = [];
  let crashed = false;
  const write = async (
    method: WriteMethod,
    runId: string,
    _records: readonly LogRecord[],
    doWrite: () => Promise<void>,
  ): Promise<void> => {
    if (crashed || writes.length >= opts.crashAfterWrites) {
      const first = !crashed;
      crashed = true;
      if (first && opts.landsBeforeThrow) await doWrite();
      throw new SimulatedCrashError(`simulated crash before ${method} (after ${opts.crashAfterWrites} writes)`);
    }
    await doWrite();
    writes.push({ method, runId });
  };
  // A getter, not a copied value: `crashed` turns true later.
  return Object.defineProperties(interceptWrites(inner, write), {
    writes: { value: writes, enumerable: true },
    crashed: { get: () => crashed, enumerable: true },
  }) as FaultyStore;
}

/** How an {@link interceptWrites} store makes each write of `records`: call `doWrite` to let it land. */
export type WriteInterceptor = (
  method: WriteMethod,
  runId: string,
  records: readonly LogRecord[],
  doWrite: () => Promise<void>,
) => Promise<void>;

/**
 * A store whose every write goes through `write`; reads and `acquire` pass through. The optional
 * writes are there exactly when the inner store has them. Internal to the test kit.
 */
export function interceptWrites(inner: RunStore, write: WriteInterceptor): RunStore {
  // Typed by RunStore: every method takes the parameters the port declares.
  const store: RunStore = {
    runStarted: (runId, rec) => write('runStarted', runId, [rec], () => inner.runStarted(runId, rec)),
    intent: (runId, rec) => write('intent', runId, [rec], () => inner.intent(runId, rec)),
    result: (runId, resultId, rec) => write('result', runId, [rec], () => inner.result(runId, resultId, rec)),
    step: (runId, rec) => write('step', runId, [rec], () => inner.step(runId, rec)),
    runEnded: (runId, rec) => write('runEnded', runId, [rec], () => inner.runEnded(runId, rec)),
    readLog: (runId, o) => inner.readLog(runId, o),
  };
  const optional: { -readonly [M in keyof RunStore]?: RunStore[M] } = {};
  const { resultAndIntent, inputRequest, input, upgrade, callResult, resumed, acquire } = inner;
  if (resultAndIntent)
    optional.resultAndIntent = (runId, result, intent) =>
      write('resultAndIntent', runId, [result, intent], () => resultAndIntent.call(inner, runId, result, intent));
  if (inputRequest)
    optional.inputRequest = (runId, rec) =>
      write('inputRequest', runId, [rec], () => inputRequest.call(inner, runId, rec));
  if (input) optional.input = (runId, rec) => write('input', runId, [rec], () => input.call(inner, runId, rec));
  if (upgrade) optional.upgrade = (runId, rec) => write('upgrade', runId, [rec], () => upgrade.call(inner, runId, rec));
  if (callResult)
    optional.callResult = (runId, rec) => write('callResult', runId, [rec], () => callResult.call(inner, runId, rec));
  if (resumed) optional.resumed = (runId, rec) => write('resumed', runId, [rec], () => resumed.call(inner, runId, rec));
  if (acquire) optional.acquire = (runId, o) => acquire.call(inner, runId, o);
  return Object.assign(store, optional);
}
