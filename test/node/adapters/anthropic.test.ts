import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicModel, anthropicToolInterpreter, ModelCallError } from '../../../src/adapters/anthropic.ts';
import { ToolRegistry } from '../../../src/core/index.ts';
import { startAnthropicFake } from './serve.ts';
import type { AnthropicFake, AnthropicTurn } from './anthropic-server.ts';
import { ADD_TOOL, modelCall, rejection, ROUND_TRIP, txt } from './helpers.ts';

let fake: AnthropicFake;
beforeAll(async () => {
  fake = await startAnthropicFake();
});
afterAll(() => fake.close());

const model = (over: Partial<Parameters<typeof anthropicModel>[0]> = {}) =>
  anthropicModel({ model: 'claude-test', apiKey: 'sk-ant-secret', baseURL: fake.baseURL, maxTokens: 256, ...over });
const lastBody = () => fake.requests.at(-1)!.body;

describe('anthropicModel request', () => {
  it('joins system messages into system and sends tool_use, tool_result and signed thinking', async () => {
    fake.turns.push({ kind: 'reply', content: [{ type: 'text', text: '7' }] });
    await model().call(modelCall({ messages: [...ROUND_TRIP, txt('user', 'Now add 4.')] }));
    expect(lastBody()).toEqual({
      model: 'claude-test',
      max_tokens: 256,
      system: [
        { type: 'text', text: 'You add numbers.' },
        { type: 'text', text: 'Skills: be brief.' },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'What is 1+2, then +4?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should add.', signature: 'sig-1' },
            { type: 'text', text: 'Adding.' },
            { type: 'tool_use', id: 'call_1', name: 'add', input: { a: 1, b: 2 } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: 'Observation:\n3' },
            { type: 'text', text: 'Now add 4.' },
          ],
        },
      ],
      tools: [{ name: 'add', description: ADD_TOOL.description, input_schema: ADD_TOOL.parameters }],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    });
  });

  it('drops unsigned reasoning and empty messages, which the API would refuse', async () => {
    fake.turns.push({ kind: 'reply', content: [{ type: 'text', text: 'ok' }] });
    await model().call(
      modelCall({
        tools: [],
        messages: [
          txt('user', 'hi'),
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'unsigned' },
              { type: 'text', text: '' },
            ],
          },
          txt('user', 'Your reply was empty.'),
        ],
      }),
    );
    expect(lastBody()['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'text', text: 'Your reply was empty.' },
        ],
      },
    ]);
    expect(lastBody()).not.toHaveProperty('tools');
    expect(lastBody()).not.toHaveProperty('tool_choice');
    expect(lastBody()).not.toHaveProperty('system');
  });

  it('sends the key and version headers and reports model, endpoint and max tokens, never the key', async () => {
    fake.turns.push({ kind: 'reply', content: [{ type: 'text', text: 'hi' }] });
    const m = model();
    await m.call(modelCall());
    const headers = fake.requests.at(-1)!.headers;
    expect(headers['x-api-key']).toBe('sk-ant-secret');
    expect(headers['anthropic-version']).toBe('2023-06-01');
    expect(m.params).toEqual({
      provider: 'anthropic',
      model: 'claude-test',
      endpoint: `${fake.baseURL}/messages`,
      maxTokens: 256,
      stream: false,
      binding: 'metadata',
      body: null,
    });
    expect(JSON.stringify(m.params)).not.toContain('sk-ant-secret');
  });

  it('refuses a missing model or a non-positive maxTokens at construction', () => {
    expect(() => model({ model: '' })).toThrow(/anthropicModel: model must be a non-empty string/);
    expect(() => model({ maxTokens: 0 })).toThrow(/maxTokens must be a positive integer, got 0/);
  });

  it('refuses extra body fields the adapter writes itself, at construction', () => {
    expect(() => model({ body: { tool_choice: { type: 'any' } } })).toThrow(
      /anthropicModel: body.tool_choice is written by the adapter/,
    );
    expect(model({ body: { temperature: 0.2 } }).params['body']).toBe('{"temperature":0.2}');
  });

  it('passes binding.user_id as metadata.user_id and nothing of the binding into the prompt', async () => {
    fake.turns.push({ kind: 'reply', content: [{ type: 'text', text: 'hi' }] });
    await model().call(modelCall({ binding: { user_id: 'u-42', tenant: 'acme' } }));
    expect(lastBody()['metadata']).toEqual({ user_id: 'u-42' });
    expect(JSON.stringify(lastBody()['messages'])).not.toContain('acme');
  });
});

describe('anthropicModel reply', () => {
  it('returns text, thinking with its signature, a tool call and the message id', async () => {
    fake.turns.push({
      kind: 'reply',
      id: 'msg_abc',
      content: [
        { type: 'thinking', thinking: 'Sum it.', signature: 'sig-xyz' },
        { type: 'text', text: 'Adding now.' },
        { type: 'tool_use', id: 'toolu_1', name: 'add', input: { a: 1, b: 2 } },
      ],
    });
    const reply = await model().call(modelCall());
    expect(reply).toEqual({
      callId: 'msg_abc',
      text: 'Adding now.',
      reasoning: 'Sum it.',
      toolCalls: [{ id: 'toolu_1', name: 'add', arguments: { a: 1, b: 2 } }],
      content: [
        { type: 'reasoning', text: 'Sum it.', signature: 'sig-xyz' },
        { type: 'text', text: 'Adding now.' },
        { type: 'tool_call', id: 'toolu_1', name: 'add', arguments: { a: 1, b: 2 } },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 12, outputTokens: 6, cachedInputTokens: 0 },
      providerMetadata: { anthropic: { stopReason: 'tool_use', cacheCreationInputTokens: 0, serviceTier: 'standard' } },
    });
    const decision = anthropicToolInterpreter().interpret(reply, { tools: ToolRegistry.of([{ ...ADD_TOOL }]) });
    expect(decision).toMatchObject({
      kind: 'action',
      action: { kind: 'tool_call', id: 'toolu_1', name: 'add', arguments: { a: 1, b: 2 } },
    });
  });

  it('returns a reply cut off by max_tokens as it came', async () => {
    fake.turns.push({ kind: 'reply', content: [{ type: 'text', text: 'The answer is' }], stopReason: 'max_tokens' });
    expect((await model().call(modelCall())).text).toBe('The answer is');
  });
});

describe('anthropicModel errors', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [429, 'rate_limit_error'],
    [529, 'overloaded_error'],
  ])('turns HTTP %i into a ModelCallError with type %s and the request id', async (status, type) => {
    fake.turns.push({ kind: 'error', status, type, message: `${type} happened` });
    const e = await rejection(model().call(modelCall()));
    expect(e).toBeInstanceOf(ModelCallError);
    expect(e).toMatchObject({ provider: 'anthropic', kind: 'http', status, errorType: type });
    expect((e as ModelCallError).requestId).toMatch(/^req_ant_\d+$/);
  });

  it('turns a malformed content block into a malformed_response error', async () => {
    fake.turns.push({
      kind: 'raw',
      status: 200,
      body: '{"id":"msg_x","type":"message","content":[{"type":"tool_use","input":{}}]}',
    });
    expect(await rejection(model().call(modelCall()))).toMatchObject({ kind: 'malformed_response' });
  });

  it.each([
    ['a number past the double range', '{"a":1e400,"b":2}', '{"a":Infinity,"b":2}'],
    ['nesting past what a reply may hold', `{"a":${'['.repeat(98)}${']'.repeat(98)}}`, null],
  ])(
    'refuses only the call whose input holds %s, read from a whole body, as a streamed one is refused',
    async (_label, input, shown) => {
      const content = `[{"type":"text","text":"Adding."},{"type":"tool_use","id":"toolu_9","name":"add","input":${input}}]`;
      fake.turns.push({
        kind: 'raw',
        status: 200,
        body: `{"id":"msg_big","type":"message","role":"assistant","content":${content},"stop_reason":"tool_use"}`,
      });
      const reply = await model().call(modelCall());
      expect(reply.text).toBe('Adding.');
      const args = reply.toolCalls?.[0]?.arguments;
      expect(typeof args).toBe('string');
      expect(args).toBe(shown ?? input);
      const decision = anthropicToolInterpreter().interpret(reply, { tools: ToolRegistry.of([{ ...ADD_TOOL }]) });
      expect(decision.kind).toBe('invalid');
      expect(decision.kind === 'invalid' && decision.explanation).toContain('are not a valid JSON object');
    },
  );

  it('rejects with the signal reason when aborted mid-call', async () => {
    fake.turns.push({ kind: 'hang' });
    const ac = new AbortController();
    const reason = new DOMException('stop', 'AbortError');
    const p = model().call(modelCall({ signal: ac.signal }));
    setTimeout(() => ac.abort(reason), 20);
    expect(await rejection(p)).toBe(reason);
  });
});

describe('anthropicModel streaming', () => {
  const turn: AnthropicTurn = {
    kind: 'reply',
    id: 'msg_s',
    content: [
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig-s' },
      { type: 'text', text: 'Calling add now.' },
      { type: 'tool_use', id: 'toolu_s', name: 'add', input: { a: 10, b: 32 } },
    ],
  };

  it('delivers text deltas and returns the same reply as without streaming', async () => {
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
    expect(text.join('')).toBe('Calling add now.');
  });

  it('delivers thinking deltas as reasoning, before the text, adding up to the reply reasoning across blocks', async () => {
    const thoughts: AnthropicTurn = {
      kind: 'reply',
      id: 'msg_t',
      content: [
        { type: 'thinking', thinking: 'First, the sum.', signature: 'sig-1' },
        { type: 'thinking', thinking: 'Then the check.', signature: 'sig-2' },
        { type: 'text', text: 'It is 42.' },
      ],
    };
    fake.turns.push(thoughts, thoughts);
    const plain = await model().call(modelCall());
    const deltas: [string, string][] = [];
    const streamed = await model({ stream: true }).call(
      modelCall({ onDelta: (d, kind) => deltas.push([kind ?? 'text', d]) }),
    );
    expect(streamed).toEqual(plain);
    const kinds = deltas.map(([k]) => k);
    expect(kinds.lastIndexOf('reasoning')).toBeLessThan(kinds.indexOf('text'));
    expect(
      deltas
        .filter(([k]) => k === 'reasoning')
        .map(([, d]) => d)
        .join(''),
    ).toBe(streamed.reasoning);
    expect(streamed.reasoning).toBe('First, the sum.\nThen the check.');
    expect(
      deltas
        .filter(([k]) => k === 'text')
        .map(([, d]) => d)
        .join(''),
    ).toBe('It is 42.');
  });

  it('reads a JSON body when a server ignores stream: true', async () => {
    fake.turns.push({
      kind: 'raw',
      status: 200,
      body: JSON.stringify({
        id: 'msg_j',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'plain' }],
      }),
    });
    expect(await model({ stream: true }).call(modelCall())).toMatchObject({ callId: 'msg_j', text: 'plain' });
  });

  it('fails when the stream closes before message_stop, instead of returning a cut reply', async () => {
    fake.turns.push({ kind: 'stream_cut', text: 'The answer is 42, unless' });
    const e = await rejection(model({ stream: true }).call(modelCall()));
    expect(e).toMatchObject({ kind: 'network', status: 200 });
    expect((e as Error).message).toContain('ended before message_stop');
  });

  it('turns an error event inside the stream into a stream error', async () => {
    fake.turns.push({ kind: 'stream_error', text: 'partial text', type: 'overloaded_error', message: 'Overloaded' });
    const e = await rejection(model({ stream: true }).call(modelCall()));
    expect(e).toMatchObject({ kind: 'stream', errorType: 'overloaded_error' });
  });
});
