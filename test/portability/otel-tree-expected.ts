/**
 * The span trees `polyloop/otel` must make of the runs of test/portability/otel-tree.ts, written
 * out: the same in Node, workerd and Chromium.
 */
import { MODEL, NOT_EXPORTED, RUN_ID } from './otel-tree.ts';
import type { OtelTrees, SpanShape } from './otel-tree.ts';

const RUN = { 'gen_ai.conversation.id': RUN_ID } as const;
const UNSET = { code: 'UNSET' } as const;
const ERROR = { code: 'ERROR' } as const;

/** A model call's span: step, tokens in and out, why the model stopped, its response id. */
function chat(step: number, tokens: readonly [number, number], finish: string): SpanShape {
  const attributes = {
    ...RUN,
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': MODEL,
    'gen_ai.response.finish_reasons': [finish],
    'gen_ai.response.id': `resp-${step}`,
    'gen_ai.usage.input_tokens': tokens[0],
    'gen_ai.usage.output_tokens': tokens[1],
    'polyloop.replay_policy': 'safe',
    'polyloop.replayed': false,
    'polyloop.step.index': step,
  };
  return { name: `chat ${MODEL}`, kind: 'CLIENT', status: UNSET, attributes, links: [], children: [] };
}

/** A tool's span: the lookup that worked, or the deploy that failed (`env_error`), run again when `replayed`. */
function tool(name: 'lookup' | 'deploy', step: number, replayed = false): SpanShape {
  const failed = name === 'deploy';
  const attributes = {
    ...(failed ? { 'error.type': 'env_error' } : {}),
    ...RUN,
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.call.id': `call-${name}`,
    'gen_ai.tool.name': name,
    'polyloop.action.status': failed ? 'env_error' : 'executed',
    'polyloop.replay_policy': 'safe',
    'polyloop.replayed': replayed,
    'polyloop.step.index': step,
  };
  const status = failed ? ERROR : UNSET;
  return { name: `execute_tool ${name}`, kind: 'INTERNAL', status, attributes, links: [], children: [] };
}

/** What the first driver did before the crash, and the uninterrupted run alike: three steps, one span each call. */
const FIRST_DRIVER: readonly SpanShape[] = [
  chat(0, [120, 12], 'tool_calls'),
  tool('lookup', 0),
  chat(1, [150, 8], 'length'),
  chat(2, [210, 15], 'tool_calls'),
  tool('deploy', 2),
];

/** A span with content recorded on it (`captureContent: true`); a failed tool's status says why. */
function withContent(span: SpanShape, content: Record<string, string | string[]>): SpanShape {
  const result = content['gen_ai.tool.call.result'];
  const status =
    span.status.code === 'ERROR' && typeof result === 'string' ? { ...span.status, message: result } : span.status;
  return { ...span, status, attributes: { ...span.attributes, ...content } };
}

/** The reply a chat span records: its parts, and the conventions' finish reason. */
const output = (finish: string, ...parts: object[]): string =>
  JSON.stringify([{ role: 'assistant', parts, finish_reason: finish }]);
const call = (name: string, args: object) => ({ type: 'tool_call', id: `call-${name}`, name, arguments: args });

/** What each model call is given, a line per message (the system prompt, then the tools core renders, then the goal). */
const GIVEN = [
  'system: text "You report the weather and deploy."',
  'system: text (355 chars)',
  'user: text "Weather in Paris, then deploy the forecast."',
];
const AFTER_LOOKUP = [...GIVEN, 'assistant: tool_call call-lookup', 'user: tool_call_response call-lookup'];
const AFTER_CUT = [...AFTER_LOOKUP, 'assistant: text "Paris is sunny, so the forecast"', 'user: text (205 chars)'];

/**
 * The uninterrupted run with content: the same spans, each chat span held open until its step
 * records the reply (so it ends after its step's tool), with prompts, replies, arguments and results.
 */
const WITH_CONTENT: readonly SpanShape[] = [
  withContent(tool('lookup', 0), {
    'gen_ai.tool.call.arguments': '{"city":"Paris"}',
    'gen_ai.tool.call.result': 'sunny',
  }),
  withContent(chat(0, [120, 12], 'tool_calls'), {
    'gen_ai.input.messages': GIVEN,
    'gen_ai.output.messages': output('tool_call', call('lookup', { city: 'Paris' })),
  }),
  withContent(chat(1, [150, 8], 'length'), {
    'gen_ai.input.messages': AFTER_LOOKUP,
    'gen_ai.output.messages': output('length', { type: 'text', content: 'Paris is sunny, so the forecast' }),
  }),
  withContent(tool('deploy', 2), {
    'gen_ai.tool.call.arguments': '{"service":"forecast"}',
    'gen_ai.tool.call.result': 'the deploy service is down',
  }),
  withContent(chat(2, [210, 15], 'tool_calls'), {
    'gen_ai.input.messages': AFTER_CUT,
    'gen_ai.output.messages': output('tool_call', call('deploy', { service: 'forecast' })),
  }),
];

const AGENT = { ...RUN, 'gen_ai.operation.name': 'invoke_agent' } as const;

/**
 * The run ended under the driver that took it over at step 2 and linked to the first: after a
 * crash the deploy is replayed (`replay_action`) and fails again; after the approval it awaited
 * (`await_input`) it runs for the first time and fails.
 */
const resumedAgent = (link: string, resolution: 'replay_action' | 'await_input' = 'replay_action'): SpanShape => ({
  name: 'invoke_agent',
  kind: 'INTERNAL',
  status: ERROR,
  attributes: {
    'error.type': 'env_error',
    ...AGENT,
    'polyloop.run.from_step': 2,
    'polyloop.run.resolution': resolution,
    'polyloop.run.resumed': true,
    'polyloop.run.steps': 3,
    'polyloop.run.stop_reason': 'env_error',
  },
  links: [link],
  children: [tool('deploy', 2, resolution === 'replay_action')],
});

/** The run that ended under its first driver: env_error after three steps, its tokens summed. */
const ENDED_RUN: SpanShape = {
  name: 'invoke_agent',
  kind: 'INTERNAL',
  status: ERROR,
  attributes: {
    'error.type': 'env_error',
    ...AGENT,
    'gen_ai.usage.input_tokens': 480,
    'gen_ai.usage.output_tokens': 35,
    'polyloop.run.from_step': 0,
    'polyloop.run.resumed': false,
    'polyloop.run.steps': 3,
    'polyloop.run.stop_reason': 'env_error',
  },
  links: [],
  children: [],
};

/** The trees every runtime must make of the runs of `otelTrees` (otel-tree.ts). */
export const EXPECTED: Omit<OtelTrees, 'problems'> = {
  plain: [{ ...ENDED_RUN, children: FIRST_DRIVER }],
  content: [{ ...ENDED_RUN, children: WITH_CONTENT }],
  // The first driver's run rejected on the store's failure: the sink, told so when run settled, ends its span ERROR
  // (without the failure's message: content is off, and a store's failure may quote a record).
  crashed: [
    {
      name: 'invoke_agent',
      kind: 'INTERNAL',
      status: { code: 'ERROR' },
      attributes: {
        'error.type': 'StoreError',
        ...AGENT,
        'gen_ai.usage.input_tokens': 480,
        'gen_ai.usage.output_tokens': 35,
        'polyloop.run.from_step': 0,
        'polyloop.run.resumed': false,
      },
      links: [],
      children: [...FIRST_DRIVER, resumedAgent('invoke_agent #1')],
    },
  ],
  // The dead process never ended its invoke_agent: its calls and the new driver's span hang under it all the same.
  killed: [{ ...NOT_EXPORTED, name: 'not exported #1', children: [...FIRST_DRIVER, resumedAgent('not exported #1')] }],
  // The first driver's span ends when the run pauses, naming what it waits for; the approver's is under it.
  paused: [
    {
      name: 'invoke_agent',
      kind: 'INTERNAL',
      status: UNSET,
      attributes: {
        ...AGENT,
        'gen_ai.usage.input_tokens': 480,
        'gen_ai.usage.output_tokens': 35,
        'polyloop.run.from_step': 0,
        'polyloop.run.pending_input': 'approval',
        'polyloop.run.resumed': false,
      },
      links: [],
      children: [...FIRST_DRIVER.slice(0, 4), resumedAgent('invoke_agent #1', 'await_input')],
    },
  ],
};
