import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isModelCallError, ModelCallError, openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import { isPolyLoopError, ToolRegistry } from '../../../src/core/index.ts';
import { ADD_TOOL, modelCall, rejection, ROUND_TRIP, txt } from './helpers.ts';
import { startOpenAIFake } from './serve.ts';
import type { OpenAIFake } from './openai-server.ts';

let fake: OpenAIFake;
beforeAll(async () => {
  fake = await startOpenAIFake();
});
afterAll(() => fake.close());

const model = (over: Partial<Parameters<typeof openAIModel>[0]> = {}) =>
  openAIModel({ model: 'gpt-test', apiKey: 'sk-secret', baseURL: fake.baseURL, ...over });
const lastBody = () => fake.requests.at(-1)!.body;

describe('openAIModel request', () => {
  it('sends system, assistant tool calls and tool results in Chat Completions shape', async () => {
    fake.turns.push({ kind: 'reply', text: '7' });
    await model().call(modelCall({ messages: [...ROUND_TRIP, txt('user', 'Now add 4.')] }));
    expect(lastBody()).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You add numbers.' },
        { role: 'system', content: 'Skills: be brief.' },
        { role: 'user', content: 'What is 1+2, then +4?' },
        {
          role: 'assistant',
          content: 'Adding.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Observation:\n3' },
        { role: 'user', content: 'Now add 4.' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'add', description: ADD_TOOL.description, parameters: ADD_TOOL.parameters },
        },
      ],
      parallel_tool_calls: false,
    });
  });

  it('puts tool results before the remaining text of the same user message', async () => {
    fake.turns.push({ kind: 'reply', text: 'ok' });
    const msgs = [
      ...ROUND_TRIP.slice(0, 4),
      {
        role: 'user' as const,
        content: [
          { type: 'tool_result' as const, toolCallId: 'call_1', text: '3' },
          { type: 'text' as const, text: 'also this' },
        ],
      },
    ];
    await model().call(modelCall({ messages: msgs }));
    expect((lastBody()['messages'] as unknown[]).slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: '3' },
      { role: 'user', content: 'also this' },
    ]);
  });

  it('leaves parallel_tool_calls out when asked to, for servers that refuse it', async () => {
    fake.turns.push({ kind: 'reply', text: 'hi' });
    const m = model({ parallelToolCalls: 'omit' });
    await m.call(modelCall());
    expect(lastBody()).toHaveProperty('tools');
    expect(lastBody()).not.toHaveProperty('parallel_tool_calls');
    expect(m.params['parallelToolCalls']).toBe('omit');
  });

  it('omits tools and parallel_tool_calls when the registry is empty', async () => {
    fake.turns.push({ kind: 'reply', text: 'hi' });
    await model().call(modelCall({ tools: [] }));
    expect(lastBody()).not.toHaveProperty('tools');
    expect(lastBody()).not.toHaveProperty('parallel_tool_calls');
  });

  it('sends the API key as a bearer token and reports model and endpoint, never the key', async () => {
    fake.turns.push({ kind: 'reply', text: 'hi' });
    const m = model({ headers: { 'x-extra': 'yes' } });
    await m.call(modelCall());
    const headers = fake.requests.at(-1)!.headers;
    expect(headers['authorization']).toBe('Bearer sk-secret');
    expect(headers['x-extra']).toBe('yes');
    expect(m.params).toEqual({
      provider: 'openai',
      model: 'gpt-test',
      endpoint: `${fake.baseURL}/chat/completions`,
      stream: false,
      binding: 'metadata',
      parallelToolCalls: false,
      body: null,
    });
    expect(JSON.stringify(m.params)).not.toContain('sk-secret');
  });

  it('passes the model binding as metadata, not into the prompt, and extra body fields through', async () => {
    fake.turns.push({ kind: 'reply', text: 'hi' });
    const m = model({ body: { store: true, temperature: 0 } });
    await m.call(modelCall({ binding: { tenant: 'acme' } }));
    expect(lastBody()['metadata']).toEqual({ tenant: 'acme' });
    expect(lastBody()['temperature']).toBe(0);
    expect(JSON.stringify(lastBody()['messages'])).not.toContain('acme');
    expect(m.params['body']).toBe('{"store":true,"temperature":0}');
  });

  it('refuses extra body fields the adapter writes itself, at construction', () => {
    expect(() => model({ body: { stream: true } })).toThrow(/openAIModel: body.stream is written by the adapter/);
    expect(() => model({ body: { tools: [], model: 'x' } })).toThrow(/body.tools, body.model/);
  });

  it('sends no metadata when binding is "none"', async () => {
    fake.turns.push({ kind: 'reply', text: 'hi' });
    await model({ binding: 'none' }).call(modelCall({ binding: { tenant: 'acme' } }));
    expect(lastBody()).not.toHaveProperty('metadata');
  });
});

describe('openAIModel reply', () => {
  it('returns text, reasoning and the response id as callId', async () => {
    fake.turns.push({ kind: 'reply', id: 'chatcmpl-abc', text: 'It is 3.', reasoning: 'simple sum' });
    const reply = await model().call(modelCall());
    expect(reply).toEqual({
      callId: 'chatcmpl-abc',
      text: 'It is 3.',
      reasoning: 'simple sum',
      toolCalls: [],
      content: [
        { type: 'reasoning', text: 'simple sum' },
        { type: 'text', text: 'It is 3.' },
      ],
      finishReason: 'stop',
      usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0, reasoningTokens: 0 },
      providerMetadata: { openai: { finishReason: 'stop', systemFingerprint: 'fp_fake', serviceTier: 'default' } },
    });
  });

  it('returns a native tool call with parsed arguments', async () => {
    fake.turns.push({
      kind: 'reply',
      id: 'chatcmpl-t',
      text: null,
      toolCalls: [{ id: 'call_9', name: 'add', arguments: '{"a":1,"b":2}' }],
    });
    const reply = await model().call(modelCall());
    expect(reply.toolCalls).toEqual([{ id: 'call_9', name: 'add', arguments: { a: 1, b: 2 } }]);
    expect(reply.content).toEqual([{ type: 'tool_call', id: 'call_9', name: 'add', arguments: { a: 1, b: 2 } }]);
    expect(reply.text).toBe('');
  });

  it('gives tool calls without an id (some local servers) a deterministic one, streamed or not', async () => {
    const turn = {
      kind: 'reply',
      text: null,
      toolCalls: [{ id: '', name: 'add', arguments: '{"a":1,"b":2}' }],
    } as const;
    fake.turns.push(turn, turn);
    expect((await model().call(modelCall())).toolCalls).toEqual([
      { id: 'call_0', name: 'add', arguments: { a: 1, b: 2 } },
    ]);
    expect((await model({ stream: true }).call(modelCall())).toolCalls).toEqual([
      { id: 'call_0', name: 'add', arguments: { a: 1, b: 2 } },
    ]);
  });

  it('takes the first choice when the server returns several', async () => {
    fake.turns.push({ kind: 'reply', text: 'first', extraChoices: ['second', 'third'] });
    expect((await model().call(modelCall())).text).toBe('first');
  });

  it('keeps truncated tool arguments raw (finish_reason length) and the interpreter refuses the cut-off call', async () => {
    fake.turns.push({
      kind: 'reply',
      text: null,
      toolCalls: [{ id: 'call_t', name: 'add', arguments: '{"a":1,"b' }],
      finishReason: 'length',
    });
    const reply = await model().call(modelCall());
    expect(reply.toolCalls).toEqual([{ id: 'call_t', name: 'add', arguments: '{"a":1,"b' }]);
    const decision = openAIToolInterpreter().interpret(reply, { tools: ToolRegistry.of([{ ...ADD_TOOL }]) });
    expect(decision.kind).toBe('invalid');
    expect(reply.finishReason).toBe('length');
    expect(decision.kind === 'invalid' && decision.explanation).toContain('cut off at the output token limit');
  });

  it('returns a refusal as the reply text', async () => {
    fake.turns.push({ kind: 'reply', text: null, refusal: 'I cannot help with that.' });
    expect((await model().call(modelCall())).text).toBe('I cannot help with that.');
  });
});

describe('openAIModel errors', () => {
  it('turns an HTTP error into a ModelCallError with status, error type and request id', async () => {
    fake.turns.push({
      kind: 'error',
      status: 401,
      type: 'invalid_request_error',
      message: 'Incorrect API key provided.',
      code: 'invalid_api_key',
    });
    const e = await rejection(model().call(modelCall()));
    expect(e).toBeInstanceOf(ModelCallError);
    expect(e).toMatchObject({ kind: 'http', status: 401, errorType: 'invalid_request_error', provider: 'openai' });
    expect((e as ModelCallError).requestId).toMatch(/^req_\d+$/);
    expect((e as Error).message).toContain('Incorrect API key provided.');
    expect(isModelCallError(e)).toBe(true);
    expect(isPolyLoopError(e, 'model_call')).toBe(true);
  });

  it('turns a request the API refuses (metadata without store) into a 400 error naming the rule', async () => {
    const e = await rejection(model().call(modelCall({ binding: { tenant: 'acme' } })));
    expect(e).toMatchObject({ status: 400, errorType: 'invalid_request_error' });
    expect((e as Error).message).toContain("'store' is enabled");
  });

  it('turns a 500 and a 429 into errors without retrying', async () => {
    const before = fake.requests.length;
    fake.turns.push(
      { kind: 'error', status: 500, type: 'server_error', message: 'boom' },
      { kind: 'error', status: 429, type: 'rate_limit_exceeded', message: 'slow down' },
    );
    expect(await rejection(model().call(modelCall()))).toMatchObject({ status: 500, errorType: 'server_error' });
    expect(await rejection(model().call(modelCall()))).toMatchObject({ status: 429, errorType: 'rate_limit_exceeded' });
    expect(fake.requests.length - before).toBe(2);
  });

  it('turns a body that is not JSON into a malformed_response error', async () => {
    fake.turns.push({ kind: 'raw', status: 200, body: '<html>gateway</html>', contentType: 'text/html' });
    expect(await rejection(model().call(modelCall()))).toMatchObject({ kind: 'malformed_response', status: 200 });
  });

  it('turns JSON without choices into a malformed_response error', async () => {
    fake.turns.push({ kind: 'raw', status: 200, body: '{"id":"x","object":"chat.completion","choices":[]}' });
    const e = await rejection(model().call(modelCall()));
    expect(e).toMatchObject({ kind: 'malformed_response' });
    expect((e as Error).message).toContain('no choices');
  });

  it('turns a refused connection into a network error with no status', async () => {
    const e = await rejection(openAIModel({ model: 'm', baseURL: 'http://127.0.0.1:9/v1' }).call(modelCall()));
    expect(e).toMatchObject({ kind: 'network', status: null, requestId: null });
  });

  it('rejects with the signal reason and sends nothing when already aborted', async () => {
    const before = fake.requests.length;
    const reason = new Error('too late');
    expect(await rejection(model().call(modelCall({ signal: AbortSignal.abort(reason) })))).toBe(reason);
    expect(fake.requests.length).toBe(before);
  });

  it('rejects with the signal reason when aborted mid-call', async () => {
    fake.turns.push({ kind: 'hang' });
    const ac = new AbortController();
    const reason = new Error('user cancelled');
    const p = model().call(modelCall({ signal: ac.signal }));
    setTimeout(() => ac.abort(reason), 20);
    expect(await rejection(p)).toBe(reason);
  });
});

describe('openAIModel streaming', () => {
  it('delivers text deltas and returns the same reply as without streaming', async () => {
    const turn = { kind: 'reply', id: 'chatcmpl-s', text: 'The answer is 3.', reasoning: 'add them' } as const;
    fake.turns.push(turn, turn);
    const plain = await model().call(modelCall());
    const deltas: [string, string][] = [];
    const streamed = await model({ stream: true }).call(
      modelCall({ onDelta: (d, kind) => deltas.push([kind ?? 'text', d]) }),
    );
    expect(lastBody()['stream']).toBe(true);
    expect(streamed).toEqual(plain);
    const text = deltas.filter(([k]) => k === 'text').map(([, d]) => d);
    expect(text.length).toBeGreaterThan(1);
    expect(text.join('')).toBe('The answer is 3.');
  });

  it('delivers reasoning_content deltas as reasoning, in order and before the text, and the reply is unchanged', async () => {
    const turn = { kind: 'reply', id: 'chatcmpl-r', text: 'Three.', reasoning: 'one plus two is three' } as const;
    fake.turns.push(turn, turn);
    const plain = await model().call(modelCall());
    const deltas: [string, string][] = [];
    const streamed = await model({ stream: true }).call(
      modelCall({ onDelta: (d, kind) => deltas.push([kind ?? 'text', d]) }),
    );
    expect(streamed).toEqual(plain);
    const kinds = deltas.map(([k]) => k);
    expect(kinds.lastIndexOf('reasoning')).toBeLessThan(kinds.indexOf('text'));
    expect(kinds.filter((k) => k === 'reasoning').length).toBeGreaterThan(1);
    expect(
      deltas
        .filter(([k]) => k === 'reasoning')
        .map(([, d]) => d)
        .join(''),
    ).toBe(streamed.reasoning);
    expect(
      deltas
        .filter(([k]) => k === 'text')
        .map(([, d]) => d)
        .join(''),
    ).toBe('Three.');
  });

  it('reassembles a streamed tool call from its argument fragments', async () => {
    const turn = {
      kind: 'reply',
      id: 'chatcmpl-st',
      text: 'Let me add.',
      toolCalls: [{ id: 'call_s', name: 'add', arguments: '{"a":10,"b":32}' }],
    } as const;
    fake.turns.push(turn, turn);
    const plain = await model().call(modelCall());
    const streamed = await model({ stream: true }).call(modelCall());
    expect(streamed.toolCalls).toEqual([{ id: 'call_s', name: 'add', arguments: { a: 10, b: 32 } }]);
    expect(streamed).toEqual(plain);
  });

  it('rejects with the signal reason when aborted mid-stream, after deltas arrived', async () => {
    fake.turns.push({ kind: 'stream_stall', text: 'Partial answer' });
    const ac = new AbortController();
    const reason = new Error('user cancelled mid-stream');
    const deltas: string[] = [];
    const p = model({ stream: true }).call(
      modelCall({
        signal: ac.signal,
        onDelta: (d) => {
          deltas.push(d);
          if (deltas.join('') === 'Partial answer') ac.abort(reason);
        },
      }),
    );
    expect(await rejection(p)).toBe(reason);
    expect(deltas.join('')).toBe('Partial answer');
  });

  it('reads a JSON body when a server ignores stream: true', async () => {
    const body = {
      id: 'chatcmpl-j',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'plain' }, finish_reason: 'stop' }],
    };
    fake.turns.push({ kind: 'raw', status: 200, body: JSON.stringify(body) });
    expect(await model({ stream: true }).call(modelCall())).toMatchObject({ callId: 'chatcmpl-j', text: 'plain' });
  });

  it('fails when the stream closes before a finish_reason or [DONE], instead of returning a cut reply', async () => {
    fake.turns.push({ kind: 'stream_cut', text: 'The answer is 42, unless' });
    const e = await rejection(model({ stream: true }).call(modelCall()));
    expect(e).toMatchObject({ kind: 'network', status: 200 });
    expect((e as Error).message).toContain('ended before data: [DONE]');
  });

  it('turns an error chunk inside the stream into a stream error', async () => {
    fake.turns.push({
      kind: 'stream_error',
      text: 'partial',
      message: 'The server had an error',
      type: 'server_error',
    });
    const e = await rejection(model({ stream: true }).call(modelCall()));
    expect(e).toMatchObject({ kind: 'stream', errorType: 'server_error' });
  });
});
