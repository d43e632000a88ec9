/**
 * Type tests (checked by `tsc -p tsconfig.json`, which `npm test` runs): every request body our
 * adapters build is assignable to the official SDK's request-params type.
 */
import type { MessageCreateParams, MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import type {
  ChatCompletionCreateParams,
  ChatCompletionCreateParamsNonStreaming,
} from 'openai/resources/chat/completions';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { anthropicRequestBody } from '../../../src/adapters/anthropic-wire.ts';
import type { AnthropicRequest } from '../../../src/adapters/anthropic-wire.ts';
import { openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import { openAIRequestBody } from '../../../src/adapters/openai-wire.ts';
import type { OpenAIChatRequest } from '../../../src/adapters/openai-wire.ts';
import type { DecisionInterpreter, ModelCaller } from '../../../src/core/index.ts';
import { modelCall, ROUND_TRIP } from './helpers.ts';

describe('request body types', () => {
  it('the OpenAI body is assignable to the openai SDK ChatCompletionCreateParams', () => {
    expectTypeOf<OpenAIChatRequest>().toExtend<ChatCompletionCreateParams>();
    expectTypeOf(openAIRequestBody).returns.toExtend<ChatCompletionCreateParams>();
    expectTypeOf<Omit<OpenAIChatRequest, 'stream'>>().toExtend<ChatCompletionCreateParamsNonStreaming>();
    // A runtime value of that type, built from a full round trip, is accepted by the SDK type too.
    const body: ChatCompletionCreateParams = openAIRequestBody(modelCall({ messages: ROUND_TRIP }), { model: 'm' });
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant', 'tool']);
  });

  it('the Anthropic body is assignable to the @anthropic-ai/sdk MessageCreateParams', () => {
    expectTypeOf<AnthropicRequest>().toExtend<MessageCreateParams>();
    expectTypeOf(anthropicRequestBody).returns.toExtend<MessageCreateParams>();
    expectTypeOf<Omit<AnthropicRequest, 'stream'>>().toExtend<MessageCreateParamsNonStreaming>();
    const body: MessageCreateParams = anthropicRequestBody(modelCall({ messages: ROUND_TRIP }), {
      model: 'm',
      maxTokens: 10,
    });
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('the adapters are core seams', () => {
    expectTypeOf(openAIModel).returns.toEqualTypeOf<ModelCaller>();
    expectTypeOf(anthropicModel).returns.toEqualTypeOf<ModelCaller>();
    expectTypeOf(openAIToolInterpreter).returns.toEqualTypeOf<DecisionInterpreter>();
    expectTypeOf(anthropicToolInterpreter).returns.toEqualTypeOf<DecisionInterpreter>();
    expect(openAIModel({ model: 'x', apiKey: 'sk-x' }).params['model']).toBe('x');
  });
});
