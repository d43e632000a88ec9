/** The model adapters refuse an option they do not know, naming it and the option it most likely meant. */
import { describe, expect, it } from 'vitest';
import { aiSdkCallOptions, aiSdkModel } from '../../../src/adapters/ai-sdk.ts';
import { anthropicModel } from '../../../src/adapters/anthropic.ts';
import { openAIModel } from '../../../src/adapters/openai.ts';
import { expectUnknownOption, refusalOf } from '../../contract/unknown-option.ts';

const openAI = { model: 'gpt-test', apiKey: 'k' };
const anthropic = { model: 'claude-test', apiKey: 'k', maxTokens: 64 };
const aiModel = {
  specificationVersion: 'v3',
  provider: 'test',
  modelId: 'm',
  doGenerate: () => never(),
  doStream: () => never(),
} as never;
function never(): never {
  throw new Error('not called');
}

describe('adapter options', () => {
  it.each<[string, () => unknown, string, string]>([
    ['openAIModel', () => openAIModel({ ...openAI, stram: true } as never), 'stram', 'stream'],
    ['openAIModel', () => openAIModel({ ...openAI, baseUrl: 'http://127.0.0.1:1/v1' } as never), 'baseUrl', 'baseURL'],
    ['anthropicModel', () => anthropicModel({ ...anthropic, max_tokens: 64 } as never), 'max_tokens', 'maxTokens'],
    ['anthropicModel', () => anthropicModel({ ...anthropic, header: {} } as never), 'header', 'headers'],
    ['aiSdkModel', () => aiSdkModel(aiModel, { streaming: true } as never), 'streaming', 'stream'],
    [
      'aiSdkModel settings',
      () => aiSdkModel(aiModel, { settings: { maxTokens: 10 } } as never),
      'maxTokens',
      'maxOutputTokens',
    ],
    [
      'aiSdkCallOptions',
      () => aiSdkCallOptions({} as never, 'test', { providerOption: {} } as never),
      'providerOption',
      'providerOptions',
    ],
  ])('%s refuses a misspelt key', async (_adapter, build, key, meant) => {
    await expectUnknownOption(build, key, meant);
  });

  it('says where a provider request field goes instead', async () => {
    expect(await refusalOf(() => openAIModel({ ...openAI, temperature: 0 } as never))).toContain(
      'temperature is not an option of openAIModel; a request field of the provider goes in `body`',
    );
    expect(await refusalOf(() => anthropicModel({ ...anthropic, thinking: {} } as never))).toContain(
      'thinking is not an option of anthropicModel; a request field of the provider goes in `body`',
    );
  });

  it('says a call setting given beside the options goes in settings', async () => {
    expect(await refusalOf(() => aiSdkModel(aiModel, { temperature: 0 } as never))).toContain(
      'temperature is not an option of aiSdkModel; a call setting goes in `settings`',
    );
  });

  it('takes maxResponseBytes as an option of all three', () => {
    expect(() => openAIModel({ ...openAI, maxResponseBytes: 1_000_000 })).not.toThrow();
    expect(() => anthropicModel({ ...anthropic, maxResponseBytes: 1_000_000 })).not.toThrow();
    expect(() => aiSdkModel(aiModel, { maxResponseBytes: 1_000_000 })).not.toThrow();
  });

  it('refuses options that are not an object', async () => {
    expect(await refusalOf(() => openAIModel('gpt-4.1' as never))).toBe(
      'openAIModel needs an options object, got a string',
    );
  });
});
