/**
 * The cases of the {@link RunStore} contract for the marks drivers leave (stores with `resumed`):
 * a `resumed` record is written and read back in order with the records around it, at a boundary
 * and in flight; it is not a barrier, so a store may hold it until its next write, which must land
 * it first, and a read in between sees it; and a log read back lists the marks in `resumes`.
 * Web APIs only.
 * @module
 */
import { readRunLog } from '../../core/index.ts';
import type { InputRecord, InputRequestRecord, LogRecord, ResumedRecord, RunStore } from '../../core/index.ts';
import { check, equal } from './check.ts';
import type { ContractCase } from './check.ts';
import { actionIntent, ended, modelIntent, modelResult, resumedMark, started, stepWrite } from './records.ts';

type Make = () => Promise<RunStore>;

type ResumedMethod = (runId: string, rec: ResumedRecord) => Promise<void>;

/** The store's `resumed`, or null when it has none (runs are resumed without marks on it). */
function resumedOf(store: RunStore): ResumedMethod | null {
  const { resumed: method } = store;
  if (method === undefined) return null;
  check(typeof method === 'function', `the store's resumed is a ${typeof method}, not a method`);
  return method.bind(store);
}

/** Write `rec` and check the whole log read back is `written` with it. */
async function lands(store: RunStore, written: LogRecord[], rec: LogRecord, write: () => Promise<void>, what: string) {
  await write();
  written.push(rec);
  equal(await store.readLog('r'), written, `readLog after ${what}`);
}

const v = started('r').v;
const at = '2026-01-01T00:00:01.500Z';

/** The cases; each holds nothing against a store without `resumed`. */
export function resumedCases(make: Make): ContractCase[] {
  return [
    {
      name:
        'writes the marks of drivers that took a run over, read back in order between the records around them, ' +
        'each seen by a read before the next write (stores with resumed)',
      run: async () => {
        const store = await make();
        const mark = resumedOf(store);
        if (!mark) return;
        const w: LogRecord[] = [];
        const m = (i: number, r: ResumedRecord['resolution']) => resumedMark(i, r);
        await lands(store, w, started('r'), () => store.runStarted('r', started('r')), 'run_started');
        await lands(store, w, m(0, null), () => mark('r', m(0, null)), 'a mark before the first step');
        await lands(store, w, modelIntent(0), () => store.intent('r', modelIntent(0)), 'a safe model-call intent');
        await lands(store, w, m(0, 'reissue_model'), () => mark('r', m(0, 'reissue_model')), 'a mark in flight');
        await lands(store, w, modelResult(0), () => store.result('r', 's0.model', modelResult(0)), 'the result');
        await lands(store, w, m(0, 'reinterpret'), () => mark('r', m(0, 'reinterpret')), 'a second mark');
        await lands(store, w, actionIntent(0), () => store.intent('r', actionIntent(0)), 'the action intent');
        await lands(store, w, stepWrite(0), () => store.step('r', stepWrite(0)), 'the step');
        await lands(store, w, m(1, null), () => mark('r', m(1, null)), 'a mark at a boundary');
        await lands(store, w, ended(1), () => store.runEnded('r', ended(1)), 'run_ended');
        const view = readRunLog(await store.readLog('r'));
        equal(view.state, 'ended', 'the state of the log read back');
        equal(
          view.resumes.map((r) => [r.stepIndex, r.resolution]),
          [
            [0, null],
            [0, 'reissue_model'],
            [0, 'reinterpret'],
            [1, null],
          ],
          'the marks readRunLog lists',
        );
      },
    },
    {
      name:
        'is not a barrier: a mark written between non-barriers lands before the next barrier, in order ' +
        '(stores with resumed)',
      run: async () => {
        const store = await make();
        const mark = resumedOf(store);
        if (!mark) return;
        const written: LogRecord[] = [started('r'), modelIntent(0), resumedMark(0, 'reissue_model'), modelResult(0)];
        await store.runStarted('r', started('r'));
        await store.intent('r', modelIntent(0));
        await mark('r', resumedMark(0, 'reissue_model'));
        await store.result('r', 's0.model', modelResult(0));
        // Only non-barriers so far: the action intent is the barrier that lands whatever is held.
        await store.intent('r', actionIntent(0));
        written.push(actionIntent(0));
        equal(await store.readLog('r'), written, 'readLog after the barrier');
      },
    },
    {
      name:
        'keeps the mark of a driver that carries a reply out between the request and the reply ' +
        '(stores with resumed and input)',
      run: async () => {
        const store = await make();
        const mark = resumedOf(store);
        if (!mark || !store.inputRequest || !store.input) return;
        const intent = actionIntent(0);
        const decision = intent.intent === 'action' ? intent.decision : null;
        const request: InputRequestRecord = {
          kind: 'input_request',
          v,
          stepIndex: 0,
          resultId: 's0.input',
          request: { kind: 'approval', target: 'action', decision },
          requestedAt: at,
        };
        const reply = { kind: 'approve', resultId: 's0.input' } as const;
        const input: InputRecord = { kind: 'input', v, stepIndex: 0, resultId: 's0.input', reply, receivedAt: at };
        await store.runStarted('r', started('r'));
        await store.intent('r', modelIntent(0));
        await store.result('r', 's0.model', modelResult(0));
        await store.inputRequest('r', request);
        await mark('r', resumedMark(0, 'await_input'));
        await store.input('r', input);
        const log = await store.readLog('r');
        const expected = [started('r'), modelIntent(0), modelResult(0), request, resumedMark(0, 'await_input'), input];
        equal(log, expected, 'readLog after the reply');
        equal(readRunLog(log).inFlight?.resolution, 'apply_input', 'what the log read back says resume does');
      },
    },
  ];
}
