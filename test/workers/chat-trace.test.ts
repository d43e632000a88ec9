/**
 * Tracing a chat on Workers (workerd): the probe chat whose turn objects' agent has `otelSink`
 * on the OpenTelemetry SDK's in-memory exporter (fixtures/traced-chat.ts), reached at
 * `POST /traced/chat` as useChat posts. A turn that asks for an approval (one request) and the
 * approval sent back as the AI SDK's approval part (the next request, a new driver in the turn's
 * object — or in a new instance of it, after an eviction) make one trace: the second
 * `invoke_agent` under the first and linked to it; the turn's chat span holds the user's message.
 */
import { readUIMessageStream } from 'ai';
import type { UIMessage, UIMessageChunk } from 'ai';
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { tracedChatSpans } from './fixtures/traced-chat.ts';
import type { TracedSpan } from './fixtures/traced-chat.ts';
import { call } from './http.ts';

const stubOf = (runId: string): DurableObjectStub => env.TRACED_CHAT.get(env.TRACED_CHAT.idFromName(runId));
const spansIn = (runId: string): Promise<TracedSpan[]> => runInDurableObject(stubOf(runId), () => tracedChatSpans());
/** Reset a turn object's instance as an eviction would: its driver and its sink are gone, its storage stays. */
const evict = (runId: string): Promise<void> =>
  runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);

const user = (text: string): UIMessage => ({ id: `u-${text}`, role: 'user', parts: [{ type: 'text', text }] });

/** POST the chat's messages as useChat does; the message the AI SDK assembles from the stream (continuing `from`). */
async function send(id: string, messages: UIMessage[], from?: UIMessage): Promise<UIMessage> {
  const body = JSON.stringify({ id, messages, trigger: 'submit-message' });
  const res = await call('/traced/chat', { method: 'POST', body });
  expect(res.status).toBe(200);
  const stream = (res.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(sseData())
    .pipeThrough(new TransformStream<string, UIMessageChunk>({ transform: (d, c) => c.enqueue(JSON.parse(d)) }));
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream, ...(from ? { message: structuredClone(from) } : {}) })) last = m;
  return JSON.parse(JSON.stringify(last)) as UIMessage;
}

/** The `data:` payloads of an SSE text stream, up to `[DONE]`. */
function sseData(): TransformStream<string, string> {
  let buffer = '';
  return new TransformStream({
    transform(text, c) {
      buffer += text;
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const data = buffer.slice(0, at).replace(/^data: /, '');
        buffer = buffer.slice(at + 2);
        if (data !== '[DONE]') c.enqueue(data);
      }
    },
  });
}

/** The message with its tool part approved, as addToolApprovalResponse leaves it. */
function approved(message: UIMessage): UIMessage {
  const parts = message.parts.map((p) => {
    const part = p as { state?: string; approval?: { id: string } };
    if (part.state !== 'approval-requested') return p;
    return { ...p, state: 'approval-responded', approval: { id: part.approval?.id, approved: true } };
  });
  return { ...message, parts } as UIMessage;
}

const textOf = (m: UIMessage): string => m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');

/** The spans of the turn `runId`'s trace (the trace of its first invoke_agent), as its object exported them. */
async function traceOf(runId: string): Promise<{ agents: TracedSpan[]; spans: TracedSpan[] }> {
  const all = await spansIn(runId);
  const agents = all.filter((s) => s.name === 'invoke_agent' && s.attributes['gen_ai.conversation.id'] === runId);
  const traceId = agents[0]?.traceId;
  return { agents, spans: all.filter((s) => s.traceId === traceId) };
}

/** Span names indented under their parents', children in the order they ended. */
function tree(spans: readonly TracedSpan[], parent: string | null = null, depth = 0): string[] {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans
    .filter((s) => (parent === null ? s.parentSpanId === null || !ids.has(s.parentSpanId) : s.parentSpanId === parent))
    .flatMap((s) => [`${'  '.repeat(depth)}${s.name}`, ...tree(spans, s.spanId, depth + 1)]);
}

async function approvedTurn(id: string, between?: () => Promise<void>): Promise<TracedSpan[]> {
  const asked = await send(id, [user('email')]);
  expect(asked.parts.some((p) => (p as { state?: string }).state === 'approval-requested')).toBe(true);
  await between?.();
  const answer = approved(asked);
  const done = await send(id, [user('email'), answer], answer);
  expect(textOf(done)).toBe('done: sent to bob@example.com');
  const { agents, spans } = await traceOf(`chat:${id}:1`);
  expect(agents).toHaveLength(2);
  const [first, second] = agents;
  expect(first?.attributes).toMatchObject({ 'polyloop.run.resumed': false, 'polyloop.run.pending_input': 'approval' });
  expect(second?.attributes).toMatchObject({
    'polyloop.run.resumed': true,
    'polyloop.run.resolution': 'await_input',
    'polyloop.run.stop_reason': 'final_answer',
  });
  expect(second?.traceId).toBe(first?.traceId);
  expect(second?.parentSpanId).toBe(first?.spanId);
  expect(second?.links).toEqual([{ traceId: first?.traceId, spanId: first?.spanId, isRemote: true }]);
  expect(tree(spans)).toEqual([
    'invoke_agent',
    '  chat chat-probe-policy',
    '  invoke_agent',
    '    execute_tool send_email',
    '    chat chat-probe-policy',
  ]);
  return spans;
}

let chats = 0;
const chatId = (): string => `traced${++chats}-${crypto.randomUUID().slice(0, 8)}`;

describe('tracing a chat on Workers (otelSink as the turn objects’ agent sink, workerd)', () => {
  it('a turn that asks for an approval and the approval sent back by the next request make one trace: the second invoke_agent under the first, linked to it', async () => {
    const spans = await approvedTurn(chatId());
    // Content captured: the turn's first chat span holds the user's message as the model was given it.
    const chat = spans.find((s) => s.name === 'chat chat-probe-policy');
    const input = JSON.parse(String(chat?.attributes['gen_ai.input.messages'])) as unknown;
    expect(input).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'You are the probe chat.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'email' }] },
    ]);
  });

  it('the approval carried out by a new instance of the turn’s object (evicted after it asked: a new sink) joins the same trace', async () => {
    const id = chatId();
    await approvedTurn(id, () => evict(`chat:${id}:1`));
  });
});
