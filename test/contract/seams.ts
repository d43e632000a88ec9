/**
 * Our own seams through the contract suites of `polyloop/testing`: the scripted model, the JSON
 * action interpreter, the registry executor and a custom executor, the collecting sink. Web APIs
 * only, so the node, Chromium and workerd runners all run the same list.
 */
import { ToolRegistry } from '../../src/core/index.ts';
import type { Action, ActionExecutor, ActionOutcome, ExecuteContext, ModelReply } from '../../src/core/index.ts';
import {
  actionExecutorContract,
  collectingSink,
  decisionInterpreterContract,
  eventSinkContract,
  jsonActionInterpreter,
  modelCallerContract,
  scriptedModel,
} from '../../src/testing/index.ts';
import { sleep } from '../../src/testing/scripted-model.ts';
import type { ContractSuite } from '../../src/testing/index.ts';

const tools = ToolRegistry.of([
  {
    name: 'add',
    description: 'Add two integers.',
    parameters: {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      required: ['a', 'b'],
      additionalProperties: false,
    },
    handler: async (args) => String((args['a'] as number) + (args['b'] as number)),
  },
  {
    name: 'wait',
    description: 'Wait until cancelled.',
    parameters: { type: 'object', properties: {} },
    handler: async (_args, { signal }) => (await sleep(60_000, signal), 'waited'),
  },
]);

const outcome = (status: ActionOutcome['status'], observation: string, synthetic = false): ActionOutcome => ({
  status,
  observation,
  observationIsSynthetic: synthetic,
  envReportedCompletion: false,
  observationTruncatedChars: 0,
});

/**
 * A custom executor, as a user would write one: a key-value environment that runs `code`
 * actions of the form `set k v` / `get k` / `sleep`, and reports what it cannot run.
 */
export class KeyValueExecutor implements ActionExecutor {
  readonly params = Object.freeze({ executor: 'key-value', version: 1 });
  readonly replayPolicy = 'never' as const;
  readonly #values = new Map<string, string>();

  async execute(action: Action, ctx: ExecuteContext): Promise<ActionOutcome> {
    ctx.signal.throwIfAborted();
    if (action.kind !== 'code') return outcome('not_executed', 'This environment runs code actions only.', true);
    const [op, key, ...rest] = action.source.trim().split(/\s+/);
    if (op === 'sleep') return (await sleep(60_000, ctx.signal), outcome('executed', 'slept'));
    if (op === 'set' && key) return (this.#values.set(key, rest.join(' ')), outcome('executed', 'ok'));
    if (op === 'get' && key) return outcome('executed', this.#values.get(key) ?? '(unset)');
    return outcome('not_executed', `Unknown command ${JSON.stringify(op ?? '')}: use set, get or sleep.`, true);
  }
}

/** Garbage text the JSON protocol must refuse. */
const JSON_GARBAGE: readonly ModelReply[] = [
  '',
  '{not json',
  'null',
  '[1]',
  '"just a string"',
  '{"tool":5}',
  '{"final":3}',
  'x'.repeat(10_000),
].map((text) => ({ callId: 'c', text, reasoning: null }));

/** Every suite over the seams `polyloop/testing` and core ship, plus the custom executor example. */
export function ourSeamSuites(): ContractSuite[] {
  return [
    modelCallerContract({
      name: 'scriptedModel',
      makeModel: (scenario) =>
        scriptedModel((call) => `hello ${call.callSeq}`, scenario === 'hang' ? { delayMs: 60_000 } : {}),
    }),
    decisionInterpreterContract({
      name: 'jsonActionInterpreter',
      makeInterpreter: jsonActionInterpreter,
      invalidReplies: JSON_GARBAGE,
    }),
    actionExecutorContract({
      name: 'RegistryExecutor',
      makeExecutor: () => tools.executor(),
      validAction: { kind: 'tool_call', name: 'add', arguments: { a: 1, b: 2 } },
      slowAction: { kind: 'tool_call', name: 'wait', arguments: {} },
    }),
    actionExecutorContract({
      name: 'KeyValueExecutor (custom)',
      makeExecutor: () => new KeyValueExecutor(),
      validAction: { kind: 'code', source: 'set greeting hello' },
      unknownAction: { kind: 'code', source: 'delete greeting' },
      malformedAction: { kind: 'tool_call', name: 'set', arguments: [1, 2] },
      slowAction: { kind: 'code', source: 'sleep' },
    }),
    eventSinkContract({ name: 'collectingSink', makeSink: () => collectingSink() }),
  ];
}
