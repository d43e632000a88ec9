/**
 * The human-input cases of the {@link RunStore} contract (stores with `inputRequest`/`input`): an
 * input request and its reply are written and read back like any record, in order and equal, and
 * a log read back says what `resume` does with it. Web APIs only.
 * @module
 */
import { readRunLog } from '../../core/index.ts';
import type {
  InputRecord,
  InputReply,
  InputRequestRecord,
  LogRecord,
  RunStartedRecord,
  RunStore,
} from '../../core/index.ts';
import { check, equal } from './check.ts';
import type { ContractCase } from './check.ts';
import { actionIntent, ended, modelIntent, modelResult, started, stepWrite } from './records.ts';

type Make = () => Promise<RunStore>;

type InputMethods = {
  readonly inputRequest: (runId: string, rec: InputRequestRecord) => Promise<void>;
  readonly input: (runId: string, rec: InputRecord) => Promise<void>;
};

/**
 * The store's input methods, or null when it has neither (it cannot host human input: core
 * refuses such runs, so the input cases hold nothing against it). One without the other is a
 * broken store: an import or a resume would half-write human input.
 */
function inputMethods(store: RunStore): InputMethods | null {
  const { inputRequest, input } = store;
  if (!inputRequest && !input) return null;
  const has = inputRequest ? 'inputRequest() but no input()' : 'input() but no inputRequest()';
  check(
    typeof inputRequest === 'function' && typeof input === 'function',
    `the store has ${has}; a store writes both record kinds or neither`,
  );
  return { inputRequest: inputRequest.bind(store), input: input.bind(store) };
}

const v = started('r').v;
const at = '2026-01-01T00:00:01.500Z';

function inputRequestRecord(
  stepIndex: number,
  kind: 'approval' | 'answer' | 'settle',
  target: 'action' | 'model_call' = 'action',
): InputRequestRecord {
  const intent = actionIntent(stepIndex);
  const decision = target === 'action' && intent.intent === 'action' ? intent.decision : null;
  const resultId = `s${stepIndex}.${kind === 'settle' ? 'settle' : 'input'}`;
  return { kind: 'input_request', v, stepIndex, resultId, request: { kind, target, decision }, requestedAt: at };
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

/** The cases; each holds nothing against a store without input methods. */
export function inputCases(make: Make): ContractCase[] {
  return [
    {
      name:
        'writes an approval request and its reply, read back in the order written and equal to it ' +
        '(stores with inputRequest/input)',
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
        const all = [...written, reply, actionIntent(0), stepWrite(0), ended(1)];
        equal(await store.readLog('r'), all, 'readLog after the reply and the rest of the run');
      },
    },
    {
      name:
        'round-trips every reply kind and a settle request of a model call, texts that need escaping included ' +
        '(stores with inputRequest/input)',
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
      name:
        'keeps an approval and a settle request of one step apart, and a reply read back makes the log one to ' +
        'carry out (stores with inputRequest/input)',
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
        const named = log.map((x) =>
          x.kind === 'input_request' || x.kind === 'input' ? `${x.kind}:${x.resultId}` : x.kind,
        );
        const expected = ['run_started', 'intent', 'result', 'input_request:s0.input', 'input:s0.input', 'intent'];
        equal(named, [...expected, 'input_request:s0.settle', 'input:s0.settle'], 'records read back');
        const before = 'the open request of the log read back before the reply';
        equal(readRunLog(awaiting).pending?.resultId, 's0.settle', before);
        equal(readRunLog(log).inFlight?.resolution, 'apply_input', 'what the log read back says resume does');
      },
    },
  ];
}
