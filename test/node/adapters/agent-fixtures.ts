/** Shared fixtures of the full agent runs through the adapters (Web APIs only: also used inside workerd). */
import { z } from 'zod';
import { ToolRegistry } from '../../../src/core/index.ts';
import type { Message, RunRequest } from '../../../src/core/index.ts';
import { defineTool } from '../../../src/zod/index.ts';
import type { AnthropicTurn, AnthropicUsageScript } from './anthropic-server.ts';
import type { OpenAITurn, OpenAIUsageScript } from './openai-server.ts';

const txt = (role: Message['role'], text: string): Message => ({ role, content: [{ type: 'text', text }] });

export const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' };
export const MULTI =
  'You called 2 tools at once ("add", "add"), but exactly one tool call per turn is allowed. None of them ran. Call the one you need first; you will see its result before your next call.';

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
    context: {
      run: [txt('system', 'You are a calculator. Use the add tool.')],
      goal: [txt('user', 'What is (1+2)+4?')],
    },
    injections: { skills: [{ name: 'brevity', text: 'Answer briefly.' }] },
    modelBinding: { user_id: 'u-1' },
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation: {observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1000,
  };
}

export const OPENAI_SCRIPT: OpenAITurn[] = [
  {
    kind: 'reply',
    id: 'chatcmpl-0',
    text: null,
    reasoning: 'first add',
    toolCalls: [{ id: 'call_0', name: 'add', arguments: '{"a":1,"b":2}' }],
  },
  {
    kind: 'reply',
    id: 'chatcmpl-1',
    text: null,
    toolCalls: [
      { id: 'call_1a', name: 'add', arguments: '{"a":3,"b":4}' },
      { id: 'call_1b', name: 'add', arguments: '{"a":0,"b":0}' },
    ],
  },
  {
    kind: 'reply',
    id: 'chatcmpl-2',
    text: 'Adding 3 and 4.',
    toolCalls: [{ id: 'call_2', name: 'add', arguments: '{"a":3,"b":4}' }],
  },
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
  {
    kind: 'reply',
    id: 'msg_2',
    content: [
      { type: 'text', text: 'Now 3+4.' },
      { type: 'tool_use', id: 'toolu_2', name: 'add', input: { a: 3, b: 4 } },
    ],
  },
  { kind: 'reply', id: 'msg_3', content: [{ type: 'text', text: 'The answer is 7.' }] },
];
export const EMPTY =
  'Your reply was empty: it had no text and no tool call. Either call one of the tools (add), or reply with your final answer as text.';

/** Distinct token counts per turn of {@link OPENAI_SCRIPT} (the prompt grows with history, part of it cached). */
export const OPENAI_USAGE: readonly OpenAIUsageScript[] = [
  { promptTokens: 101, completionTokens: 11, reasoningTokens: 3 },
  { promptTokens: 152, completionTokens: 23, cachedTokens: 64 },
  { promptTokens: 203, completionTokens: 17, cachedTokens: 128, reasoningTokens: 5 },
  { promptTokens: 254, completionTokens: 9, cachedTokens: 128 },
];

/** {@link OPENAI_SCRIPT}, each turn reporting its {@link OPENAI_USAGE}. */
export const OPENAI_USAGE_SCRIPT: OpenAITurn[] = OPENAI_SCRIPT.map((t, i) =>
  t.kind === 'reply' ? { ...t, usage: OPENAI_USAGE[i]! } : t,
);

/** Distinct token counts per turn of {@link ANTHROPIC_SCRIPT}: a cache write on the first call, reads after it. */
export const ANTHROPIC_USAGE: readonly AnthropicUsageScript[] = [
  { inputTokens: 90, outputTokens: 40, cacheCreationInputTokens: 1024, thinkingTokens: 20 },
  { inputTokens: 30, outputTokens: 2, cacheReadInputTokens: 1024 },
  { inputTokens: 45, outputTokens: 25, cacheReadInputTokens: 1024 },
  { inputTokens: 60, outputTokens: 8, cacheReadInputTokens: 1024 },
];

/** {@link ANTHROPIC_SCRIPT}, each turn reporting its {@link ANTHROPIC_USAGE}. */
export const ANTHROPIC_USAGE_SCRIPT: AnthropicTurn[] = ANTHROPIC_SCRIPT.map((t, i) =>
  t.kind === 'reply' ? { ...t, usage: ANTHROPIC_USAGE[i]! } : t,
);

type Counts = { inputTokens: number; outputTokens: number; cachedInputTokens: number; reasoningTokens: number };
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const rec = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};

/**
 * What the OpenAI fake reported, summed by hand from its wire objects (not through the adapter's
 * code): prompt tokens (cached included), completion tokens (reasoning included), the details.
 */
export function openAITotals(reported: readonly Record<string, unknown>[]): Counts {
  return reported.reduce<Counts>(
    (t, u) => ({
      inputTokens: t.inputTokens + num(u['prompt_tokens']),
      outputTokens: t.outputTokens + num(u['completion_tokens']),
      cachedInputTokens: t.cachedInputTokens + num(rec(u['prompt_tokens_details'])['cached_tokens']),
      reasoningTokens: t.reasoningTokens + num(rec(u['completion_tokens_details'])['reasoning_tokens']),
    }),
    { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 },
  );
}

/** What the Anthropic fake reported, summed by hand: input = uncached + cache writes + cache reads (decision 0027). */
export function anthropicTotals(reported: readonly Record<string, unknown>[]): Counts {
  return reported.reduce<Counts>(
    (t, u) => ({
      inputTokens:
        t.inputTokens +
        num(u['input_tokens']) +
        num(u['cache_creation_input_tokens']) +
        num(u['cache_read_input_tokens']),
      outputTokens: t.outputTokens + num(u['output_tokens']),
      cachedInputTokens: t.cachedInputTokens + num(u['cache_read_input_tokens']),
      reasoningTokens: t.reasoningTokens + num(rec(u['output_tokens_details'])['thinking_tokens']),
    }),
    { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 },
  );
}
