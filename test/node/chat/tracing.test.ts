/**
 * Tracing a chat, over real HTTP: `chatHandler` on a loopback server whose agent's sink is
 * `otelSink` on the OpenTelemetry SDK's own tracer and in-memory exporter, the AI SDK's own chat
 * state machine with its `DefaultChatTransport`. A turn that asks for an approval (one request)
 * and the approval carried out (the next request, a new driver) make one trace: the second
 * `invoke_agent` under the first and linked to it — from the same server, and from another one
 * reading the same FileStore. With content captured, the turn's chat span holds the user's message;
 * the agent's sink is told how each request's driver settled. The chat's own sink wraps the agent's:
 * these fail if it drops the tracing hooks.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { DefaultChatTransport } from 'ai';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { readRunLog } from '../../../src/core/index.ts';
import { InMemoryStore } from '../../../src/core/index.ts';
import type { EventSink, RunStore, SettledRun } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { tracing, treeOf } from '../otel/sink-fixtures.ts';
import { chatModel, testChat, textOf, toolPart, UiChat } from './fixtures.ts';
import type { ChatModel, Say, TestChat } from './fixtures.ts';

const SEND: Say = { text: 'Sending.', call: { name: 'send_email', args: { to: 'a@b' } } };

type Served = {
  readonly chat: TestChat;
  readonly transport: DefaultChatTransport<UIMessage>;
  readonly close: () => Promise<void>;
};

/** `chatHandler` on 127.0.0.1 with `events` as its agent's sink; a `DefaultChatTransport` that calls it over HTTP. */
async function serve(model: ChatModel, events: EventSink, store: RunStore): Promise<Served> {
  const chat = testChat(model, { store, events });
  const server = createServer(getRequestListener((req) => chat.handle(req)));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`;
  return {
    chat,
    transport: new DefaultChatTransport<UIMessage>({ api }),
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

async function approve(ui: UiChat): Promise<void> {
  const id = toolPart(ui.last).approval?.id ?? '';
  await ui.addToolApprovalResponse({ id, approved: true });
  await ui.sendMessage();
}

const agents = (spans: readonly ReadableSpan[]): ReadableSpan[] => spans.filter((s) => s.name === 'invoke_agent');

/** The second driver's span is in the first's trace, its child, and linked to it. */
function expectJoined(first: ReadableSpan | undefined, second: ReadableSpan | undefined): void {
  const sc = first?.spanContext();
  expect(sc?.traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(second?.spanContext().traceId).toBe(sc?.traceId);
  expect(second?.parentSpanContext?.spanId).toBe(sc?.spanId);
  expect(second?.links.map((l) => l.context)).toEqual([
    { traceId: sc?.traceId, spanId: sc?.spanId, traceFlags: 1, isRemote: true },
  ]);
}

describe('tracing a chat served over HTTP (otelSink as the agent’s sink)', () => {
  it('a turn that asks for an approval and the approval carried out by the next request make one trace: the second invoke_agent under the first, linked to it', async () => {
    const t = tracing();
    const store = new FileStore({ dir: await tempDir('polyloop-chat-trace-') });
    const h = await serve(chatModel([SEND, { text: 'Sent.' }]), otelSink({ tracer: t.tracer }), store);
    const ui = new UiChat({ id: 't1', transport: h.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    expect(toolPart(ui.last)).toMatchObject({ state: 'approval-requested' });
    // The request that asked ended its driver's span, with what it waits on.
    const [asked] = agents(t.spans());
    expect(asked?.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': 'chat:t1:1',
      'polyloop.run.resumed': false,
      'polyloop.run.pending_input': 'approval',
    });
    const sc = asked?.spanContext();
    const started = readRunLog(await store.readLog('chat:t1:1')).started;
    expect(started?.traceparent).toBe(`00-${sc?.traceId}-${sc?.spanId}-01`);

    await approve(ui);
    expect(ui.status).toBe('ready');
    expect(textOf(ui.last)).toBe('Sending.Sent.');
    expect(h.chat.counters.send).toBe(1);
    const spans = t.spans();
    const [first, second] = agents(spans);
    expectJoined(first, second);
    expect(second?.attributes).toMatchObject({
      'gen_ai.conversation.id': 'chat:t1:1',
      'polyloop.run.resumed': true,
      'polyloop.run.resolution': 'await_input',
      'polyloop.run.stop_reason': 'final_answer',
    });
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(treeOf(spans)).toEqual([
      'invoke_agent',
      '  chat chat-scripted',
      '  invoke_agent',
      '    execute_tool send_email',
      '    chat chat-scripted',
    ]);
    await h.close();
  });

  it('the approval sent to another server (a restart, a new sink on the same FileStore) still joins the first request’s trace', async () => {
    const dir = await tempDir('polyloop-chat-trace-');
    const before = tracing();
    const a = await serve(chatModel([SEND]), otelSink({ tracer: before.tracer }), new FileStore({ dir }));
    const ui = new UiChat({ id: 't2', transport: a.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    await a.close();

    const after = tracing();
    const b = await serve(chatModel([{ text: 'Sent.' }]), otelSink({ tracer: after.tracer }), new FileStore({ dir }));
    const resumed = new UiChat({ id: 't2', transport: b.transport, messages: ui.messages });
    await approve(resumed);
    expect(textOf(resumed.last)).toBe('Sending.Sent.');
    expectJoined(agents(before.spans())[0], agents(after.spans())[0]);
    expect(treeOf(after.spans())).toEqual(['invoke_agent', '  execute_tool send_email', '  chat chat-scripted']);
    await b.close();
  });

  it('with captureContent the turn’s chat span holds the user’s message as the model was given it', async () => {
    const t = tracing();
    const events = otelSink({ tracer: t.tracer, captureContent: true });
    const h = await serve(
      chatModel([{ text: 'Hello there.' }]),
      events,
      new FileStore({ dir: await tempDir('polyloop-chat-trace-') }),
    );
    const ui = new UiChat({ id: 't3', transport: h.transport });
    await ui.sendMessage({ text: 'say hello to Ada' });
    expect(textOf(ui.last)).toBe('Hello there.');
    const chat = t.spans().find((s) => s.name === 'chat chat-scripted');
    const input = JSON.parse(String(chat?.attributes['gen_ai.input.messages'] ?? 'null')) as unknown;
    expect(input).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'You are a test assistant.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'say hello to Ada' }] },
    ]);
    expect(chat?.attributes['gen_ai.output.messages']).toContain('Hello there.');
    await h.close();
  });

  it('the agent’s own sink is told how each request’s driver settled: paused for the approval, then answered', async () => {
    const told: [string, string][] = [];
    const events: EventSink = {
      params: { sink: 'settling' },
      deliver: () => undefined,
      settled: (runId: string, o: SettledRun) => void told.push([runId, 'result' in o ? o.result.stopReason : 'error']),
    };
    const h = await serve(chatModel([SEND, { text: 'Sent.' }]), events, new InMemoryStore());
    const ui = new UiChat({ id: 't4', transport: h.transport });
    await ui.sendMessage({ text: 'mail a@b' });
    expect(told).toEqual([['chat:t4:1', 'awaiting_input']]);
    await approve(ui);
    expect(told).toEqual([
      ['chat:t4:1', 'awaiting_input'],
      ['chat:t4:1', 'final_answer'],
    ]);
    await h.close();
  });
});
