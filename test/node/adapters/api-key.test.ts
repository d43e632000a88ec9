/**
 * A model for a provider's own endpoint without a key fails when it is built, with a message that
 * names the option and the environment variable; a custom `baseURL` (a local server) needs no key.
 */
import { describe, expect, it } from 'vitest';
import { anthropicModel, ANTHROPIC_BASE_URL } from '../../../src/adapters/anthropic.ts';
import { openAIModel, OPENAI_BASE_URL } from '../../../src/adapters/openai.ts';
import { InvalidRequestError, isPolyLoopError } from '../../../src/core/index.ts';
import { modelCall } from './helpers.ts';
import { startOpenAIFake } from './serve.ts';

const openAI = (over: Partial<Parameters<typeof openAIModel>[0]>) => () => openAIModel({ model: 'gpt-test', ...over });
const anthropic = (over: Partial<Parameters<typeof anthropicModel>[0]>) => () =>
  anthropicModel({ model: 'claude-test', maxTokens: 64, ...over });

/** The error `build` throws (it must throw). */
function thrownBy(build: () => unknown): unknown {
  try {
    build();
  } catch (e) {
    return e;
  }
  throw new Error('expected the model not to be built');
}

describe("a model for the provider's own endpoint without an API key", () => {
  it('openAIModel without apiKey throws InvalidRequestError naming the option, the endpoint and OPENAI_API_KEY', () => {
    const e = thrownBy(openAI({}));
    expect(e).toBeInstanceOf(InvalidRequestError);
    expect(isPolyLoopError(e, 'invalid_request')).toBe(true);
    expect((e as Error).message).toBe(
      'openAIModel: apiKey is required for https://api.openai.com/v1, and none was given (pass { apiKey: process.env.OPENAI_API_KEY } with OPENAI_API_KEY set); a local server (baseURL) needs none',
    );
  });

  it('anthropicModel without apiKey throws InvalidRequestError naming the option, the endpoint and ANTHROPIC_API_KEY', () => {
    const e = thrownBy(anthropic({}));
    expect(isPolyLoopError(e, 'invalid_request')).toBe(true);
    expect((e as Error).message).toBe(
      'anthropicModel: apiKey is required for https://api.anthropic.com/v1, and none was given (pass { apiKey: process.env.ANTHROPIC_API_KEY } with ANTHROPIC_API_KEY set); a local server (baseURL) needs none',
    );
  });

  it.each([
    ["an empty key (an unset variable read with ?? '')", { apiKey: '' }],
    ['a blank key', { apiKey: '  ' }],
    ['the default base URL spelled out', { baseURL: 'https://api.openai.com/v1/' }],
    ['an undefined key next to the default base URL', { apiKey: undefined, baseURL: OPENAI_BASE_URL }],
  ])('openAIModel refuses %s', (_what, over) => {
    expect(thrownBy(openAI(over as Partial<Parameters<typeof openAIModel>[0]>))).toMatchObject({
      name: 'InvalidRequestError',
      message: expect.stringContaining('OPENAI_API_KEY'),
    });
  });

  it.each([
    ['an empty key', { apiKey: '' }],
    ['the default base URL spelled out', { baseURL: ANTHROPIC_BASE_URL }],
  ])('anthropicModel refuses %s', (_what, over) => {
    expect(thrownBy(anthropic(over))).toMatchObject({
      name: 'InvalidRequestError',
      message: expect.stringContaining('ANTHROPIC_API_KEY'),
    });
  });

  it('says the key is empty when an empty string was passed', () => {
    expect((thrownBy(openAI({ apiKey: '' })) as Error).message).toContain('and it is empty');
  });
});

describe('a key given some other way, or another endpoint', () => {
  it.each([
    ['an apiKey', { apiKey: 'sk-test' }],
    ['an Authorization header of its own', { headers: { Authorization: 'Bearer sk-test' } }],
    ['a local server as baseURL', { baseURL: 'http://127.0.0.1:8080/v1' }],
    ['a gateway as baseURL with an empty key', { baseURL: 'https://gateway.example/openai/v1', apiKey: '' }],
  ])('openAIModel is built with %s', (_what, over) => {
    expect(openAI(over)().params['model']).toBe('gpt-test');
  });

  it.each([
    ['an apiKey', { apiKey: 'sk-ant-test' }],
    ['an x-api-key header of its own', { headers: { 'X-Api-Key': 'sk-ant-test' } }],
    ['a local server as baseURL', { baseURL: 'http://127.0.0.1:8080/v1' }],
  ])('anthropicModel is built with %s', (_what, over) => {
    expect(anthropic(over)().params['model']).toBe('claude-test');
  });

  it('a keyless model on a local OpenAI-compatible server answers, sending no Authorization header', async () => {
    const fake = await startOpenAIFake();
    try {
      fake.turns.push({ kind: 'reply', text: 'hello' });
      const reply = await openAIModel({ model: 'local', baseURL: fake.baseURL }).call(modelCall());
      expect(reply.text).toBe('hello');
      expect(fake.requests.at(-1)?.headers['authorization']).toBeUndefined();
    } finally {
      await fake.close();
    }
  });
});
