/**
 * Full agent runs through both model adapters inside workerd: the adapters' fetch, JSON and SSE
 * code runs in the Workers runtime. The provider fakes (hono apps, Web APIs only) run in the same
 * isolate and are reached through the adapters' `fetch` option — workerd tests cannot open a
 * loopback socket to a Node server; the Node project covers real HTTP on 127.0.0.1.
 */
import { describe, expect, it } from 'vitest';
import { anthropicModel, anthropicToolInterpreter } from '../../src/adapters/anthropic.ts';
import { openAIModel, openAIToolInterpreter } from '../../src/adapters/openai.ts';
import { defineAgent, InMemoryStore, run } from '../../src/core/index.ts';
import type { DecisionInterpreter, ModelCaller } from '../../src/core/index.ts';
import { collectingSink } from '../../src/testing/index.ts';
import {
  ANTHROPIC_SCRIPT,
  ANTHROPIC_USAGE_SCRIPT,
  anthropicTotals,
  MULTI,
  OPENAI_SCRIPT,
  OPENAI_USAGE_SCRIPT,
  openAITotals,
  request,
  SYNTHETIC,
} from '../node/adapters/agent-fixtures.ts';
import { createAnthropicFake } from '../node/adapters/anthropic-server.ts';
import { createOpenAIFake } from '../node/adapters/openai-server.ts';

type App = { fetch(req: Request): Response | Promise<Response> };
const via = (app: App) => (url: string, init: RequestInit) => Promise.resolve(app.fetch(new Request(url, init)));

async function runAgent(model: ModelCaller, interpreter: DecisionInterpreter, maxTotalTokens?: number) {
  const events = collectingSink();
  const agent = defineAgent({
    model,
    interpreter,
    store: new InMemoryStore(),
    events,
    syntheticObservations: SYNTHETIC,
  });
  const req = request('wr1');
  const budget = maxTotalTokens === undefined ? req.budget : { ...req.budget, maxTotalTokens };
  return { result: await run(agent, { ...req, budget }), events: events.events };
}

describe.each([false, true])('adapters inside workerd (stream: %s)', (stream) => {
  it('runs an agent through openAIModel with native tool calls to its final answer', async () => {
    const fake = createOpenAIFake([...OPENAI_SCRIPT]);
    const model = openAIModel({
      model: 'gpt-test',
      baseURL: 'http://fake.openai/v1',
      fetch: via(fake.app),
      stream,
      body: { store: true },
    });
    const { result, events } = await runAgent(model, openAIToolInterpreter());
    expect(result).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'The answer is 7.',
      steps: 4,
      validActions: 2,
    });
    expect(result.trajectory.map((s) => s.decision)).toEqual(['action', 'invalid', 'action', 'final']);
    const second = fake.requests[1]!.body as { messages: unknown[] };
    expect(second.messages.slice(3)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }],
      },
      { role: 'tool', tool_call_id: 'call_0', content: 'Observation: 3' },
    ]);
    const third = fake.requests[2]!.body as { messages: { role: string; content: unknown }[] };
    expect(third.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'Observation: 3',
      MULTI,
      MULTI,
    ]);
    const deltas = events.flatMap((e) => (e.type === 'model_delta' && e.kind === undefined ? [e.delta] : []));
    expect(deltas.join('')).toBe(stream ? 'Adding 3 and 4.The answer is 7.' : '');
  });

  it('runs an agent through anthropicModel with tool_use, tool_result and signed thinking', async () => {
    const fake = createAnthropicFake([...ANTHROPIC_SCRIPT]);
    const model = anthropicModel({
      model: 'claude-test',
      baseURL: 'http://fake.anthropic/v1',
      maxTokens: 512,
      fetch: via(fake.app),
      stream,
    });
    const { result } = await runAgent(model, anthropicToolInterpreter());
    expect(result).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'The answer is 7.',
      steps: 4,
      validActions: 2,
    });
    const second = fake.requests[1]!.body as { messages: unknown[] };
    expect(second.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'First add 1 and 2.', signature: 'sig-0' },
          { type: 'tool_use', id: 'toolu_0', name: 'add', input: { a: 1, b: 2 } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'Observation: 3' }] },
    ]);
  });
});

describe.each([false, true])('reply metadata through the adapters inside workerd (stream: %s)', (stream) => {
  it("totals openAIModel's usage to the fake's counts, and maxTotalTokens stops the run at the third step", async () => {
    const fake = createOpenAIFake([...OPENAI_USAGE_SCRIPT]);
    const model = openAIModel({
      model: 'gpt-test',
      baseURL: 'http://fake.openai/v1',
      fetch: via(fake.app),
      stream,
      body: { store: true },
    });
    const full = await runAgent(model, openAIToolInterpreter());
    expect(full.result.usage).toEqual(openAITotals(fake.reportedUsage));
    expect(fake.reportedUsage).toHaveLength(4);
    const capped = createOpenAIFake([...OPENAI_USAGE_SCRIPT]);
    const cappedModel = openAIModel({
      model: 'gpt-test',
      baseURL: 'http://fake.openai/v1',
      fetch: via(capped.app),
      stream,
      body: { store: true },
    });
    const { result } = await runAgent(cappedModel, openAIToolInterpreter(), 400);
    expect(result).toMatchObject({ stopReason: 'max_tokens', steps: 3 });
    expect(capped.requests).toHaveLength(3);
  });

  it("totals anthropicModel's usage to the fake's counts and sends redacted thinking back byte-identically", async () => {
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' } as const;
    const [first, ...rest] = ANTHROPIC_USAGE_SCRIPT;
    if (first?.kind !== 'reply') throw new Error('the script starts with a reply');
    const fake = createAnthropicFake([{ ...first, content: [redacted, ...first.content] }, ...rest]);
    const model = anthropicModel({
      model: 'claude-test',
      baseURL: 'http://fake.anthropic/v1',
      maxTokens: 512,
      fetch: via(fake.app),
      stream,
    });
    const { result } = await runAgent(model, anthropicToolInterpreter());
    expect(result).toMatchObject({ stopReason: 'final_answer', steps: 4 });
    expect(result.usage).toEqual(anthropicTotals(fake.reportedUsage));
    const second = fake.requests[1]!.body as { messages: { role: string; content: unknown[] }[] };
    expect(JSON.stringify(second.messages[1]!.content[0])).toBe(JSON.stringify(redacted));
  });
});

describe.each([false, true])('a response past maxResponseBytes inside workerd (stream: %s)', (stream) => {
  it('ends the run model_error naming the limit, and cancels a body that never ends', async () => {
    let cancelled = false;
    const piece = new TextEncoder().encode(
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'x'.repeat(4096) } }] })}\n\n`,
    );
    const endless = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(piece),
      cancel: () => void (cancelled = true),
    });
    const type = stream ? 'text/event-stream' : 'application/json';
    const fetch = async (): Promise<Response> => new Response(endless, { headers: { 'content-type': type } });
    const model = openAIModel({
      model: 'gpt-test',
      baseURL: 'http://fake.openai/v1',
      fetch,
      stream,
      maxResponseBytes: 65_536,
    });
    const { result } = await runAgent(model, openAIToolInterpreter());
    expect(result.stopReason).toBe('model_error');
    expect(result.error).toMatch(/larger than 65536 bytes \(maxResponseBytes\)/);
    expect(cancelled).toBe(true);
  });
});
