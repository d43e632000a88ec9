/**
 * Which store method writes a record: the one dispatch of the loop's writes
 * (docs/design/step.md#writes-and-barriers, decision 0040), and the operation name a `StoreError`
 * carries.
 * @module
 */
import { StoreError } from './errors.ts';
import type { RunStore } from './ports.ts';
import type { ActionIntentRecord, ActionsIntentRecord, LogRecord } from './types.ts';

type JointIntent = ActionIntentRecord | ActionsIntentRecord;

const METHOD: { readonly [K in LogRecord['kind']]: string } = {
  run_started: 'runStarted',
  intent: 'intent',
  result: 'result',
  step: 'step',
  run_ended: 'runEnded',
  input_request: 'inputRequest',
  input: 'input',
  upgrade: 'upgrade',
  call_result: 'callResult',
  resumed: 'resumed',
};

/** The store method (and `StoreError` operation) that writes `rec`; with `intent`, the joint write. */
export function operationOf(rec: LogRecord, intent: JointIntent | undefined): string {
  return intent ? 'resultAndIntent' : METHOD[rec.kind];
}

/**
 * The refusal of a run that may take several calls a step (`parallelToolCalls` above 1) on a store
 * without `callResult`: such a store could not write the outcome of a call that ran, so the run is
 * refused before anything is written or called, and its log stays as it was. Null when it may go on.
 */
export function severalCallsRefusal(store: RunStore, runId: string, parallelToolCalls: number): StoreError | null {
  if (parallelToolCalls <= 1 || typeof store.callResult === 'function') return null;
  const lacks =
    'this store has no callResult method, so it cannot write the outcome of each call of a step with several; ' +
    'run with parallelToolCalls 1, or on a store that has the method';
  return new StoreError(runId, 'callResult', new TypeError(lacks));
}

/** Write `rec` (with `intent`: a model result and its action intent as one write) through the store's method for it. */
export function callStore(
  store: RunStore,
  runId: string,
  rec: LogRecord,
  intent: JointIntent | undefined,
): Promise<void> {
  switch (rec.kind) {
    case 'run_started':
      return store.runStarted(runId, rec);
    case 'intent':
      return store.intent(runId, rec);
    case 'result':
      return intent
        ? (store.resultAndIntent as NonNullable<RunStore['resultAndIntent']>)(runId, rec, intent)
        : store.result(runId, rec.resultId, rec);
    case 'step':
      return store.step(runId, rec);
    case 'run_ended':
      return store.runEnded(runId, rec);
    case 'input_request':
      if (!store.inputRequest)
        throw new TypeError('this store cannot write input requests (it has no inputRequest method)');
      return store.inputRequest(runId, rec);
    case 'input':
      if (!store.input) throw new TypeError('this store cannot write replies (it has no input method)');
      return store.input(runId, rec);
    case 'upgrade':
      if (!store.upgrade) throw new TypeError('this store cannot upgrade a run (it has no upgrade method)');
      return store.upgrade(runId, rec);
    case 'call_result':
      if (!store.callResult)
        throw new TypeError('this store cannot run several calls a step (it has no callResult method)');
      return store.callResult(runId, rec);
    case 'resumed':
      if (!store.resumed) throw new TypeError('this store cannot mark a resumed run (it has no resumed method)');
      return store.resumed(runId, rec);
    default:
      throw new TypeError(`no store method writes a record of kind ${JSON.stringify((rec as { kind: unknown }).kind)}`);
  }
}

/**
 * Whether a store must make `rec` durable before its write resolves
 * (docs/design/step.md#writes-and-barriers, decision 0040): intents (but a model-call intent whose
 * replay policy is `'safe'`), input requests and replies, step records (a `step_finished` event
 * follows only a durable step) and `run_ended`. `run_started`, `result` and a safe model-call
 * intent may wait for the next barrier: losing them leaves the run where recovery re-issues or
 * re-interprets, as it would anyway.
 */
export function isBarrier(rec: LogRecord): boolean {
  switch (rec.kind) {
    case 'run_started':
    case 'result':
    case 'call_result':
    case 'resumed':
      return false;
    case 'intent':
      return rec.intent !== 'model_call' || rec.replayPolicy !== 'safe';
    default:
      return true;
  }
}
