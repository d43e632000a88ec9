/**
 * The model adapters against servers that send too much or the wrong thing: an event stream that
 * never ends, a 40 MiB JSON body, a stream with no events, a JSON body where a stream was asked
 * for, a stream cut before the provider's end. Each run ends `model_error` with a message saying
 * why — never a process filling its memory, nor empty replies spending the step budget — and an
 * endless stream is cancelled, so the server sees the connection close.
 */
import type { ServerResponse } from 'node:http';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, describe, expect, it } from 'vitest';
import { aiSdkModel, aiSdkToolInterpreter } from '../../../src/adapters/ai-sdk.ts';
import type { AiSdkLanguageModel, AiSdkModelOptions } from '../../../src/adapters/ai-sdk.ts';
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import type { AnthropicModelOptions } from '../../../src/adapters/anthropic.ts';
import { openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import type { OpenAIModelOptions } from '../../../src/adapters/openai.ts';
import { defineAgent, InMemoryStore, run, silentSink } from '../../../src/core/index.ts';
import type { DecisionInterpreter, ModelCaller, RunResult } from '../../../src/core/index.ts';
import { request, SYNTHETIC } from './agent-fixtures.ts';
import { startHostile, writeBody, writeEndlessly } from './hostile-server.ts';
import type { Hostile } from './hostile-server.ts';

const servers: Hostile[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function hostile(answer: (res: ServerResponse) => Promise<void> | void): Promise<Hostile> {
  const server = await startHostile(answer);
  servers.push(server);
  return server;
}

/** A server sending `text` as an event stream, then closing it. */
const streaming = (text: string): Promise<Hostile> =>
  hostile((res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(text));

let runs = 0;
async function runOnce(model: ModelCaller, interpreter: DecisionInterpreter): Promise<RunResult> {
  const store = new InMemoryStore();
  const agent = defineAgent({ model, interpreter, store, events: silentSink(), syntheticObservations: SYNTHETIC });
  return run(agent, request(`limits-${++runs}`));
}

const KIB16 = 'x'.repeat(16 * 1024);
const MIB40 = 'y'.repeat(40 * 1024 * 1024);
const DEFAULT_LIMIT = /larger than 33554432 bytes \(maxResponseBytes\)/;
const UNFINISHED = /ended without the provider's finish reason/;

const OPENAI = { id: 'c1', created: 1, model: 'm' };
const openAIChunk = (text: string): string => {
  const choices = [{ index: 0, delta: { content: text }, finish_reason: null }];
  return `data: ${JSON.stringify({ ...OPENAI, object: 'chat.completion.chunk', choices })}\n\n`;
};
const openAIBody = (text: string): string => {
  const choices = [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }];
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  return JSON.stringify({ ...OPENAI, object: 'chat.completion', choices, usage });
};

const usage = { input_tokens: 1, output_tokens: 1 };
const MESSAGE = { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', stop_sequence: null, usage };
const anthropicEvent = (data: Record<string, unknown>): string =>
  `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
const anthropicHead =
  anthropicEvent({ type: 'message_start', message: { ...MESSAGE, content: [], stop_reason: null } }) +
  anthropicEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
const anthropicDelta = (text: string): string =>
  anthropicEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
const anthropicBody = (text: string): string =>
  JSON.stringify({ ...MESSAGE, content: [{ type: 'text', text }], stop_reason: 'end_turn' });

const openAI = (server: Hostile, over: Partial<OpenAIModelOptions> = {}): Promise<RunResult> =>
  runOnce(openAIModel({ model: 'gpt-test', baseURL: server.baseURL, ...over }), openAIToolInterpreter());
const anthropic = (server: Hostile, over: Partial<AnthropicModelOptions> = {}): Promise<RunResult> =>
  runOnce(
    anthropicModel({ model: 'claude-test', maxTokens: 100, baseURL: server.baseURL, ...over }),
    anthropicToolInterpreter(),
  );
const aiSdk = (model: AiSdkLanguageModel, options: AiSdkModelOptions = {}): Promise<RunResult> =>
  runOnce(aiSdkModel(model, options), aiSdkToolInterpreter());
const viaOpenAI = (server: Hostile) => createOpenAI({ baseURL: server.baseURL, apiKey: 'k' }).chat('gpt-test');
const viaAnthropic = (server: Hostile) => createAnthropic({ baseURL: server.baseURL, apiKey: 'k' })('claude-test');

describe('a response without end', () => {
  it('openAIModel cancels an endless stream past 32 MiB: model_error naming the limit, connection closed', async () => {
    const server = await hostile((res) => writeEndlessly(res, '', () => openAIChunk(KIB16)));
    const result = await openAI(server, { stream: true });
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(DEFAULT_LIMIT);
    expect(await server.closedEarly()).toBe(true);
  });

  it('anthropicModel cancels an endless stream past 32 MiB, and the server sees the connection close', async () => {
    const server = await hostile((res) => writeEndlessly(res, anthropicHead, () => anthropicDelta(KIB16)));
    const result = await anthropic(server, { stream: true });
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(DEFAULT_LIMIT);
    expect(await server.closedEarly()).toBe(true);
  });

  it('aiSdkModel cancels an endless stream past 32 MiB of text, and the provider’s connection closes', async () => {
    const server = await hostile((res) => writeEndlessly(res, '', () => openAIChunk(KIB16)));
    const result = await aiSdk(viaOpenAI(server), { stream: true });
    expect(result.stopReason).toBe('model_error');
    const what = 'larger than 33554432 bytes of text, reasoning and tool input';
    expect(result.error).toBe(`AiSdkResponseTooLargeError: aiSdkModel: the reply is ${what} (maxResponseBytes)`);
    expect(await server.closedEarly()).toBe(true);
  });
});

describe('a body of 40 MiB', () => {
  it('openAIModel stops reading it: model_error naming the limit', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', openAIBody(MIB40)));
    const result = await openAI(server);
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(DEFAULT_LIMIT);
    expect(await server.closedEarly()).toBe(true);
  });

  it('anthropicModel stops reading it: model_error naming the limit', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', anthropicBody(MIB40)));
    const result = await anthropic(server);
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(DEFAULT_LIMIT);
  });

  it('aiSdkModel refuses the reply the provider read whole (generate has no bytes to stop)', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', openAIBody(MIB40)));
    const result = await aiSdk(viaOpenAI(server));
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(/larger than 33554432 bytes of text, reasoning and tool input/);
  });
});

describe('a limit of your own', () => {
  const reply = openAIBody('The answer is 7.');

  it('takes a reply within maxResponseBytes and refuses one past it, streamed or not', async () => {
    const plain = await hostile((res) => writeBody(res, 'application/json', reply));
    const within = await openAI(plain, { maxResponseBytes: reply.length });
    expect(within).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'The answer is 7.' });
    const past = await openAI(plain, { maxResponseBytes: reply.length - 1 });
    expect(past.error).toMatch(new RegExp(`larger than ${reply.length - 1} bytes \\(maxResponseBytes\\)`));
    const streamed = await hostile((res) => writeEndlessly(res, anthropicHead, () => anthropicDelta('abc'), 4_096));
    const cut = await anthropic(streamed, { stream: true, maxResponseBytes: 1_000 });
    expect(cut.error).toMatch(/larger than 1000 bytes \(maxResponseBytes\)/);
  });

  it('counts an AI SDK reply’s text in UTF-8 bytes', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', openAIBody('é'.repeat(600))));
    expect((await aiSdk(viaOpenAI(server), { maxResponseBytes: 1_200 })).stopReason).toBe('final_answer');
    expect((await aiSdk(viaOpenAI(server), { maxResponseBytes: 1_199 })).error).toMatch(/larger than 1199 bytes/);
  });

  it('refuses a limit that is not a positive integer, at construction', () => {
    const baseURL = 'http://127.0.0.1:9/v1';
    const rule = 'maxResponseBytes must be a positive integer, got';
    expect(() => openAIModel({ model: 'm', baseURL, maxResponseBytes: 0 })).toThrow(`openAIModel: ${rule} 0`);
    const anthropicOf = (max: number) => anthropicModel({ model: 'm', maxTokens: 1, baseURL, maxResponseBytes: max });
    expect(() => anthropicOf(1.5)).toThrow(`anthropicModel: ${rule} 1.5`);
    const chat = createOpenAI({ baseURL, apiKey: 'k' }).chat('m');
    expect(() => aiSdkModel(chat, { maxResponseBytes: -1 })).toThrow(`aiSdkModel: ${rule} -1`);
  });
});

describe('a stream asked for and something else answered', () => {
  it('openAIModel and anthropicModel fail a stream with no events, naming the end marker it lacked', async () => {
    const server = await streaming('');
    expect((await openAI(server, { stream: true })).error).toMatch(/the stream ended before data: \[DONE\]/);
    expect((await anthropic(server, { stream: true })).error).toMatch(/the stream ended before message_stop/);
  });

  it('aiSdkModel fails a stream with no events instead of returning empty replies', async () => {
    const result = await aiSdk(viaOpenAI(await streaming('')), { stream: true });
    expect(result).toMatchObject({ stopReason: 'model_error', steps: 1 });
    expect(result.error).toMatch(/^AiSdkStreamError: the model's stream ended without the provider's finish reason/);
  });

  it('aiSdkModel fails a JSON body where a stream was asked for (the provider reads it as no events)', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', openAIBody('plain')));
    expect((await aiSdk(viaOpenAI(server), { stream: true })).error).toMatch(UNFINISHED);
  });

  it('aiSdkModel fails a stream cut before the provider’s end, never taking the cut text as an answer', async () => {
    const openAICut = await streaming(openAIChunk('The answer is'));
    expect((await aiSdk(viaOpenAI(openAICut), { stream: true })).error).toMatch(UNFINISHED);
    const anthropicCut = await streaming(anthropicHead + anthropicDelta('The answer is'));
    expect((await aiSdk(viaAnthropic(anthropicCut), { stream: true })).error).toMatch(UNFINISHED);
  });
});
