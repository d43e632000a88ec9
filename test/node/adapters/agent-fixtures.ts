/** Shared fixtures of the full agent runs through the adapters (Web APIs only: also used inside workerd). */
import { z } from 'zod';
import { ToolRegistry } from '../../../src/core/index.ts';
import type { Message, RunRequest } from '../../../src/core/index.ts';
import { defineTool } from '../../../src/zod/index.ts';
import type { AnthropicTurn } from './anthropic-server.ts';
import type { OpenAITurn } from './openai-server.ts';

const txt = (role: Message['role'], text: string): Message => ({ role, content: [{ type: 'text', text }] });

export const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' };
export const MULTI = 'You called 2 tools at once ("add", "add"), but exactly one tool call per turn is allowed. None of them ran. Call the one you need first; you will see its result before your next call.';

export function request(runId: string): RunRequest {
  const add = defineTool({
    name: 'add',
    description: 'Add two integers.',
    schema: z.object({ a: z.number().int(), b: z.number().int() }),
    replayPolicy: 'safe',
    handler: async ({ a, b }) => String(a + b),
  });
  const tools = ToolRegistry.of([add]);
  return {
    runId,
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
    executor: tools.executor(),
    tools,
    context: { run: [txt('system', 'You are a calculator. Use the add tool.')], goal: [txt('user', 'What is (1+2)+4?')] },
    injections: { skills: [{ name: 'brevity', text: 'Answer briefly.' }] },
    modelBinding: { user_id: 'u-1' },
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation: {observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1000,
  };
}

export const OPENAI_SCRIPT: OpenAITurn[] = [
  { kind: 'reply', id: 'chatcmpl-0', text: null, reasoning: 'first add', toolCalls: [{ id: 'call_0', name: 'add', arguments: '{"a":1,"b":2}' }] },
  { kind: 'reply', id: 'chatcmpl-1', text: null, toolCalls: [{ id: 'call_1a', name: 'add', arguments: '{"a":3,"b":4}' }, { id: 'call_1b', name: 'add', arguments: '{"a":0,"b":0}' }] },
  { kind: 'reply', id: 'chatcmpl-2', text: 'Adding 3 and 4.', toolCalls: [{ id: 'call_2', name: 'add', arguments: '{"a":3,"b":4}' }] },
  { kind: 'reply', id: 'chatcmpl-3', text: 'The answer is 7.' },
];

export const ANTHROPIC_SCRIPT: AnthropicTurn[] = [
  {
    kind: 'reply',
    id: 'msg_0',
    content: [
      { type: 'thinking', thinking: 'First add 1 and 2.', signature: 'sig-0' },
      { type: 'tool_use', id: 'toolu_0', name: 'add', input: { a: 1, b: 2 } },
    ],
  },
  { kind: 'reply', id: 'msg_1', content: [{ type: 'text', text: '' }] },
  { kind: 'reply', id: 'msg_2', content: [{ type: 'text', text: 'Now 3+4.' }, { type: 'tool_use', id: 'toolu_2', name: 'add', input: { a: 3, b: 4 } }] },
  { kind: 'reply', id: 'msg_3', content: [{ type: 'text', text: 'The answer is 7.' }] },
];
export const EMPTY = 'Your reply was empty: it had no text and no tool call. Either call one of the tools (add), or reply with your final answer as text.';
