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
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { DecisionInterpreter, ModelCaller, RunResult } from '../../../src/core/index.ts';
import { silentSink } from '../../../src/core/index.ts';
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

let runs = 0;
async function runOnce(model: ModelCaller, interpreter: DecisionInterpreter): Promise<RunResult> {
  const agent = defineAgent({ model, interpreter, store: new InMemoryStore(), events: silentSink(), syntheticObservations: SYNTHETIC });
  return run(agent, request(`limits-${++runs}`));
}

const KIB16 = 'x'.repeat(16 * 1024);
const MIB40 = 'y'.repeat(40 * 1024 * 1024);
const DEFAULT_LIMIT = /larger than 33554432 bytes \(maxResponseBytes\)/;

const openAIChunk = (text: string): string => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
const openAIBody = (text: string): string =>
  JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
const anthropicEvent = (data: Record<string, unknown>): string => `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
const anthropicHead =
  anthropicEvent({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } }) +
  anthropicEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
const anthropicDelta = (text: string): string => anthropicEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
const anthropicBody = (text: string): string =>
  JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } });

const openAI = (server: Hostile, over: Partial<Parameters<typeof openAIModel>[0]> = {}) => openAIModel({ model: 'gpt-test', baseURL: server.baseURL, ...over });
const anthropic = (server: Hostile, over: Partial<Parameters<typeof anthropicModel>[0]> = {}) => anthropicModel({ model: 'claude-test', maxTokens: 100, baseURL: server.baseURL, ...over });
const viaAiSdkOpenAI = (server: Hostile) => createOpenAI({ baseURL: server.baseURL, apiKey: 'k' }).chat('gpt-test');
const viaAiSdkAnthropic = (server: Hostile) => createAnthropic({ baseURL: server.baseURL, apiKey: 'k' })('claude-test');

describe('a response without end', () => {
  it('openAIModel cancels an endless stream past 32 MiB: model_error naming the limit, and the server sees the connection close', async () => {
    const server = await hostile((res) => writeEndlessly(res, '', () => openAIChunk(KIB16)));
    const result = await runOnce(openAI(server, { stream: true }), openAIToolInterpreter());
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(DEFAULT_LIMIT);
    expect(await server.closedEarly()).toBe(true);
  });

  it('anthropicModel cancels an endless stream past 32 MiB, and the server sees the connection close', async () => {
    const server = await hostile((res) => writeEndlessly(res, anthropicHead, () => anthropicDelta(KIB16)));
    const result = await runOnce(anthropic(server, { stream: true }), anthropicToolInterpreter());
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(DEFAULT_LIMIT);
    expect(await server.closedEarly()).toBe(true);
  });

  it('aiSdkModel cancels an endless stream past 32 MiB of text, and the provider’s connection closes', async () => {
    const server = await hostile((res) => writeEndlessly(res, '', () => openAIChunk(KIB16)));
    const result = await runOnce(aiSdkModel(viaAiSdkOpenAI(server), { stream: true }), aiSdkToolInterpreter());
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(/AiSdkResponseTooLargeError: .*larger than 33554432 bytes of text, reasoning and tool input \(maxResponseBytes\)/);
    expect(await server.closedEarly()).toBe(true);
  });
});

describe('a body of 40 MiB', () => {
  it('openAIModel stops reading it: model_error naming the limit', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', openAIBody(MIB40)));
    const result = await runOnce(openAI(server), openAIToolInterpreter());
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(DEFAULT_LIMIT);
    expect(await server.closedEarly()).toBe(true);
  });

  it('anthropicModel stops reading it: model_error naming the limit', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', anthropicBody(MIB40)));
    const result = await runOnce(anthropic(server), anthropicToolInterpreter());
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(DEFAULT_LIMIT);
  });

  it('aiSdkModel refuses the reply the provider read whole (generate has no bytes to stop)', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', openAIBody(MIB40)));
    const result = await runOnce(aiSdkModel(viaAiSdkOpenAI(server)), aiSdkToolInterpreter());
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(/larger than 33554432 bytes of text, reasoning and tool input/);
  });
});

describe('a limit of your own', () => {
  const reply = openAIBody('The answer is 7.');

  it('takes a reply within maxResponseBytes and refuses one past it, streamed or not', async () => {
    const plain = await hostile((res) => writeBody(res, 'application/json', reply));
    const within = await runOnce(openAI(plain, { maxResponseBytes: reply.length }), openAIToolInterpreter());
    expect(within).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'The answer is 7.' });
    const past = await runOnce(openAI(plain, { maxResponseBytes: reply.length - 1 }), openAIToolInterpreter());
    expect(past.error).toMatch(new RegExp(`larger than ${reply.length - 1} bytes \\(maxResponseBytes\\)`));
    const streamed = await hostile((res) => writeEndlessly(res, anthropicHead, () => anthropicDelta('abc'), 4_096));
    const cut = await runOnce(anthropic(streamed, { stream: true, maxResponseBytes: 1_000 }), anthropicToolInterpreter());
    expect(cut.error).toMatch(/larger than 1000 bytes \(maxResponseBytes\)/);
  });

  it('counts an AI SDK reply’s text in UTF-8 bytes', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', openAIBody('é'.repeat(600))));
    expect((await runOnce(aiSdkModel(viaAiSdkOpenAI(server), { maxResponseBytes: 1_200 }), aiSdkToolInterpreter())).stopReason).toBe('final_answer');
    expect((await runOnce(aiSdkModel(viaAiSdkOpenAI(server), { maxResponseBytes: 1_199 }), aiSdkToolInterpreter())).error).toMatch(/larger than 1199 bytes/);
  });

  it('refuses a limit that is not a positive integer, at construction', () => {
    const baseURL = 'http://127.0.0.1:9/v1';
    expect(() => openAIModel({ model: 'm', baseURL, maxResponseBytes: 0 })).toThrow('openAIModel: maxResponseBytes must be a positive integer, got 0');
    expect(() => anthropicModel({ model: 'm', maxTokens: 1, baseURL, maxResponseBytes: 1.5 })).toThrow('anthropicModel: maxResponseBytes must be a positive integer, got 1.5');
    expect(() => aiSdkModel(createOpenAI({ baseURL, apiKey: 'k' }).chat('m'), { maxResponseBytes: -1 })).toThrow('aiSdkModel: maxResponseBytes must be a positive integer, got -1');
  });
});

describe('a stream asked for and something else answered', () => {
  const emptyStream = (res: ServerResponse): void => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end();

  it('openAIModel and anthropicModel fail a stream with no events, naming the end marker it lacked', async () => {
    const server = await hostile(emptyStream);
    expect((await runOnce(openAI(server, { stream: true }), openAIToolInterpreter())).error).toMatch(/the stream ended before data: \[DONE\]/);
    expect((await runOnce(anthropic(server, { stream: true }), anthropicToolInterpreter())).error).toMatch(/the stream ended before message_stop/);
  });

  it('aiSdkModel fails a stream with no events instead of returning empty replies', async () => {
    const result = await runOnce(aiSdkModel(viaAiSdkOpenAI(await hostile(emptyStream)), { stream: true }), aiSdkToolInterpreter());
    expect(result).toMatchObject({ stopReason: 'model_error', steps: 1 });
    expect(result.error).toMatch(/AiSdkStreamError: the model's stream ended without the provider's finish reason/);
  });

  it('aiSdkModel fails a JSON body where a stream was asked for (the provider reads it as no events)', async () => {
    const server = await hostile((res) => writeBody(res, 'application/json', openAIBody('plain')));
    expect((await runOnce(aiSdkModel(viaAiSdkOpenAI(server), { stream: true }), aiSdkToolInterpreter())).error).toMatch(/ended without the provider's finish reason/);
  });

  it('aiSdkModel fails a stream cut before the provider’s end instead of taking the cut text as the answer', async () => {
    const openAICut = await hostile((res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(openAIChunk('The answer is')));
    expect((await runOnce(aiSdkModel(viaAiSdkOpenAI(openAICut), { stream: true }), aiSdkToolInterpreter())).stopReason).toBe('model_error');
    const anthropicCut = await hostile((res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(anthropicHead + anthropicDelta('The answer is')));
    expect((await runOnce(aiSdkModel(viaAiSdkAnthropic(anthropicCut), { stream: true }), aiSdkToolInterpreter())).error).toMatch(/ended without the provider's finish reason/);
  });
});
