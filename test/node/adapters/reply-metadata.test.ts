/**
 * Reply metadata in each adapter's reply: every documented finish / stop reason maps to one of the six
 * finish reasons (an unknown one to `other`), usage comes from the wire's own fields — plain and
 * streamed alike — and provider metadata keeps the small facts worth storing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicModel } from '../../../src/adapters/anthropic.ts';
import { anthropicFinishReason, anthropicUsage } from '../../../src/adapters/anthropic-wire.ts';
import { openAIModel } from '../../../src/adapters/openai.ts';
import { openAIFinishReason, openAIUsage } from '../../../src/adapters/openai-wire.ts';
import type { AnthropicFake } from './anthropic-server.ts';
import { modelCall } from './helpers.ts';
import type { OpenAIFake } from './openai-server.ts';
import { startAnthropicFake, startOpenAIFake } from './serve.ts';

let oai: OpenAIFake;
let ant: AnthropicFake;
beforeAll(async () => {
  [oai, ant] = await Promise.all([startOpenAIFake(), startAnthropicFake()]);
});
afterAll(async () => {
  await Promise.all([oai.close(), ant.close()]);
});

const openai = (stream: boolean, body?: { [key: string]: { [key: string]: boolean } }) =>
  openAIModel({ model: 'gpt-test', baseURL: oai.baseURL, stream, ...(body ? { body } : {}) });
const anthropic = (stream: boolean) =>
  anthropicModel({ model: 'claude-test', baseURL: ant.baseURL, maxTokens: 64, stream });

describe('finish reasons', () => {
  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['function_call', 'tool_calls'],
    ['content_filter', 'content_filter'],
    ['something_new', 'other'],
  ])('OpenAI finish_reason %s is %s', (raw, expected) => {
    expect(openAIFinishReason(raw)).toBe(expected);
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'other'],
    ['something_new', 'other'],
  ])('Anthropic stop_reason %s is %s', (raw, expected) => {
    expect(anthropicFinishReason(raw)).toBe(expected);
  });

  it('is absent when the provider sent none, never a guess', () => {
    expect([openAIFinishReason(null), anthropicFinishReason(null), openAIFinishReason(undefined)]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it.each([false, true])('comes over the wire for every OpenAI finish_reason (stream: %s)', async (stream) => {
    const raws = ['stop', 'length', 'tool_calls', 'content_filter', 'function_call', 'something_new'];
    const seen: unknown[] = [];
    for (const raw of raws) {
      oai.turns.push({ kind: 'reply', text: 'x', finishReason: raw });
      const reply = await openai(stream).call(modelCall());
      seen.push([reply.finishReason, reply.providerMetadata?.['openai']]);
    }
    expect(seen).toEqual(
      raws.map((raw) => [
        openAIFinishReason(raw),
        { finishReason: raw, systemFingerprint: 'fp_fake', serviceTier: 'default' },
      ]),
    );
  });

  it.each([false, true])(
    'comes over the wire for every Anthropic stop_reason, with the matched stop sequence (stream: %s)',
    async (stream) => {
      const raws = [
        'end_turn',
        'max_tokens',
        'tool_use',
        'stop_sequence',
        'refusal',
        'pause_turn',
        'model_context_window_exceeded',
      ];
      const seen: unknown[] = [];
      for (const raw of raws) {
        ant.turns.push({
          kind: 'reply',
          content: [{ type: 'text', text: 'x' }],
          stopReason: raw,
          ...(raw === 'stop_sequence' ? { stopSequence: '###' } : {}),
        });
        const reply = await anthropic(stream).call(modelCall());
        seen.push([reply.finishReason, reply.providerMetadata?.['anthropic']]);
      }
      const meta = (raw: string) => ({
        stopReason: raw,
        ...(raw === 'stop_sequence' ? { stopSequence: '###' } : {}),
        cacheCreationInputTokens: 0,
        serviceTier: 'standard',
      });
      expect(seen).toEqual(raws.map((raw) => [anthropicFinishReason(raw), meta(raw)]));
    },
  );
});

describe('usage', () => {
  it('reads OpenAI prompt and completion tokens with the cached and reasoning details', () => {
    const wire = {
      prompt_tokens: 900,
      completion_tokens: 80,
      total_tokens: 980,
      prompt_tokens_details: { cached_tokens: 512 },
      completion_tokens_details: { reasoning_tokens: 64 },
    };
    expect(openAIUsage(wire)).toEqual({
      inputTokens: 900,
      outputTokens: 80,
      cachedInputTokens: 512,
      reasoningTokens: 64,
    });
    expect(openAIUsage({ prompt_tokens: 7, completion_tokens: 2 })).toEqual({ inputTokens: 7, outputTokens: 2 });
  });

  it('counts Anthropic cache writes and reads as input, reads also as cached, and thinking tokens as reasoning', () => {
    const wire = {
      input_tokens: 50,
      output_tokens: 30,
      cache_creation_input_tokens: 2000,
      cache_read_input_tokens: 1000,
      output_tokens_details: { thinking_tokens: 12 },
    };
    expect(anthropicUsage(wire)).toEqual({
      inputTokens: 3050,
      outputTokens: 30,
      cachedInputTokens: 1000,
      reasoningTokens: 12,
    });
    expect(
      anthropicUsage({
        input_tokens: 5,
        output_tokens: 1,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
      }),
    ).toEqual({ inputTokens: 5, outputTokens: 1 });
  });

  it.each([
    ['nothing', undefined],
    ['no completion count', { prompt_tokens: 3 }],
    ['a negative count', { prompt_tokens: -1, completion_tokens: 2 }],
    ['a fractional count', { prompt_tokens: 1.5, completion_tokens: 2 }],
  ])('is absent when OpenAI usage has %s (core would refuse the reply otherwise)', (_what, wire) => {
    expect(openAIUsage(wire)).toBeUndefined();
  });

  it.each([false, true])(
    'comes over the wire from OpenAI, streamed through include_usage (stream: %s)',
    async (stream) => {
      oai.turns.push({
        kind: 'reply',
        text: 'Hi.',
        usage: { promptTokens: 321, completionTokens: 45, cachedTokens: 256, reasoningTokens: 7 },
      });
      const reply = await openai(stream).call(modelCall());
      expect(reply.usage).toEqual({ inputTokens: 321, outputTokens: 45, cachedInputTokens: 256, reasoningTokens: 7 });
      expect(oai.requests.at(-1)!.body['stream_options']).toEqual(stream ? { include_usage: true } : undefined);
    },
  );

  it("lets the caller's own stream_options win, and without the usage chunk the reply has no usage", async () => {
    oai.turns.push({ kind: 'reply', text: 'Hi.' });
    const reply = await openai(true, { stream_options: { include_usage: false } }).call(modelCall());
    expect(oai.requests.at(-1)!.body['stream_options']).toEqual({ include_usage: false });
    expect(reply.text).toBe('Hi.');
    expect(reply.usage).toBeUndefined();
  });

  it.each([false, true])('is absent when an OpenAI-compatible server reports none (stream: %s)', async (stream) => {
    oai.turns.push({ kind: 'reply', text: 'Hi.', usage: null });
    const reply = await openai(stream).call(modelCall());
    expect(reply.usage).toBeUndefined();
    expect(reply.finishReason).toBe('stop');
  });

  it.each([false, true])(
    'comes over the wire from Anthropic, streamed from message_start and message_delta (stream: %s)',
    async (stream) => {
      ant.turns.push({
        kind: 'reply',
        content: [{ type: 'text', text: 'Hi.' }],
        usage: {
          inputTokens: 40,
          outputTokens: 33,
          cacheCreationInputTokens: 300,
          cacheReadInputTokens: 700,
          thinkingTokens: 9,
        },
      });
      const reply = await anthropic(stream).call(modelCall());
      expect(reply.usage).toEqual({ inputTokens: 1040, outputTokens: 33, cachedInputTokens: 700, reasoningTokens: 9 });
      expect(reply.providerMetadata).toEqual({
        anthropic: { stopReason: 'end_turn', cacheCreationInputTokens: 300, serviceTier: 'standard' },
      });
    },
  );
});
