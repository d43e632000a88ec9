/**
 * Keeps the fake servers honest with clients nobody here wrote: the official `openai` and
 * `@anthropic-ai/sdk` packages, pointed at the same fakes, must accept the request bodies our
 * adapters build and parse every scripted response — replies, tool calls, streams, errors — to
 * the same content, finish reason and usage our adapters produce.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicModel } from '../../../src/adapters/anthropic.ts';
import { anthropicRequestBody } from '../../../src/adapters/anthropic-wire.ts';
import { anthropicFinishReason, anthropicUsage } from '../../../src/adapters/anthropic-wire.ts';
import { openAIModel } from '../../../src/adapters/openai.ts';
import { openAIRequestBody } from '../../../src/adapters/openai-wire.ts';
import { openAIFinishReason, openAIUsage } from '../../../src/adapters/openai-wire.ts';
import { parseArguments } from '../../../src/adapters/tool-interpreter.ts';
import type { ModelReply } from '../../../src/core/index.ts';
import { startAnthropicFake } from './serve.ts';
import type { AnthropicFake, AnthropicTurn } from './anthropic-server.ts';
import { modelCall, rejection, ROUND_TRIP } from './helpers.ts';
import { startOpenAIFake } from './serve.ts';
import type { OpenAIFake, OpenAITurn } from './openai-server.ts';

let oai: OpenAIFake;
let ant: AnthropicFake;
beforeAll(async () => {
  [oai, ant] = await Promise.all([startOpenAIFake(), startAnthropicFake()]);
});
afterAll(async () => {
  await Promise.all([oai.close(), ant.close()]);
});

const call = modelCall({ messages: ROUND_TRIP });

/** What both clients must agree on. */
type Seen = {
  readonly callId: string | null;
  readonly text: string;
  readonly reasoning: string | null;
  readonly toolCalls: ModelReply['toolCalls'];
};
const seen = (r: ModelReply): Seen => ({
  callId: r.callId,
  text: r.text,
  reasoning: r.reasoning,
  toolCalls: r.toolCalls ?? [],
});

function fromOpenAIMessage(id: string, message: OpenAI.Chat.Completions.ChatCompletionMessage): Seen {
  const extra = message as unknown as Record<string, unknown>;
  const reasoning = typeof extra['reasoning_content'] === 'string' ? extra['reasoning_content'] : null;
  const toolCalls = (message.tool_calls ?? []).flatMap((c) =>
    c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: parseArguments(c.function.arguments) }] : [],
  );
  return { callId: id, text: message.content ?? message.refusal ?? '', reasoning, toolCalls };
}

function fromAnthropicMessage(message: Anthropic.Messages.Message): Seen {
  const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const thinking = message.content.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : [])).join('\n');
  const toolCalls = message.content.flatMap((b) =>
    b.type === 'tool_use' ? [{ id: b.id, name: b.name, arguments: b.input as never }] : [],
  );
  return { callId: message.id, text, reasoning: thinking === '' ? null : thinking, toolCalls };
}

const OPENAI_TURNS: [string, OpenAITurn][] = [
  ['text with reasoning', { kind: 'reply', id: 'chatcmpl-1', text: 'It is 3.', reasoning: 'easy' }],
  [
    'a tool call',
    {
      kind: 'reply',
      id: 'chatcmpl-2',
      text: 'Adding.',
      toolCalls: [{ id: 'call_a', name: 'add', arguments: '{"a":1,"b":2}' }],
    },
  ],
  ['several choices', { kind: 'reply', id: 'chatcmpl-3', text: 'first', extraChoices: ['second'] }],
  ['a truncated reply', { kind: 'reply', id: 'chatcmpl-4', text: 'The answ', finishReason: 'length' }],
  ['a refusal', { kind: 'reply', id: 'chatcmpl-5', text: null, refusal: 'No.' }],
];

describe('the official openai SDK against the fake', () => {
  const client = () => new OpenAI({ apiKey: 'sk-test', baseURL: oai.baseURL, maxRetries: 0 });
  const ours = (stream: boolean) => openAIModel({ model: 'gpt-test', apiKey: 'sk-test', baseURL: oai.baseURL, stream });

  it.each(OPENAI_TURNS)('parses %s to what our adapter returns', async (_name, turn) => {
    oai.turns.push(turn, turn);
    const body = openAIRequestBody(call, { model: 'gpt-test' });
    const sdk = await client().chat.completions.create({ ...body, stream: false });
    const mine = await ours(false).call(call);
    expect({ ...oai.requests.at(-2)!.body, stream: undefined }).toEqual(oai.requests.at(-1)!.body);
    expect(seen(mine)).toEqual(fromOpenAIMessage(sdk.id, sdk.choices[0]!.message));
    expect([mine.finishReason, mine.usage]).toEqual([
      openAIFinishReason(sdk.choices[0]!.finish_reason),
      openAIUsage(sdk.usage),
    ]);
  });

  it.each(OPENAI_TURNS.slice(0, 2))('accumulates the stream of %s to what our adapter returns', async (_name, turn) => {
    oai.turns.push(turn, turn);
    const sdkStream = client().chat.completions.stream({
      ...openAIRequestBody(call, { model: 'gpt-test', stream: true }),
      stream: true,
    });
    let usage: unknown = null;
    sdkStream.on('chunk', (chunk) => {
      if (chunk.usage) usage = chunk.usage;
    });
    const final = await sdkStream.finalChatCompletion();
    const mine = await ours(true).call(call);
    expect(usage).not.toBeNull();
    expect([mine.finishReason, mine.usage]).toEqual([
      openAIFinishReason(final.choices[0]!.finish_reason),
      openAIUsage(usage),
    ]);
    const sdkSeen = fromOpenAIMessage(final.id, final.choices[0]!.message);
    // The SDK's stream helper does not accumulate the non-standard reasoning_content.
    expect({ ...seen(mine), reasoning: null }).toEqual({ ...sdkSeen, reasoning: null });
  });

  it('sees the same status, error type and request id on an error', async () => {
    const turn: OpenAITurn = {
      kind: 'error',
      status: 404,
      type: 'invalid_request_error',
      message: 'The model does not exist',
      code: 'model_not_found',
    };
    oai.turns.push(turn, turn);
    const sdkErr = await rejection(client().chat.completions.create(openAIRequestBody(call, { model: 'gpt-test' })));
    const mine = await rejection(ours(false).call(call));
    expect(sdkErr).toBeInstanceOf(OpenAI.APIError);
    const e = sdkErr as InstanceType<typeof OpenAI.APIError>;
    expect(mine).toMatchObject({ status: e.status, errorType: e.type });
    expect(e.requestID).toMatch(/^req_\d+$/);
    expect((mine as { requestId: string }).requestId).toMatch(/^req_\d+$/);
  });

  it('fails on an error chunk inside a stream, as our adapter does', async () => {
    const turn: OpenAITurn = { kind: 'stream_error', text: 'part', message: 'overloaded', type: 'server_error' };
    oai.turns.push(turn, turn);
    const stream = client().chat.completions.stream({
      ...openAIRequestBody(call, { model: 'gpt-test' }),
      stream: true,
    });
    expect(await rejection(stream.finalChatCompletion())).toBeInstanceOf(OpenAI.APIError);
    expect(await rejection(ours(true).call(call))).toMatchObject({ kind: 'stream', errorType: 'server_error' });
  });

  it('is refused by the fake when it breaks the API rules (a tool message answering nothing)', async () => {
    oai.turns.push({ kind: 'reply', text: 'never' });
    const e = await rejection(
      client().chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }],
      }),
    );
    expect(e).toMatchObject({ status: 400 });
    oai.turns.length = 0;
  });
});

const ANTHROPIC_TURNS: [string, AnthropicTurn][] = [
  ['text', { kind: 'reply', id: 'msg_1', content: [{ type: 'text', text: 'It is 3.' }] }],
  [
    'thinking and a tool call',
    {
      kind: 'reply',
      id: 'msg_2',
      content: [
        { type: 'thinking', thinking: 'Add them.', signature: 'sig' },
        { type: 'text', text: 'Adding.' },
        { type: 'tool_use', id: 'toolu_a', name: 'add', input: { a: 1, b: 2 } },
      ],
    },
  ],
  [
    'a reply cut off by max_tokens',
    { kind: 'reply', id: 'msg_3', content: [{ type: 'text', text: 'The answ' }], stopReason: 'max_tokens' },
  ],
  [
    'redacted thinking, cache reads and writes, and thinking tokens',
    {
      kind: 'reply',
      id: 'msg_4',
      content: [
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' },
        { type: 'text', text: 'Done.' },
      ],
      usage: {
        inputTokens: 20,
        outputTokens: 44,
        cacheCreationInputTokens: 100,
        cacheReadInputTokens: 900,
        thinkingTokens: 30,
      },
    },
  ],
];

describe('the official @anthropic-ai/sdk against the fake', () => {
  const client = () =>
    new Anthropic({ apiKey: 'sk-ant-test', baseURL: ant.baseURL.replace(/\/v1$/, ''), maxRetries: 0 });
  const ours = (stream: boolean) =>
    anthropicModel({ model: 'claude-test', apiKey: 'sk-ant-test', baseURL: ant.baseURL, maxTokens: 100, stream });
  const body = () => anthropicRequestBody(call, { model: 'claude-test', maxTokens: 100 });

  it.each(ANTHROPIC_TURNS)('parses %s to what our adapter returns', async (_name, turn) => {
    ant.turns.push(turn, turn);
    const sdk = await client().messages.create({ ...body(), stream: false });
    const mine = await ours(false).call(call);
    expect({ ...ant.requests.at(-2)!.body, stream: undefined }).toEqual(ant.requests.at(-1)!.body);
    expect(seen(mine)).toEqual(fromAnthropicMessage(sdk));
    expect([mine.finishReason, mine.usage]).toEqual([
      anthropicFinishReason(sdk.stop_reason),
      anthropicUsage(sdk.usage),
    ]);
  });

  it.each(ANTHROPIC_TURNS)('accumulates the stream of %s to what our adapter returns', async (_name, turn) => {
    ant.turns.push(turn, turn);
    const final = await client().messages.stream(body()).finalMessage();
    const mine = await ours(true).call(call);
    expect(seen(mine)).toEqual(fromAnthropicMessage(final));
    // The SDK's own accumulation of message_start and message_delta gives the same usage.
    expect([mine.finishReason, mine.usage]).toEqual([
      anthropicFinishReason(final.stop_reason),
      anthropicUsage(final.usage),
    ]);
    const redacted = final.content.find((b) => b.type === 'redacted_thinking');
    if (redacted) expect(mine.content).toContainEqual({ type: 'opaque', provider: 'anthropic', data: { ...redacted } });
    const signature = final.content.find((b) => b.type === 'thinking');
    if (signature)
      expect(mine.content).toContainEqual({
        type: 'reasoning',
        text: signature.thinking,
        signature: signature.signature,
      });
  });

  it('sees the same status, error type and request id on an error', async () => {
    const turn: AnthropicTurn = { kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' };
    ant.turns.push(turn, turn);
    const sdkErr = await rejection(client().messages.create(body()));
    const mine = await rejection(ours(false).call(call));
    expect(sdkErr).toBeInstanceOf(Anthropic.APIError);
    const e = sdkErr as InstanceType<typeof Anthropic.APIError>;
    expect(mine).toMatchObject({ status: e.status, errorType: e.type });
    expect(e.requestID).toMatch(/^req_ant_/);
    expect((mine as { requestId: string }).requestId).toMatch(/^req_ant_/);
  });

  it('fails on an error event inside a stream, as our adapter does', async () => {
    const turn: AnthropicTurn = { kind: 'stream_error', text: 'part', type: 'overloaded_error', message: 'Overloaded' };
    ant.turns.push(turn, turn);
    expect(await rejection(client().messages.stream(body()).finalMessage())).toBeInstanceOf(Error);
    expect(await rejection(ours(true).call(call))).toMatchObject({ kind: 'stream', errorType: 'overloaded_error' });
  });

  it('is refused by the fake when it breaks the API rules (a tool_use left unanswered)', async () => {
    ant.turns.push({ kind: 'reply', content: [{ type: 'text', text: 'never' }] });
    const e = await rejection(
      client().messages.create({
        model: 'claude-test',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_x', name: 'add', input: {} }] },
          { role: 'user', content: 'no result' },
        ],
      }),
    );
    expect(e).toMatchObject({ status: 400 });
    ant.turns.length = 0;
  });
});
