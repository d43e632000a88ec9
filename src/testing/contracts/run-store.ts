/**
 * The {@link RunStore} contract suite: what every store must do for `run` and `resume` to keep
 * their promises — logs read back equal and in order, runs kept apart whatever their ids, and,
 * for stores with `acquire`, one driver per run, and, for stores with `inputRequest`/`input`,
 * human input written and read back like any record, so crafted logs imported into it are
 * settled or refused as on any store. Web APIs only, so one suite serves a store in
 * Node, workerd and a browser.
 * @module
 */
import { isPolyLoopError, readRunLog } from '../../core/index.ts';
import { checkOptionKeys } from '../../core/internal-entry.ts';
import type {
  ActionIntentRecord,
  InputRecord,
  InputReply,
  InputRequestRecord,
  IntentRecord,
  LogRecord,
  ReleaseLease,
  RunStartedRecord,
  RunStore,
  StepWriteRecord,
} from '../../core/index.ts';
import type { OptionKeys } from '../../core/internal-entry.ts';
import { abortReason, check, ContractViolationError, equal, rejectsWithReason, settleWithin } from './check.ts';
import type { ContractCase, ContractSuite } from './check.ts';
import { forgedLogCases } from './forged-logs.ts';
import { actionIntent, ended, modelIntent, modelResult, started, stepRecord, stepWrite, writeFullRun } from './records.ts';

/** Options of {@link runStoreContract}. */
export type RunStoreContractOptions = {
  /** Names the suite (`"RunStore contract: <name>"`). */
  readonly name: string;
  /** Builds a fresh, empty store; called once per case. */
  readonly makeStore: () => RunStore | Promise<RunStore>;
  /**
   * What a second `acquire` of a held run does: `'refuses'` (rejects with `RunLockedError`),
   * `'waits'` (until release or abort), `'either'` (default: whichever the store does), or
   * `'none'` for a store without `acquire` (the lease cases are left out).
   */
  readonly lease?: 'refuses' | 'waits' | 'either' | 'none';
  /** Size of the large-observation case, in characters (default 200,000). */
  readonly largeObservationChars?: number;
  /** How long a waiting `acquire` is watched, and how soon it must reject once aborted, in ms (default 50 and 2,000). */
  readonly waitProbeMs?: number;
  readonly abortWithinMs?: number;
};

const KNOWN: OptionKeys<RunStoreContractOptions> = {
  name: true,
  makeStore: true,
  lease: true,
  largeObservationChars: true,
  waitProbeMs: true,
  abortWithinMs: true,
};

const HOSTILE_IDS = ['../../etc/passwd', 'a/b', 'a\\b', 'CON', 'nul.txt', '.', '..', '', ' ', 'run id with spaces', 'ünïcødé-运行-🚀', 'x'.repeat(5000), 'A', 'a', 'a%2Fb', 'a:b?c*d|e<f>g"h'];

type Make = () => Promise<RunStore>;

function logCases(make: Make): ContractCase[] {
  return [
    {
      name: 'returns an empty log for a run that was never written',
      run: async () => equal(await (await make()).readLog('never-written'), [], 'readLog of an unwritten run'),
    },
    {
      name: 'returns every record of a run in write order, equal to what was written',
      run: async () => {
        const store = await make();
        const written = await writeFullRun(store, 'run-1');
        equal(await store.readLog('run-1'), written, 'readLog after a full run');
      },
    },
    {
      name: 'keeps runs apart when their writes interleave',
      run: async () => {
        const store = await make();
        await Promise.all([writeFullRun(store, 'left'), writeFullRun(store, 'right')]);
        const left = await store.readLog('left');
        const right = await store.readLog('right');
        equal(left.map((r) => r.kind), ['run_started', 'intent', 'result', 'intent', 'step', 'run_ended'], 'record kinds of the left run');
        equal((left[0] as RunStartedRecord).runId, 'left', 'runId of the left run');
        equal((right[0] as RunStartedRecord).runId, 'right', 'runId of the right run');
      },
    },
    {
      name: 'keeps the action result and the step record together in one step record',
      run: async () => {
        const store = await make();
        await store.runStarted('r', started('r'));
        await store.step('r', stepWrite(0, 'observed'));
        const step = (await store.readLog('r'))[1] as StepWriteRecord | undefined;
        equal(step?.kind, 'step', 'kind of the second record');
        equal(step?.step.observation, 'observed', 'the step record observation');
        equal(step?.actionResult?.outcome.observation, 'observed', 'the action result observation');
      },
    },
    {
      name: 'stores a step without an action result (final answers and invalid decisions)',
      run: async () => {
        const store = await make();
        const rec: StepWriteRecord = { kind: 'step', v: started('r').v, step: { ...stepRecord(0), decision: 'final', finalAnswer: '42', actionRepr: null, observation: null, actionStatus: null }, actionResult: null };
        await store.step('r', rec);
        equal(await store.readLog('r'), [rec], 'readLog after one step write');
      },
    },
  ];
}

function contentCases(make: Make, largeObservationChars: number): ContractCase[] {
  return [
    {
      name: "gives hostile and unusual run ids their own logs, never another run's",
      run: async () => {
        const store = await make();
        for (const [i, id] of HOSTILE_IDS.entries()) await store.runStarted(id, { ...started(id), snapshotHash: `h${i}` });
        for (const [i, id] of HOSTILE_IDS.entries()) {
          const log = await store.readLog(id);
          const what = `the log of run id ${JSON.stringify(id.slice(0, 40))}`;
          equal(log.length, 1, `${what} has one record`);
          equal((log[0] as RunStartedRecord).snapshotHash, `h${i}`, `${what} holds its own record`);
        }
      },
    },
    {
      name: 'round-trips text that needs escaping: newlines, quotes, unicode, control characters',
      run: async () => {
        const store = await make();
        const text = 'line1\nline2\r\n"quoted" \\ \u0000 \u2028 tab\t 运行 🚀';
        await store.step('r', stepWrite(0, text));
        equal(((await store.readLog('r'))[0] as StepWriteRecord).step.observation, text, 'the observation read back');
      },
    },
    {
      name: 'stores a large observation whole',
      run: async () => {
        const store = await make();
        const big = 'abcdefghij'.repeat(Math.ceil(largeObservationChars / 10)).slice(0, largeObservationChars);
        await store.step('r', stepWrite(0, big));
        const observation = ((await store.readLog('r'))[0] as StepWriteRecord).step.observation;
        equal(observation?.length, largeObservationChars, 'length of the observation read back');
        check(observation === big, 'the large observation read back differs from what was written');
      },
    },
    {
      name: 'keeps unknown extra fields of a record (additive schema changes within a major)',
      run: async () => {
        const store = await make();
        const rec = { ...started('r'), addedLater: { x: 1 } } as RunStartedRecord;
        await store.runStarted('r', rec);
        equal((await store.readLog('r'))[0], rec, 'the record read back');
      },
    },
  ];
}

function appendCases(make: Make): ContractCase[] {
  return [
    {
      name: 'is not changed by a caller mutating what readLog returned',
      run: async () => {
        const store = await make();
        await store.runStarted('r', started('r'));
        const first = (await store.readLog('r')) as unknown as Array<Record<string, unknown>>;
        try {
          (first[0] as Record<string, unknown>)['runId'] = 'mutated';
        } catch {
          // Frozen records are fine too: the point is that the store's copy stays as written.
        }
        equal(((await store.readLog('r'))[0] as RunStartedRecord).runId, 'r', 'runId read again');
      },
    },
    {
      name: 'appends after a read, continuing the same log',
      run: async () => {
        const store = await make();
        await store.runStarted('r', started('r'));
        await store.readLog('r');
        await store.intent('r', modelIntent(0));
        equal((await store.readLog('r')).map((x) => x.kind), ['run_started', 'intent'], 'record kinds');
      },
    },
    {
      name: 'keeps write order across many records',
      run: async () => {
        const store = await make();
        await store.runStarted('r', started('r'));
        for (let i = 0; i < 50; i++) {
          await store.intent('r', modelIntent(i));
          await store.result('r', `s${i}.model`, modelResult(i));
        }
        const log = await store.readLog('r');
        equal(log.length, 101, 'number of records');
        const steps = log.slice(1).filter((x) => x.kind === 'intent').map((x) => (x as IntentRecord).stepIndex);
        equal(steps, Array.from({ length: 50 }, (_, i) => i), 'intent step indexes in order');
      },
    },
    {
      name: 'writes a model result and its action intent as one write, read back in order between the records around it (stores with resultAndIntent)',
      run: async () => {
        const store = await make();
        if (!store.resultAndIntent) return;
        const written: LogRecord[] = [started('r'), modelIntent(0), modelResult(0), actionIntent(0), stepWrite(0)];
        await store.runStarted('r', started('r'));
        await store.intent('r', modelIntent(0));
        await store.resultAndIntent('r', modelResult(0), actionIntent(0) as ActionIntentRecord);
        await store.step('r', stepWrite(0));
        equal(await store.readLog('r'), written, 'the log');
      },
    },
  ];
}

type InputMethods = { readonly inputRequest: (runId: string, rec: InputRequestRecord) => Promise<void>; readonly input: (runId: string, rec: InputRecord) => Promise<void> };

/**
 * The store's input methods, or null when it has neither (it cannot host human input: core
 * refuses such runs, so the input cases hold nothing against it). One without the other is a
 * broken store: an import or a resume would half-write human input.
 */
function inputMethods(store: RunStore): InputMethods | null {
  const { inputRequest, input } = store;
  if (!inputRequest && !input) return null;
  check(typeof inputRequest === 'function' && typeof input === 'function', `the store has ${inputRequest ? 'inputRequest() but no input()' : 'input() but no inputRequest()'}; a store writes both record kinds or neither`);
  return { inputRequest: inputRequest.bind(store), input: input.bind(store) };
}

const v = started('r').v;
const at = '2026-01-01T00:00:01.500Z';

function inputRequestRecord(stepIndex: number, kind: 'approval' | 'answer' | 'settle', target: 'action' | 'model_call' = 'action'): InputRequestRecord {
  const intent = actionIntent(stepIndex);
  const decision = target === 'action' && intent.intent === 'action' ? intent.decision : null;
  return { kind: 'input_request', v, stepIndex, resultId: `s${stepIndex}.${kind === 'settle' ? 'settle' : 'input'}`, request: { kind, target, decision }, requestedAt: at };
}

function inputRecord(stepIndex: number, reply: InputReply): InputRecord {
  return { kind: 'input', v, stepIndex, resultId: reply.resultId, reply, receivedAt: at };
}

/** Every reply kind, texts that need escaping included, each naming `resultId`. */
function everyReply(resultId: string): InputReply[] {
  return [
    { kind: 'approve', resultId },
    { kind: 'deny', resultId, reason: 'Not now:\n"quoted" \\ 运行 🚀' },
    { kind: 'answer', resultId, text: 'Blue.\r\nline two \u2028' },
    { kind: 'executed', resultId, observation: 'it happened \u0000' },
    { kind: 'retry', resultId },
    { kind: 'cancel', resultId },
  ];
}

function inputCases(make: Make): ContractCase[] {
  return [
    {
      name: 'writes an approval request and its reply, read back in the order written and equal to it (stores with inputRequest/input)',
      run: async () => {
        const store = await make();
        const io = inputMethods(store);
        if (!io) return;
        const request = inputRequestRecord(0, 'approval');
        const reply = inputRecord(0, { kind: 'approve', resultId: 's0.input' });
        const written: LogRecord[] = [started('r'), modelIntent(0), modelResult(0), request];
        await store.runStarted('r', written[0] as RunStartedRecord);
        await store.intent('r', modelIntent(0));
        await store.result('r', 's0.model', modelResult(0));
        await io.inputRequest('r', request);
        const awaiting = await store.readLog('r');
        equal(awaiting, written, 'readLog after the input request');
        equal(readRunLog(awaiting).state, 'awaiting_input', 'the state of the log read back after an input request');
        await io.input('r', reply);
        await store.intent('r', actionIntent(0));
        await store.step('r', stepWrite(0));
        await store.runEnded('r', ended(1));
        equal(await store.readLog('r'), [...written, reply, actionIntent(0), stepWrite(0), ended(1)], 'readLog after the reply and the rest of the run');
      },
    },
    {
      name: 'round-trips every reply kind and a settle request of a model call, texts that need escaping included (stores with inputRequest/input)',
      run: async () => {
        const store = await make();
        const io = inputMethods(store);
        if (!io) return;
        const written: LogRecord[] = [];
        for (const [i, reply] of everyReply('s0.settle').entries()) {
          const request = inputRequestRecord(i, i % 2 === 0 ? 'settle' : 'answer', i === 4 ? 'model_call' : 'action');
          const answered = inputRecord(i, { ...reply, resultId: request.resultId });
          await io.inputRequest('r', request);
          await io.input('r', answered);
          written.push(request, answered);
        }
        equal(await store.readLog('r'), written, 'readLog of input requests and replies');
      },
    },
    {
      name: 'keeps an approval and a settle request of one step apart, and a reply read back makes the log one to carry out (stores with inputRequest/input)',
      run: async () => {
        const store = await make();
        const io = inputMethods(store);
        if (!io) return;
        await store.runStarted('r', started('r'));
        await store.intent('r', modelIntent(0));
        await store.result('r', 's0.model', modelResult(0));
        await io.inputRequest('r', inputRequestRecord(0, 'approval'));
        await io.input('r', inputRecord(0, { kind: 'approve', resultId: 's0.input' }));
        await store.intent('r', actionIntent(0));
        await io.inputRequest('r', inputRequestRecord(0, 'settle'));
        const awaiting = await store.readLog('r');
        await io.input('r', inputRecord(0, { kind: 'executed', resultId: 's0.settle', observation: 'hi' }));
        const log = await store.readLog('r');
        equal(log.map((x) => (x.kind === 'input_request' || x.kind === 'input' ? `${x.kind}:${x.resultId}` : x.kind)), ['run_started', 'intent', 'result', 'input_request:s0.input', 'input:s0.input', 'intent', 'input_request:s0.settle', 'input:s0.settle'], 'records read back');
        equal(readRunLog(awaiting).pending?.resultId, 's0.settle', 'the open request of the log read back before the reply');
        equal(readRunLog(log).inFlight?.resolution, 'apply_input', 'what the log read back says resume does');
      },
    },
  ];
}

type LeaseOptions = { readonly mode: 'refuses' | 'waits' | 'either'; readonly probeMs: number; readonly abortMs: number };

function acquirer(store: RunStore): NonNullable<RunStore['acquire']> {
  if (!store.acquire) throw new ContractViolationError("the store has no acquire(); pass { lease: 'none' } to leave the lease cases out");
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
    check(isPolyLoopError(s.error, 'run_locked'), `${what}: a second acquire rejected with ${String(s.error)}, not RunLockedError`);
    return;
  }
  check(opts.mode !== 'refuses', `${what}: a second acquire still waits after ${opts.probeMs} ms, but this store is declared to refuse`);
  const reason = abortReason('waiting acquire');
  ac.abort(reason);
  await rejectsWithReason(second, reason, opts.abortMs, `${what}: a waiting acquire`);
}

function leaseCases(make: Make, opts: LeaseOptions): ContractCase[] {
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
        await rejectsWithReason(acquirer(store)('r', { signal: ac.signal }), reason, opts.abortMs, 'acquire with an aborted signal');
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

/**
 * The cases every {@link RunStore} must pass. Each case builds its own store with `makeStore`.
 *
 * @example
 * // my-store.test.ts (vitest; jest and node:test work the same way)
 * import { describe, it } from 'vitest';
 * import { runStoreContract } from 'polyloop/testing';
 * const suite = runStoreContract({ name: 'MyStore', makeStore: () => new MyStore(), lease: 'none' });
 * describe(suite.name, () => { for (const c of suite.cases) it(c.name, c.run); });
 */
export function runStoreContract(options: RunStoreContractOptions): ContractSuite {
  checkOptionKeys(options, KNOWN, 'runStoreContract');
  const make: Make = async () => options.makeStore();
  const lease = options.lease ?? 'either';
  const cases = [...logCases(make), ...contentCases(make, options.largeObservationChars ?? 200_000), ...appendCases(make), ...inputCases(make), ...forgedLogCases(make)];
  if (lease !== 'none') cases.push(...leaseCases(make, { mode: lease, probeMs: options.waitProbeMs ?? 50, abortMs: options.abortWithinMs ?? 2000 }));
  return { name: `RunStore contract: ${options.name}`, cases };
}
