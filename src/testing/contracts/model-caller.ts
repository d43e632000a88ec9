/**
 * The {@link ModelCaller} contract suite: `params.model` names the model, every reply has the
 * shape the library stores, abort wins with `signal.reason`, and the messages the library lends
 * the call stay as they were.
 * @module
 */
import { checkOptionKeys, modelReplyProblem } from '../../core/internal-entry.ts';
import type { Message, ModelCall, ModelCaller, ModelReply } from '../../core/index.ts';
import type { OptionKeys } from '../../core/internal-entry.ts';
import { check, deepFreeze, equal, noProblem, paramsProblem, snapshot } from './check.ts';
import type { ContractCase, ContractSuite } from './check.ts';
import { addTool, rejectsWhenAbortedBefore, rejectsWhenAbortedDuring, valueWithin } from './seam-calls.ts';

/**
 * What the model built for a case must do: `'answer'` — reply normally; `'hang'` — not reply
 * by itself for a while (longer than `abortWithinMs`), so that an abort lands mid-call.
 */
export type ModelScenario = 'answer' | 'hang';

/** Options of {@link modelCallerContract}. */
export type ModelCallerContractOptions = {
  /** Names the suite (`"ModelCaller contract: <name>"`). */
  readonly name: string;
  /**
   * Builds a fresh caller for one case, set up to behave as `scenario` says (a scripted model,
   * or an adapter pointed at a fake server that was told its next turn).
   */
  readonly makeModel: (scenario: ModelScenario) => ModelCaller | Promise<ModelCaller>;
  /** How soon a call must reject once aborted, and how long a reply may take, in ms (defaults 2,000 and 30,000). */
  readonly abortWithinMs?: number;
  readonly replyWithinMs?: number;
  /** How long into a hanging call the abort comes, in ms (default 20). */
  readonly abortAfterMs?: number;
};

const KNOWN: OptionKeys<ModelCallerContractOptions> = {
  name: true,
  makeModel: true,
  abortWithinMs: true,
  replyWithinMs: true,
  abortAfterMs: true,
};

const text = (role: Message['role'], t: string): Message => ({ role, content: [{ type: 'text', text: t }] });

/** A conversation as the library assembles it, one tool call already answered. */
function conversation(): Message[] {
  return [
    text('system', 'You add numbers. Call the add tool, then answer with the sum.'),
    text('user', 'What is 1+2, then +4?'),
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Adding.' },
        { type: 'tool_call', id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_1', text: 'Observation:\n3' }] },
  ];
}

function modelCall(signal: AbortSignal, over: Partial<ModelCall> = {}): ModelCall {
  return {
    messages: [text('user', 'Say hello.')],
    callSeq: 0,
    runId: 'contract-run',
    resultId: 's0.model',
    binding: {},
    tools: [],
    signal,
    ...over,
  };
}

async function expectReply(model: ModelCaller, call: ModelCall, ms: number, what: string): Promise<ModelReply> {
  const reply = await valueWithin(() => model.call(call), ms, {
    pending: () => `${what}: no reply within ${ms} ms`,
    rejected: (e) => `${what} rejected: ${String(e)}`,
  });
  noProblem(modelReplyProblem(reply), `${what} replied with a value of the wrong shape`);
  return reply as ModelReply;
}

type Opts = { readonly abortMs: number; readonly replyMs: number; readonly abortAfterMs: number };

function replyCases(make: ModelCallerContractOptions['makeModel'], o: Opts): ContractCase[] {
  return [
    {
      name: 'has params with model, a non-empty string, and only flat scalar values',
      run: async () => {
        const model = await make('answer');
        noProblem(paramsProblem(model.params), 'params');
        check(
          typeof model.params['model'] === 'string' && model.params['model'] !== '',
          `params.model must be a non-empty string, got ${JSON.stringify(model.params['model'])}`,
        );
      },
    },
    {
      name: 'replies to a plain conversation with a reply of the right shape',
      run: async () => {
        await expectReply(await make('answer'), modelCall(new AbortController().signal), o.replyMs, 'call()');
      },
    },
    {
      name: 'replies to a conversation with tools and an answered tool call with a reply of the right shape',
      run: async () => {
        const call = modelCall(new AbortController().signal, {
          messages: conversation(),
          tools: [addTool()],
          callSeq: 1,
          resultId: 's1.model',
        });
        await expectReply(await make('answer'), call, o.replyMs, 'call() with tools');
      },
    },
    {
      name: 'does not change the messages or tools it was given (frozen, and equal afterwards)',
      run: async () => {
        const messages = conversation();
        const before = snapshot(messages);
        const call = modelCall(new AbortController().signal, {
          messages: deepFreeze(messages),
          tools: deepFreeze([addTool()]),
        });
        await expectReply(await make('answer'), call, o.replyMs, 'call() with frozen messages');
        equal(messages, before, 'the messages after the call');
      },
    },
  ];
}

function abortCases(make: ModelCallerContractOptions['makeModel'], o: Opts): ContractCase[] {
  return [
    {
      name: 'rejects with signal.reason when called with an already aborted signal',
      run: async () => {
        const model = await make('answer');
        await rejectsWhenAbortedBefore({
          label: 'before the call',
          start: (signal) => model.call(modelCall(signal)),
          withinMs: o.abortMs,
          what: 'call() with an aborted signal',
        });
      },
    },
    {
      name: 'rejects with signal.reason, within the bound, when aborted during the call',
      run: async () => {
        const model = await make('hang');
        await rejectsWhenAbortedDuring({
          label: 'during the call',
          start: (signal) => model.call(modelCall(signal, { tools: [addTool()] })),
          afterMs: o.abortAfterMs,
          tooEarly: (kind) =>
            `the 'hang' scenario settled (${kind}) before the abort; ` +
            "makeModel('hang') must build a caller that does not reply by itself",
          withinMs: o.abortMs,
          what: 'call() aborted mid-call',
        });
      },
    },
  ];
}

/**
 * The cases every {@link ModelCaller} must pass. `makeModel` builds a fresh caller per case.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { modelCallerContract, scriptedModel } from 'polyloop/testing';
 * const suite = modelCallerContract({
 *   name: 'scripted',
 *   makeModel: (scenario) => scriptedModel(['hello'], scenario === 'hang' ? { delayMs: 60_000 } : {}),
 * });
 * describe(suite.name, () => { for (const c of suite.cases) it(c.name, c.run); });
 */
export function modelCallerContract(options: ModelCallerContractOptions): ContractSuite {
  checkOptionKeys(options, KNOWN, 'modelCallerContract');
  const make = async (scenario: ModelScenario): Promise<ModelCaller> => options.makeModel(scenario);
  const o: Opts = {
    abortMs: options.abortWithinMs ?? 2000,
    replyMs: options.replyWithinMs ?? 30_000,
    abortAfterMs: options.abortAfterMs ?? 20,
  };
  return { name: `ModelCaller contract: ${options.name}`, cases: [...replyCases(make, o), ...abortCases(make, o)] };
}
