/**
 * The cases of the {@link RunStore} contract for steps with several calls (stores with
 * `callResult`): each call's outcome is written as it lands and read back in that order, before the
 * step record; it is not a barrier, so a store may hold it until its next write, which must land it
 * first; and, for stores with `resultAndIntent`, the `actions` intent lands with the model result.
 * Web APIs only.
 * @module
 */
import { readRunLog } from '../../core/index.ts';
import type { CallResultRecord, LogRecord, RunStore } from '../../core/index.ts';
import { check, equal } from './check.ts';
import type { ContractCase } from './check.ts';
import { actionsIntent, callResult, callsStepWrite, ended, modelIntent, modelResult, started } from './records.ts';

type Make = () => Promise<RunStore>;

type CallResultMethod = (runId: string, rec: CallResultRecord) => Promise<void>;

/** The store's `callResult`, or null when it has none (core refuses it runs with several calls a step). */
function callResultOf(store: RunStore): CallResultMethod | null {
  const { callResult: method } = store;
  if (method === undefined) return null;
  check(typeof method === 'function', `the store's callResult is a ${typeof method}, not a method`);
  return method.bind(store);
}

/** The run's first records up to step 0's `actions` intent, written as the loop writes them; returns them. */
async function upToActions(store: RunStore, runId: string): Promise<LogRecord[]> {
  const written: LogRecord[] = [started(runId), modelIntent(0), modelResult(0), actionsIntent(0)];
  await store.runStarted(runId, started(runId));
  await store.intent(runId, modelIntent(0));
  if (store.resultAndIntent) await store.resultAndIntent(runId, modelResult(0), actionsIntent(0));
  else {
    await store.result(runId, 's0.model', modelResult(0));
    await store.intent(runId, actionsIntent(0));
  }
  return written;
}

/** The cases; each holds nothing against a store without `callResult`. */
export function callResultCases(make: Make): ContractCase[] {
  return [
    {
      name:
        'writes each call result as it lands, read back in that order after the actions intent; not a barrier, ' +
        'a held one lands before the next record (stores with callResult)',
      run: async () => {
        const store = await make();
        const write = callResultOf(store);
        if (!write) return;
        const written = await upToActions(store, 'r');
        // The calls land out of call order: the log keeps the order they landed in.
        for (const j of [2, 0, 1]) {
          await write('r', callResult(0, j));
          written.push(callResult(0, j));
          equal(await store.readLog('r'), written, `readLog after the result of call ${j}`);
        }
        // Each executed call is one valid action.
        const end = { ...ended(1), validActions: 3 };
        written.push(callsStepWrite(0), end);
        await store.step('r', callsStepWrite(0));
        await store.runEnded('r', end);
        const log = await store.readLog('r');
        equal(log, written, 'readLog after the step record and run_ended');
        equal(readRunLog(log).state, 'ended', 'the state of the log read back');
      },
    },
    {
      name:
        "keeps a call result a crash left without its step record, so resume knows that call's outcome " +
        '(stores with callResult)',
      run: async () => {
        const store = await make();
        const write = callResultOf(store);
        if (!write) return;
        await upToActions(store, 'r');
        await write('r', callResult(0, 0, 'first\n"quoted" 运行 🚀'));
        const view = readRunLog(await store.readLog('r'));
        const calls = view.inFlight?.calls?.calls ?? [];
        equal(calls.length, 3, 'calls of the step in flight read back');
        equal(calls[0]?.result?.outcome.observation, 'first\n"quoted" 运行 🚀', 'the outcome of call 0 read back');
        equal(
          calls.map((c) => c.result !== null),
          [true, false, false],
          'which calls have an outcome',
        );
      },
    },
    {
      name:
        'writes a model result and its actions intent as one write, read back in order ' +
        '(stores with callResult and resultAndIntent)',
      run: async () => {
        const store = await make();
        if (!callResultOf(store) || !store.resultAndIntent) return;
        await store.runStarted('r', started('r'));
        await store.intent('r', modelIntent(0));
        await store.resultAndIntent('r', modelResult(0), actionsIntent(0));
        const expected = [started('r'), modelIntent(0), modelResult(0), actionsIntent(0)];
        equal(await store.readLog('r'), expected, 'readLog after the joint write');
        equal(readRunLog(expected).inFlight?.resolution, 'run_calls', 'what the log read back says resume does');
      },
    },
  ];
}
