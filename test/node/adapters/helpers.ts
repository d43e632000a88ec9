/** Shared builders for adapter tests. */
import type { Message, ModelCall, ModelToolSchema } from '../../../src/core/index.ts';

export const ADD_TOOL: ModelToolSchema = {
  name: 'add',
  description: 'Add two integers.',
  parameters: {
    type: 'object',
    properties: { a: { type: 'integer' }, b: { type: 'integer' } },
    required: ['a', 'b'],
    additionalProperties: false,
  },
};

export const txt = (role: Message['role'], text: string): Message => ({ role, content: [{ type: 'text', text }] });

/** A model call as core would make it. */
export function modelCall(over: Partial<ModelCall> = {}): ModelCall {
  return {
    messages: [txt('system', 'You add numbers.'), txt('user', 'What is 1+2?')],
    callSeq: 0,
    runId: 'r1',
    resultId: 's0.model',
    binding: {},
    tools: [ADD_TOOL],
    signal: new AbortController().signal,
    ...over,
  };
}

/** A conversation after one tool call was answered, as assembly gives it, with provider reasoning. */
export const ROUND_TRIP: readonly Message[] = [
  txt('system', 'You add numbers.'),
  txt('system', 'Skills: be brief.'),
  txt('user', 'What is 1+2, then +4?'),
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'I should add.', signature: 'sig-1' },
      { type: 'text', text: 'Adding.' },
      { type: 'tool_call', id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_1', text: 'Observation:\n3' }] },
];

/** Capture what a promise rejects with. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}
