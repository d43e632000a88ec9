/**
 * The {@link DecisionInterpreter} contract suite: synchronous and pure, one of the three
 * decisions with its fields for every reply of valid shape (never a throw), the reply left as it
 * was, and several tool calls in one reply read as `invalid`.
 * @module
 */
import { ToolRegistry } from '../../core/index.ts';
import { checkOptionKeys, decisionProblem } from '../../core/internal-entry.ts';
import type { Decision, DecisionInterpreter, ModelReply, ToolCatalog } from '../../core/index.ts';
import type { OptionKeys } from '../../core/internal-entry.ts';
import { check, ContractViolationError, deepFreeze, equal, noProblem, paramsProblem, snapshot } from './check.ts';
import type { ContractCase, ContractSuite } from './check.ts';
import { addTool } from './seam-calls.ts';

/** Options of {@link decisionInterpreterContract}. */
export type DecisionInterpreterContractOptions = {
  /** Names the suite (`"DecisionInterpreter contract: <name>"`). */
  readonly name: string;
  /** Builds a fresh interpreter; called once per case. */
  readonly makeInterpreter: () => DecisionInterpreter;
  /** The tools interpreted against (default: `add(a, b)` and `echo(text)`, with handlers). */
  readonly tools?: ToolCatalog;
  /** Replies in your protocol, added to the built-in samples (an action, a final answer, …). */
  readonly replies?: readonly ModelReply[];
  /**
   * Replies your protocol must read as `invalid` (garbage text, for a text protocol); several tool calls always are.
   */
  readonly invalidReplies?: readonly ModelReply[];
};

const KNOWN: OptionKeys<DecisionInterpreterContractOptions> = {
  name: true,
  makeInterpreter: true,
  tools: true,
  replies: true,
  invalidReplies: true,
};

const reply = (over: Partial<ModelReply>): ModelReply => ({ callId: 'resp_1', text: '', reasoning: null, ...over });

const SEVERAL_CALLS = reply({
  text: '{"final":"done"}',
  toolCalls: [
    { id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } },
    { id: 'call_2', name: 'echo', arguments: { text: 'hi' } },
  ],
});

/** Replies of valid shape that any interpreter meets sooner or later: none may make it throw. */
const SAMPLES: readonly ModelReply[] = [
  reply({}),
  reply({ callId: null, text: 'The answer is 3.' }),
  reply({ text: '{"tool":"add","args":{"a":1,"b":2}}' }),
  reply({ text: '{"final":"3"}' }),
  reply({ text: '{"tool":"nope","args":{}}' }),
  reply({ text: '{"tool":"add","args":"not an object"}' }),
  reply({ text: '{not json', reasoning: 'thinking' }),
  reply({ text: 'null' }),
  reply({ text: '[1,2,3]' }),
  reply({ text: '\u0000\u2028 🚀 运行' }),
  reply({ text: 'x'.repeat(100_000) }),
  reply({ text: '', toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }] }),
  reply({ text: 'Adding.', toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1 } }] }),
  reply({ text: '', toolCalls: [{ id: 'call_1', name: 'unknown_tool', arguments: {} }] }),
  reply({ text: '', toolCalls: [{ id: 'call_1', name: 'add', arguments: '{"a": 1, "b":' }] }),
  reply({ text: '', toolCalls: [{ id: 'call_1', name: 'add', arguments: [1, 2] }] }),
  reply({
    text: 'Adding.',
    reasoning: 'I should add.',
    toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }],
    content: [
      { type: 'reasoning', text: 'I should add.', signature: 'sig' },
      { type: 'text', text: 'Adding.' },
      { type: 'tool_call', id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } },
    ],
  }),
  reply({ text: 'Done.', toolCalls: [], content: [] }),
  SEVERAL_CALLS,
];

function defaultTools(): ToolCatalog {
  return ToolRegistry.of([
    addTool(),
    {
      name: 'echo',
      description: 'Echo text.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      replayPolicy: 'safe',
    },
  ]);
}

/**
 * Throws a violation naming the first way `decision` breaks the `Decision`
 * contract — the library's own check, plus a promise and an empty explanation.
 */
function checkDecision(decision: unknown): void {
  check(
    typeof decision === 'object' && decision !== null,
    `interpret() must return a decision object, got ${String(decision)}`,
  );
  check(
    typeof (decision as { then?: unknown }).then !== 'function',
    'interpret() returned a promise; it must be synchronous',
  );
  noProblem(decisionProblem(decision), 'the decision is malformed');
  const d = decision as Decision;
  check(
    d.kind !== 'invalid' || d.explanation !== '',
    'decision.explanation of an invalid decision must say what was wrong (it is empty)',
  );
}

type Ctx = {
  readonly make: () => DecisionInterpreter;
  readonly tools: ToolCatalog;
  readonly samples: readonly ModelReply[];
  readonly invalid: readonly ModelReply[];
};

const label = (r: ModelReply): string => JSON.stringify(r).slice(0, 120);

/** Interpret `r`, failing with the reply named when the call throws or the decision is malformed. */
function interpretChecked(interpreter: DecisionInterpreter, r: ModelReply, tools: ToolCatalog): Decision {
  const what = `interpret(${label(r)})`;
  let decision: unknown;
  try {
    decision = interpreter.interpret(r, { tools });
  } catch (e) {
    throw new ContractViolationError(
      `${what} threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}; ` +
        'a reply of valid shape must give a decision',
      { cause: e },
    );
  }
  try {
    checkDecision(decision);
  } catch (e) {
    throw e instanceof ContractViolationError ? new ContractViolationError(`${what}: ${e.message}`, { cause: e }) : e;
  }
  return decision as Decision;
}

function cases(c: Ctx): ContractCase[] {
  return [
    {
      name: 'has params of flat scalar values',
      run: async () => noProblem(paramsProblem(c.make().params), 'params'),
    },
    {
      name:
        'returns action, final or invalid with its string fields for every reply of valid shape, ' +
        'never a throw or a promise',
      run: async () => {
        const interpreter = c.make();
        for (const r of c.samples) interpretChecked(interpreter, r, c.tools);
      },
    },
    {
      name: 'is pure: the same reply gives the same decision, whatever was interpreted in between',
      run: async () => {
        const interpreter = c.make();
        const first = c.samples.map((r) => interpretChecked(interpreter, r, c.tools));
        const other = c.make();
        for (const [i, r] of [...c.samples].reverse().entries()) {
          const again = interpretChecked(interpreter, r, c.tools);
          equal(again, first[c.samples.length - 1 - i], `interpret(${label(r)}) a second time`);
          equal(interpretChecked(other, r, c.tools), again, `interpret(${label(r)}) by a fresh interpreter`);
        }
      },
    },
    {
      name: 'does not change the reply it was given (frozen, and equal afterwards)',
      run: async () => {
        const interpreter = c.make();
        for (const r of c.samples) {
          const mine = snapshot(r);
          interpretChecked(interpreter, mine, c.tools);
          equal(mine, r, `the reply after interpret(${label(r)})`);
          interpretChecked(interpreter, deepFreeze(snapshot(r)), c.tools);
        }
      },
    },
    {
      name: 'reads a reply with several tool calls, and every reply it must refuse, as invalid with an explanation',
      run: async () => {
        const interpreter = c.make();
        for (const r of [SEVERAL_CALLS, ...c.invalid]) {
          const d = interpretChecked(interpreter, r, c.tools);
          if (d.kind !== 'invalid')
            throw new ContractViolationError(`interpret(${label(r)}) must be invalid, got ${d.kind}`, {
              actual: d.kind,
              expected: 'invalid',
            });
        }
      },
    },
  ];
}

/**
 * The cases every {@link DecisionInterpreter} must pass, over built-in sample replies plus yours.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { decisionInterpreterContract, jsonActionInterpreter } from 'polyloop/testing';
 * const suite = decisionInterpreterContract({ name: 'json-action', makeInterpreter: jsonActionInterpreter });
 * describe(suite.name, () => { for (const c of suite.cases) it(c.name, c.run); });
 */
export function decisionInterpreterContract(options: DecisionInterpreterContractOptions): ContractSuite {
  checkOptionKeys(options, KNOWN, 'decisionInterpreterContract');
  const invalid = options.invalidReplies ?? [];
  const ctx: Ctx = {
    make: options.makeInterpreter,
    tools: options.tools ?? defaultTools(),
    samples: [...SAMPLES, ...(options.replies ?? []), ...invalid],
    invalid,
  };
  return { name: `DecisionInterpreter contract: ${options.name}`, cases: cases(ctx) };
}
