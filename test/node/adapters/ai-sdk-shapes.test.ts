/**
 * aiSdkModel over hand-written model objects of each specification version: the older result
 * shapes (V2 string finish reasons and flat usage, V3 nested usage), streams of parts, reasoning
 * metadata that goes back verbatim, abort, and the call options checked against each version's types.
 */
import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV4CallOptions,
} from '@ai-sdk/provider';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { aiSdkCallOptions, aiSdkModel } from '../../../src/adapters/ai-sdk.ts';
import { toAiSdkPrompt } from '../../../src/adapters/ai-sdk-prompt.ts';
import type { AiSdkCallOptions } from '../../../src/adapters/ai-sdk.ts';
import { finishReasonOf, usageOf } from '../../../src/adapters/ai-sdk-reply.ts';
import type { Message } from '../../../src/core/index.ts';
import { modelCall, rejection, ROUND_TRIP } from './helpers.ts';

const streamOf = (parts: readonly unknown[]) =>
  new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });

function v2(result: Record<string, unknown>, parts: readonly unknown[] = [], seen: unknown[] = []): LanguageModelV2 {
  return {
    specificationVersion: 'v2',
    provider: 'hand.v2',
    modelId: 'm2',
    supportedUrls: {},
    doGenerate: async (o) => (seen.push(o), result) as never,
    doStream: async (o) => (seen.push(o), { stream: streamOf(parts) }) as never,
  };
}

function v3(result: Record<string, unknown>, parts: readonly unknown[] = []): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'anthropic.messages',
    modelId: 'm3',
    supportedUrls: {},
    doGenerate: async () => result as never,
    doStream: async () => ({ stream: streamOf(parts) }) as never,
  };
}

describe('aiSdkModel over a hand-written LanguageModelV2', () => {
  const result = {
    content: [
      { type: 'reasoning', text: 'think' },
      { type: 'text', text: 'Adding.' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a":1,"b":2}' },
    ],
    finishReason: 'tool-calls',
    usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10, cachedInputTokens: 2, reasoningTokens: 1 },
    response: { id: 'resp-2' },
    warnings: [],
  };

  it('reads the string finish reason and the flat usage of a V2 result', async () => {
    const seen: unknown[] = [];
    const model = aiSdkModel(v2(result, [], seen));
    expect(model.params).toMatchObject({ model: 'hand.v2:m2', specificationVersion: 'v2' });
    const reply = await model.call(modelCall());
    expect(reply).toEqual({
      callId: 'resp-2',
      text: 'Adding.',
      reasoning: 'think',
      toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }],
      content: [
        { type: 'reasoning', text: 'think' },
        { type: 'text', text: 'Adding.' },
        { type: 'tool_call', id: 'c1', name: 'add', arguments: { a: 1, b: 2 } },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 7, outputTokens: 3, cachedInputTokens: 2, reasoningTokens: 1 },
    });
    expect(seen[0]).toMatchObject({
      tools: [{ type: 'function', name: 'add', inputSchema: { type: 'object' } }],
      providerOptions: { openai: { parallelToolCalls: false }, anthropic: { disableParallelToolUse: true } },
    });
  });

  it('streams V2 text deltas into onDelta and reads the finish part', async () => {
    const parts = [
      { type: 'stream-start', warnings: [] },
      { type: 'response-metadata', id: 'resp-s' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'The ' },
      { type: 'text-delta', id: 't', delta: 'answer.' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: 'length', usage: { inputTokens: 4, outputTokens: 9, totalTokens: 13 } },
    ];
    const deltas: string[] = [];
    const reply = await aiSdkModel(v2(result, parts), { stream: true }).call(
      modelCall({ onDelta: (d) => deltas.push(d) }),
    );
    expect(deltas).toEqual(['The ', 'answer.']);
    expect(reply).toMatchObject({
      callId: 'resp-s',
      text: 'The answer.',
      finishReason: 'length',
      usage: { inputTokens: 4, outputTokens: 9 },
    });
  });

  it('streams V2 reasoning deltas into onDelta as reasoning, before the text deltas, and the reply is unchanged', async () => {
    const parts = [
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'thi' },
      { type: 'reasoning-delta', id: 'r', delta: '' },
      { type: 'reasoning-delta', id: 'r', delta: 'nk' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Adding.' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 4, outputTokens: 9, totalTokens: 13 } },
    ];
    const deltas: [string, string][] = [];
    const reply = await aiSdkModel(v2(result, parts), { stream: true }).call(
      modelCall({ onDelta: (d, kind) => deltas.push([kind ?? 'text', d]) }),
    );
    expect(deltas).toEqual([
      ['reasoning', 'thi'],
      ['reasoning', 'nk'],
      ['text', 'Adding.'],
    ]);
    expect(reply).toMatchObject({
      text: 'Adding.',
      reasoning: 'think',
      content: [
        { type: 'reasoning', text: 'think' },
        { type: 'text', text: 'Adding.' },
      ],
    });
  });

  it('rejects with the error part of a stream', async () => {
    const boom = new Error('overloaded');
    const e = await rejection(
      aiSdkModel(v2(result, [{ type: 'error', error: boom }]), { stream: true }).call(modelCall()),
    );
    expect(e).toBe(boom);
  });
});

describe('aiSdkModel over a hand-written LanguageModelV3', () => {
  it('reads nested usage and a redacted reasoning part, which goes back verbatim as an opaque block', async () => {
    const model = aiSdkModel(
      v3({
        content: [
          { type: 'reasoning', text: '', providerMetadata: { anthropic: { redactedData: 'xyz' } } },
          { type: 'reasoning', text: 'signed', providerMetadata: { anthropic: { signature: 's1' } } },
          { type: 'text', text: 'Done.' },
        ],
        finishReason: { unified: 'stop', raw: 'end_turn' },
        usage: {
          inputTokens: { total: 20, noCache: 15, cacheRead: 5, cacheWrite: 0 },
          outputTokens: { total: 8, text: 6, reasoning: 2 },
        },
        warnings: [],
      }),
    );
    const reply = await model.call(modelCall());
    expect(reply.usage).toEqual({ inputTokens: 20, outputTokens: 8, cachedInputTokens: 5, reasoningTokens: 2 });
    expect(reply.finishReason).toBe('stop');
    expect(reply.content).toEqual([
      {
        type: 'opaque',
        provider: 'anthropic.messages',
        data: { part: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'xyz' } } },
      },
      { type: 'reasoning', text: 'signed', signature: 's1' },
      { type: 'text', text: 'Done.' },
    ]);
    const back = toAiSdkPrompt([{ role: 'assistant', content: reply.content! }], 'anthropic.messages');
    expect(back).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'xyz' } } },
          { type: 'reasoning', text: 'signed', providerOptions: { anthropic: { signature: 's1' } } },
          { type: 'text', text: 'Done.' },
        ],
      },
    ]);
  });

  it('gathers a V3 stream: a signature that arrives in a late reasoning delta, and a tool call', async () => {
    const parts = [
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'hmm' },
      { type: 'reasoning-delta', id: 'r', delta: '', providerMetadata: { anthropic: { signature: 'late' } } },
      { type: 'reasoning-end', id: 'r' },
      { type: 'tool-call', toolCallId: 'tu', toolName: 'add', input: '{"a":2,"b":2}' },
      {
        type: 'finish',
        finishReason: { unified: 'tool-calls', raw: 'tool_use' },
        usage: { inputTokens: { total: 3 }, outputTokens: { total: 4 } },
      },
    ];
    const deltas: [string, string][] = [];
    const reply = await aiSdkModel(v3({}, parts), { stream: true }).call(
      modelCall({ onDelta: (d, kind) => deltas.push([kind ?? 'text', d]) }),
    );
    expect(deltas).toEqual([['reasoning', 'hmm']]);
    expect(reply).toMatchObject({
      content: [
        { type: 'reasoning', text: 'hmm', signature: 'late' },
        { type: 'tool_call', id: 'tu', name: 'add', arguments: { a: 2, b: 2 } },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 3, outputTokens: 4 },
    });
  });

  it('rejects with signal.reason when aborted during a stream that never ends', async () => {
    const never = {
      specificationVersion: 'v3',
      provider: 'p',
      modelId: 'm',
      supportedUrls: {},
      doGenerate: async () => ({}) as never,
      doStream: async () => ({ stream: new ReadableStream() }) as never,
    } satisfies LanguageModelV3;
    const ctrl = new AbortController();
    const pending = aiSdkModel(never, { stream: true }).call(modelCall({ signal: ctrl.signal }));
    const reason = new Error('stop now');
    setTimeout(() => ctrl.abort(reason), 5);
    expect(await rejection(pending)).toBe(reason);
  });
});

describe('aiSdkModel mapping', () => {
  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool-calls', 'tool_calls'],
    ['content-filter', 'content_filter'],
    ['error', 'error'],
    ['other', 'other'],
    ['unknown', 'other'],
    [{ unified: 'interrupted', raw: 'x' }, 'other'],
    [{ unified: 'length', raw: 'max_tokens' }, 'length'],
    [undefined, undefined],
  ])('reads the finish reason %j as %s', (raw, expected) => {
    expect(finishReasonOf(raw)).toBe(expected);
  });

  it.each([
    [{ inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }, undefined],
    [
      { inputTokens: 5, outputTokens: undefined, totalTokens: 5 },
      { inputTokens: 5, outputTokens: 0 },
    ],
    [
      { inputTokens: { total: 1, cacheRead: undefined }, outputTokens: { total: 2, reasoning: undefined } },
      { inputTokens: 1, outputTokens: 2 },
    ],
  ])('reads the usage %j as %j', (raw, expected) => {
    expect(usageOf(raw)).toEqual(expected);
  });

  it('puts system messages first in their order, tool results in a tool message, and drops another provider opaque block', () => {
    const messages: Message[] = [
      ...ROUND_TRIP,
      {
        role: 'assistant',
        content: [
          { type: 'opaque', provider: 'anthropic', data: { type: 'redacted_thinking', data: 'q' } },
          { type: 'text', text: 'ok' },
        ],
      },
      { role: 'system', content: [{ type: 'text', text: 'Late.' }] },
    ];
    const prompt = toAiSdkPrompt(messages, 'anthropic.messages');
    expect(prompt.map((m) => m.role)).toEqual(['system', 'system', 'system', 'user', 'assistant', 'tool', 'assistant']);
    expect(prompt[2]).toEqual({ role: 'system', content: 'Late.' });
    expect(prompt[4]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'I should add.', providerOptions: { anthropic: { signature: 'sig-1' } } },
        { type: 'text', text: 'Adding.' },
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'add', input: { a: 1, b: 2 } },
      ],
    });
    expect(prompt[5]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_1',
          toolName: 'add',
          output: { type: 'text', value: 'Observation:\n3' },
        },
      ],
    });
    expect(prompt[6]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'ok' }] });
  });

  it('refuses a model object of an unknown specification version', () => {
    expect(() => aiSdkModel({ specificationVersion: 'v1', provider: 'p', modelId: 'm' } as never)).toThrow(
      /specificationVersion "v1" is not supported/,
    );
  });

  it('sends the binding only where the binding option maps it', async () => {
    const seen: unknown[] = [];
    const model = aiSdkModel(v2({ content: [], finishReason: 'stop', usage: {} }, [], seen), {
      binding: (b) => ({ headers: { 'x-user': b['user_id'] ?? '' } }),
    });
    expect(model.params['binding']).toBe('custom');
    await model.call(modelCall({ binding: { user_id: 'u-1' } }));
    expect(seen[0]).toMatchObject({ headers: { 'x-user': 'u-1' } });
  });

  it('builds call options every specification version accepts', () => {
    const opts = aiSdkCallOptions(modelCall(), 'openai.chat');
    expect(opts.prompt[0]).toEqual({ role: 'system', content: 'You add numbers.' });
    expectTypeOf<AiSdkCallOptions>().toExtend<LanguageModelV2CallOptions>();
    expectTypeOf<AiSdkCallOptions>().toExtend<LanguageModelV3CallOptions>();
    expectTypeOf<AiSdkCallOptions>().toExtend<LanguageModelV4CallOptions>();
  });
});
