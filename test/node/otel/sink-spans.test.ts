/**
 * otelSink on one driver: the span tree of a run (invoke_agent → chat per model call, execute_tool
 * per action), the attributes the GenAI conventions name, failures as status ERROR, and content
 * recorded only when asked for.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it, vi } from 'vitest';
import { defineAgent, run, ToolEnvironmentError } from '../../../src/core/index.ts';
import type { ModelReply, ToolSpec } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { scriptedModel } from '../../../src/testing/index.ts';
import { makeTools, nativeInterpreter, SYNTHETIC } from '../core/fixtures.ts';
import { only, parentOf, tracedAgent, tracing, treeOf } from './sink-fixtures.ts';

const reply = (text: string, n: number, finishReason: NonNullable<ModelReply['finishReason']>): ModelReply => ({
  callId: `resp-${n}`,
  text,
  reasoning: null,
  usage: { inputTokens: 100 + n, outputTokens: 10 + n },
  finishReason,
});

/** Three steps: add, note, then a final answer; each reply reports its usage and why it stopped. */
const THREE_STEPS: ModelReply[] = [
  reply('{"tool":"add","args":{"a":1,"b":2}}', 0, 'tool_calls'),
  reply('{"tool":"note","args":{"text":"three"}}', 1, 'tool_calls'),
  reply('{"final":"3"}', 2, 'stop'),
];

describe('otelSink: the spans of one driver', () => {
  it('draws a three-step run as invoke_agent over three chat spans and two execute_tool spans', async () => {
    const t = tracing();
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer }), { script: THREE_STEPS });
    const result = await run(agent, request);
    expect(result.stopReason).toBe('final_answer');
    expect(result.eventDeliveryFailures).toBe(0);
    const spans = t.spans();
    expect(treeOf(spans)).toEqual([
      'invoke_agent',
      '  chat scripted',
      '  execute_tool add',
      '  chat scripted',
      '  execute_tool note',
      '  chat scripted',
    ]);
    const root = only(spans, 'invoke_agent');
    expect(root.kind).toBe(SpanKind.INTERNAL);
    expect(root.parentSpanContext).toBeUndefined();
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    for (const s of spans) expect(s.attributes['gen_ai.conversation.id'], s.name).toBe('run-1');
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'polyloop.run.resumed': false,
      'polyloop.run.from_step': 0,
      'polyloop.run.stop_reason': 'final_answer',
      'polyloop.run.steps': 3,
      'gen_ai.usage.input_tokens': 303,
      'gen_ai.usage.output_tokens': 33,
    });
    expect(root.attributes['polyloop.run.pending_input']).toBeUndefined();
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('ends every span within its parent, also when the run pauses or is cancelled with spans open', async () => {
    const ns = (time: readonly [number, number]): bigint => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
    const within = (spans: ReturnType<ReturnType<typeof tracing>['spans']>): void => {
      for (const s of spans) {
        const parent = parentOf(spans, s);
        if (parent === null) continue;
        expect(ns(s.startTime) >= ns(parent.startTime), `${s.name} starts in ${parent.name}`).toBe(true);
        expect(ns(s.endTime) <= ns(parent.endTime), `${s.name} ends in ${parent.name}`).toBe(true);
      }
    };
    for (const captureContent of [false, true]) {
      const t = tracing();
      const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer, captureContent }), { script: THREE_STEPS });
      await run(agent, request);
      within(t.spans());
    }
    const t = tracing();
    const controller = new AbortController();
    const hang: ToolSpec = {
      name: 'hang',
      description: 'Never returns.',
      parameters: { type: 'object', properties: {} },
      replayPolicy: 'safe',
      handler: () => {
        controller.abort(new Error('enough'));
        return new Promise(() => undefined);
      },
    };
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer, captureContent: true }), {
      script: ['{"tool":"hang","args":{}}'],
      tools: [hang],
      request: { cancelGraceMs: 50 },
    });
    await expect(run(agent, request, { signal: controller.signal })).rejects.toThrow('enough');
    expect(
      t
        .spans()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['chat scripted', 'execute_tool hang', 'invoke_agent']);
    within(t.spans());
  });

  it('gives each chat span its model, step, replay policy, usage, finish reasons and response id', async () => {
    const t = tracing();
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer }), { script: THREE_STEPS });
    await run(agent, request);
    const chats = t.spans().filter((s) => s.name === 'chat scripted');
    expect(chats.map((s) => s.kind)).toEqual([SpanKind.CLIENT, SpanKind.CLIENT, SpanKind.CLIENT]);
    expect(chats.map((s) => s.attributes)).toEqual(
      [0, 1, 2].map((n) => ({
        'gen_ai.operation.name': 'chat',
        'gen_ai.conversation.id': 'run-1',
        'gen_ai.request.model': 'scripted',
        'polyloop.step.index': n,
        'polyloop.replay_policy': 'safe',
        'polyloop.replayed': false,
        'gen_ai.response.id': `resp-${n}`,
        'gen_ai.usage.input_tokens': 100 + n,
        'gen_ai.usage.output_tokens': 10 + n,
        'gen_ai.response.finish_reasons': [n === 2 ? 'stop' : 'tool_calls'],
      })),
    );
    for (const c of chats) expect(c.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('gives each execute_tool span its tool, call id, step, replay policy and status', async () => {
    const t = tracing();
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer }), { script: THREE_STEPS });
    await run(agent, request);
    const spans = t.spans();
    const add = only(spans, 'execute_tool add');
    const note = only(spans, 'execute_tool note');
    expect(add.kind).toBe(SpanKind.INTERNAL);
    expect(parentOf(spans, add)?.name).toBe('invoke_agent');
    expect(add.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.conversation.id': 'run-1',
      'gen_ai.tool.name': 'add',
      'gen_ai.tool.call.id': 's0.action',
      'polyloop.step.index': 0,
      'polyloop.replay_policy': 'safe',
      'polyloop.replayed': false,
      'polyloop.action.status': 'executed',
    });
    expect(note.attributes).toMatchObject({
      'gen_ai.tool.name': 'note',
      'gen_ai.tool.call.id': 's1.action',
      'polyloop.step.index': 1,
      'polyloop.replay_policy': 'never',
    });
  });

  it('uses the provider id of a native tool call as gen_ai.tool.call.id', async () => {
    const t = tracing();
    const native: ModelReply = {
      callId: 'resp-0',
      text: '{"tool":"add","args":{"a":1,"b":2}}',
      reasoning: null,
      toolCalls: [{ id: 'call_abc', name: 'add', arguments: { a: 1, b: 2 } }],
    };
    const base = tracedAgent(otelSink({ tracer: t.tracer }), { script: [] });
    const agent = defineAgent({
      model: scriptedModel([native, { callId: 'resp-1', text: 'done', reasoning: null }]),
      interpreter: nativeInterpreter(),
      store: base.store,
      events: base.agent.events,
      syntheticObservations: SYNTHETIC,
    });
    await run(agent, base.request);
    expect(only(t.spans(), 'execute_tool add').attributes['gen_ai.tool.call.id']).toBe('call_abc');
  });

  it('ends a failed model call with status ERROR and its error class as error.type', async () => {
    class RateLimitError extends Error {}
    const t = tracing();
    const script = (): never => {
      throw new RateLimitError('slow down');
    };
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer }), { script });
    const result = await run(agent, request);
    expect(result.stopReason).toBe('model_error');
    const spans = t.spans();
    const chat = spans.find((s) => s.name === 'chat scripted');
    expect(chat?.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(chat?.attributes['error.type']).toBe('RateLimitError');
    const root = only(spans, 'invoke_agent');
    expect(root.status.code).toBe(SpanStatusCode.ERROR);
    expect(root.attributes).toMatchObject({ 'polyloop.run.stop_reason': 'model_error', 'error.type': 'model_error' });
  });

  it('ends an action whose environment failed with status ERROR and error.type env_error', async () => {
    const t = tracing();
    const flaky: ToolSpec = {
      name: 'fetch_page',
      description: 'Fetch a page.',
      parameters: { type: 'object', properties: {} },
      replayPolicy: 'safe',
      handler: async () => {
        throw new ToolEnvironmentError('network unreachable');
      },
    };
    const script = ['{"tool":"fetch_page","args":{}}', '{"final":"gave up"}'];
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer }), { script, tools: [...makeTools(), flaky] });
    await run(agent, request);
    const tool = only(t.spans(), 'execute_tool fetch_page');
    expect(tool.status.code).toBe(SpanStatusCode.ERROR);
    expect(tool.status.message).toBeUndefined();
    expect(tool.attributes).toMatchObject({ 'error.type': 'env_error', 'polyloop.action.status': 'env_error' });
    expect(tool.attributes['gen_ai.tool.call.result']).toBeUndefined();
  });
});

describe('otelSink: content', () => {
  const CONTENT_KEYS = [
    'gen_ai.input.messages',
    'gen_ai.output.messages',
    'gen_ai.tool.call.arguments',
    'gen_ai.tool.call.result',
  ];

  it('records no prompt, reply, tool arguments or result by default, and asks for no messages', async () => {
    const t = tracing();
    const sink = otelSink({ tracer: t.tracer });
    expect(sink.withMessages).toBe(false);
    expect(sink.params).toEqual({ sink: 'otel', captureContent: false });
    const { agent, request } = tracedAgent(sink, { script: THREE_STEPS });
    await run(agent, request);
    const spans = t.spans();
    expect(spans.length).toBe(6);
    for (const s of spans)
      for (const key of CONTENT_KEYS) expect(s.attributes[key], `${s.name} ${key}`).toBeUndefined();
  });

  it('records them with captureContent: the messages given, the reply, the arguments and the observation', async () => {
    const t = tracing();
    const sink = otelSink({ tracer: t.tracer, captureContent: true });
    expect(sink.withMessages).toBe(true);
    expect(sink.params).toEqual({ sink: 'otel', captureContent: true });
    const { agent, request } = tracedAgent(sink, { script: THREE_STEPS });
    await run(agent, request);
    const spans = t.spans();
    const chats = spans.filter((s) => s.name === 'chat scripted');
    const first = JSON.parse(String(chats[0]?.attributes['gen_ai.input.messages']));
    // The messages as the model was given them: the system prompt, the tools rendered, the goal.
    expect(first[0]).toEqual({ role: 'system', parts: [{ type: 'text', content: 'You are a careful calculator.' }] });
    expect(first[1]).toMatchObject({
      role: 'system',
      parts: [{ type: 'text', content: expect.stringMatching(/^## Tools/) }],
    });
    expect(first.at(-1)).toEqual({
      role: 'user',
      parts: [{ type: 'text', content: 'Add 1 and 2, note it, then add 3 and 4.' }],
    });
    const second = JSON.parse(String(chats[1]?.attributes['gen_ai.input.messages'])) as unknown[];
    expect(second.length).toBeGreaterThan(first.length);
    expect(JSON.parse(String(chats[2]?.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: '{"final":"3"}' }], finish_reason: 'stop' },
    ]);
    expect(JSON.parse(String(chats[0]?.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: '{"tool":"add","args":{"a":1,"b":2}}' }],
        finish_reason: 'tool_call',
      },
    ]);
    const add = only(spans, 'execute_tool add');
    expect(add.attributes['gen_ai.tool.call.arguments']).toBe('{"a":1,"b":2}');
    expect(add.attributes['gen_ai.tool.call.result']).toBe('3');
    expect(only(spans, 'execute_tool note').attributes['gen_ai.tool.call.result']).toBe('noted three');
  });

  it('keeps a chat span that waits for its reply as long as the call took, not until its step ended', async () => {
    const t = tracing();
    const slow: ToolSpec = {
      name: 'slow',
      description: 'Takes a while.',
      parameters: { type: 'object', properties: {} },
      replayPolicy: 'safe',
      handler: () => new Promise((resolve) => setTimeout(() => resolve('done'), 30)),
    };
    const script = ['{"tool":"slow","args":{}}', '{"final":"ok"}'];
    const sink = otelSink({ tracer: t.tracer, captureContent: true });
    const { agent, request } = tracedAgent(sink, { script, tools: [slow] });
    await run(agent, request);
    const spans = t.spans();
    const chat = spans.find((s) => s.name === 'chat scripted') as (typeof spans)[number];
    const tool = only(spans, 'execute_tool slow');
    const ms = (time: readonly [number, number]): number => time[0] * 1e3 + time[1] / 1e6;
    expect(chat.attributes['gen_ai.output.messages']).toBeDefined();
    expect(ms(chat.endTime)).toBeLessThanOrEqual(ms(tool.startTime));
  });

  it('times spans by a clock that runs forward while the wall clock is set back during the run', async () => {
    const t = tracing();
    const slow: ToolSpec = {
      name: 'slow',
      description: 'Takes a few milliseconds.',
      parameters: { type: 'object', properties: {} },
      replayPolicy: 'safe',
      handler: () => new Promise((resolve) => setTimeout(() => resolve('done'), 5)),
    };
    const script = ['{"tool":"slow","args":{}}', '{"final":"ok"}'];
    const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer, captureContent: true }), {
      script,
      tools: [slow],
    });
    let wall = Date.now();
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => (wall -= 60_000));
    try {
      await run(agent, request);
    } finally {
      clock.mockRestore();
    }
    const tool = only(t.spans(), 'execute_tool slow');
    // A span timed by the wall clock would end before it started (the SDK then makes it last 0).
    expect(tool.duration[0] * 1e9 + tool.duration[1]).toBeGreaterThan(0);
    for (const s of t.spans()) expect(s.duration[0], s.name).toBeGreaterThanOrEqual(0);
  });
});
