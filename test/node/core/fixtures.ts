/** Shared builders for core tests: a small multi-step agent on a scripted model. */
import { defineAgent, InMemoryStore, ToolRegistry } from '../../../src/core/index.ts';
import type {
  AgentDefinition,
  Decision,
  DecisionInterpreter,
  JsonValue,
  Message,
  ModelReply,
  RunRequest,
  RunStore,
  StepRecord,
  ToolCallRequest,
  ToolSpec,
} from '../../../src/core/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import type { CollectingSink, Script, ScriptedModel } from '../../../src/testing/index.ts';

export const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;

export const text = (role: Message['role'], t: string): Message => ({ role, content: [{ type: 'text', text: t }] });

/** Tools: add (safe), note (never; side effects counted), submit (completesRun), broken (env error). */
export function makeTools(calls: string[] = []): ToolSpec[] {
  return [
    {
      name: 'add',
      description: 'Add two integers.',
      parameters: {
        type: 'object',
        properties: { a: { type: 'integer' }, b: { type: 'integer' } },
        required: ['a', 'b'],
        additionalProperties: false,
      },
      replayPolicy: 'safe',
      handler: async (args) => {
        calls.push(`add:${JSON.stringify(args)}`);
        return String((args['a'] as number) + (args['b'] as number));
      },
    },
    {
      name: 'note',
      description: 'Write a note (a side effect that must not repeat).',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      replayPolicy: 'never',
      handler: async (args) => {
        calls.push(`note:${String(args['text'])}`);
        return `noted ${String(args['text'])}`;
      },
    },
    {
      name: 'submit',
      description: 'Submit the result and finish.',
      parameters: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
      replayPolicy: 'safe',
      completesRun: true,
      handler: async (args) => {
        calls.push(`submit:${String(args['value'])}`);
        if (args['value'] === 'bad') throw new RangeError('bad value');
        return 'submitted';
      },
    },
  ];
}

/** The standard script: tool calls, an invalid reply, an unknown tool, then a final answer. */
export const STANDARD_SCRIPT = [
  '{"tool":"add","args":{"a":1,"b":2}}',
  'this is not json',
  '{"tool":"note","args":{"text":"three"}}',
  '{"tool":"nope","args":{}}',
  '{"tool":"add","args":{"a":3,"b":4}}',
  '{"final":"7"}',
];

export type Harness = {
  agent: AgentDefinition;
  model: ScriptedModel;
  sink: CollectingSink;
  request: RunRequest;
  calls: string[];
  store: RunStore;
};

export function harness(
  opts: {
    script?: Script;
    store?: RunStore;
    runId?: string;
    request?: Partial<RunRequest>;
    calls?: string[];
    tools?: ToolSpec[];
    interpreter?: DecisionInterpreter;
  } = {},
): Harness {
  const calls = opts.calls ?? [];
  const model = scriptedModel(opts.script ?? STANDARD_SCRIPT);
  const sink = collectingSink();
  const store = opts.store ?? new InMemoryStore();
  const agent = defineAgent({
    model,
    interpreter: opts.interpreter ?? jsonActionInterpreter(),
    store,
    events: sink,
    syntheticObservations: SYNTHETIC,
  });
  const tools = ToolRegistry.of(opts.tools ?? makeTools(calls));
  const request: RunRequest = {
    runId: opts.runId ?? 'run-1',
    budget: { maxSteps: 20, maxValidActions: 10, maxContextChars: 100_000 },
    executor: tools.executor(),
    tools,
    context: {
      run: [text('system', 'You are a careful calculator.')],
      goal: [text('user', 'Add 1 and 2, note it, then add 3 and 4.')],
    },
    injections: {},
    modelBinding: { user: 'tester' },
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'markdown',
    cancelGraceMs: 1000,
    ...opts.request,
  };
  return { agent, model, sink, request, calls, store };
}

/** A step record without its timestamps, for equality across runs. */
export function timeless(steps: readonly StepRecord[]): Omit<StepRecord, 'startedAt' | 'endedAt'>[] {
  return steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);
}

/** The standard tools with every policy `safe`, for the equivalence law. */
export function safeTools(calls: string[] = []): ToolSpec[] {
  return makeTools(calls).map((t) => ({ ...t, replayPolicy: 'safe' as const }));
}

/** A native tool-calling interpreter for tests: one call → action, none → final, several → invalid. */
export function nativeInterpreter(): DecisionInterpreter {
  return {
    params: Object.freeze({ interpreter: 'native-test' }),
    interpret(reply: ModelReply): Decision {
      const calls = reply.toolCalls ?? [];
      const historyContent = reply.content ?? [{ type: 'text' as const, text: reply.text }];
      const historyText = reply.text;
      if (calls.length > 1)
        return {
          kind: 'invalid',
          explanation: `Call one tool at a time; you called ${calls.length}.`,
          historyText,
          historyContent,
        };
      const call = calls[0];
      if (call) {
        return {
          kind: 'action',
          action: { kind: 'tool_call', name: call.name, arguments: call.arguments, id: call.id },
          trajectoryRepr: `${call.name}(${JSON.stringify(call.arguments)})`,
          historyText,
          historyContent,
        };
      }
      if (reply.text === '')
        return { kind: 'invalid', explanation: 'Your reply was empty.', historyText, historyContent };
      return { kind: 'final', answer: reply.text, historyText, historyContent };
    },
  };
}

const toolCall = (id: string, name: string, args: JsonValue): ToolCallRequest => ({ id, name, arguments: args });

/** A native tool-calling script: reasoning + a call, two calls at once, an unknown tool, a final text. */
export const NATIVE_SCRIPT: ModelReply[] = [
  {
    callId: 'resp_0',
    text: '',
    reasoning: 'I should add.',
    toolCalls: [toolCall('call_0', 'add', { a: 1, b: 2 })],
    content: [
      { type: 'reasoning', text: 'I should add.', signature: 'sig0' },
      { type: 'tool_call', id: 'call_0', name: 'add', arguments: { a: 1, b: 2 } },
    ],
  },
  {
    callId: 'resp_1',
    text: 'Both at once.',
    reasoning: null,
    toolCalls: [toolCall('call_1a', 'add', { a: 3, b: 4 }), toolCall('call_1b', 'note', { text: 'x' })],
    content: [
      { type: 'text', text: 'Both at once.' },
      { type: 'tool_call', id: 'call_1a', name: 'add', arguments: { a: 3, b: 4 } },
      { type: 'tool_call', id: 'call_1b', name: 'note', arguments: { text: 'x' } },
    ],
  },
  {
    callId: 'resp_2',
    text: '',
    reasoning: null,
    toolCalls: [toolCall('call_2', 'missing', {})],
    content: [{ type: 'tool_call', id: 'call_2', name: 'missing', arguments: {} }],
  },
  {
    callId: 'resp_3',
    text: '',
    reasoning: null,
    toolCalls: [toolCall('call_3', 'add', { a: 3, b: 4 })],
    content: [{ type: 'tool_call', id: 'call_3', name: 'add', arguments: { a: 3, b: 4 } }],
  },
  {
    callId: 'resp_4',
    text: 'The answer is 7.',
    reasoning: null,
    toolCalls: [],
    content: [{ type: 'text', text: 'The answer is 7.' }],
  },
];
