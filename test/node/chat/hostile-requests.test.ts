import { describe, expect, it } from 'vitest';
import { chatEngine, chatHandler, chatRunId } from '../../../src/chat/index.ts';
import type { ChatTurn } from '../../../src/chat/index.ts';
import { InMemoryStore, isPolyLoopError } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { chatModel, send, testChat, userMessage } from './fixtures.ts';

/** A chat whose store counts every write. */
function counted() {
  const store = faultyStore(new InMemoryStore(), { crashAfterWrites: Number.MAX_SAFE_INTEGER });
  const model = chatModel([{ call: { name: 'send_email', args: { to: 'a@b' } } }, { text: 'x' }, { text: 'y' }]);
  const chat = testChat(model, { store });
  return { chat, store };
}

const post = (body: BodyInit, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  new Request('http://chat.test/api/chat', { method: 'POST', body, headers });
const json = (value: unknown) => post(JSON.stringify(value));
const text = (parts: unknown[]) => ({ id: 'h1', role: 'user', parts });
const hi = [text([{ type: 'text', text: 'hi' }])];
const BAD = 'bad_request';
const FILE = { type: 'file', url: 'data:,', mediaType: 'x/y' };
const EMPTY_ASSISTANT = { role: 'assistant', parts: [] };

const APPROVE_S0 = { kind: 'approve', resultId: 's0' };

describe('hostile chat requests: a clear refusal, nothing written', () => {
  it.each([
    ['not JSON', post('{"id": "h1", "messages": ['), 400, 'bad_request'],
    ['not UTF-8', post(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), 400, 'bad_request'],
    ['a JSON array', json([]), 400, 'bad_request'],
    ['no id', json({ messages: [text([{ type: 'text', text: 'hi' }])] }), 400, 'bad_request'],
    ['a path in the id', json({ id: '../etc', messages: [text([{ type: 'text', text: 'hi' }])] }), 400, 'bad_request'],
    ['a dot id', json({ id: '.', messages: [text([{ type: 'text', text: 'hi' }])] }), 400, 'bad_request'],
    ['an id of 129 characters', json({ id: 'a'.repeat(129), messages: hi }), 400, BAD],
    ['messages not an array', json({ id: 'h1', messages: 'hi' }), 400, 'bad_request'],
    ['no messages', json({ id: 'h1', messages: [] }), 400, 'bad_request'],
    ['a message without a role', json({ id: 'h1', messages: [{ parts: [] }] }), 400, 'bad_request'],
    ['a last message without parts', json({ id: 'h1', messages: [{ role: 'user' }] }), 400, 'bad_request'],
    ['a system message last', json({ id: 'h1', messages: [...hi, { role: 'system', parts: [] }] }), 400, BAD],
    ['a file part', json({ id: 'h1', messages: [text([FILE])] }), 400, BAD],
    ['a text part that is not text', json({ id: 'h1', messages: [text([{ type: 'text', text: 42 }])] }), 400, BAD],
    ['an empty user message', json({ id: 'h1', messages: [text([{ type: 'text', text: '' }])] }), 400, 'bad_request'],
    ['an unknown trigger', json({ id: 'h1', trigger: 'rm -rf', messages: hi }), 400, BAD],
    ['an input without its resultId', json({ id: 'h1', input: { kind: 'approve' } }), 400, 'bad_request'],
    ['an input for a chat without turns', json({ id: 'h1', runId: 'chat:h1:1', input: APPROVE_S0 }), 400, BAD],
    ['turn 3 of a chat without turns', json({ id: 'h1', messages: [...hi, ...hi, ...hi] }), 400, BAD],
    ['answers to a turn not started', json({ id: 'h1', messages: [...hi, EMPTY_ASSISTANT] }), 400, BAD],
  ])('%s → %i %s', async (_name, req, status, code) => {
    const { chat, store } = counted();
    const res = await chat.handle(req);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe(code);
    expect(body.error.message).not.toMatch(/\n\s+at /);
    expect(store.writes).toEqual([]);
  });

  it('a body over the limit is refused with 413, by its declared length or as it streams in', async () => {
    const { chat, store } = counted();
    const big = JSON.stringify({ id: 'h1', messages: [text([{ type: 'text', text: 'x'.repeat(1024 * 1024) }])] });
    expect((await chat.handle(post(big))).status).toBe(413);
    const small = chatHandler({ agent: chat.agent, store, request: chat.request, maxBodyBytes: 64 });
    const chunked = new Request('http://chat.test/api/chat', {
      method: 'POST',
      body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode(big.slice(0, 200))), c.close()) }),
      duplex: 'half',
    } as RequestInit);
    const res = await small(chunked);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    expect(store.writes).toEqual([]);
  });

  it.each([
    ['PUT', 'http://chat.test/api/chat', 405],
    ['GET', 'http://chat.test/api/chat/h1', 404],
    ['GET', 'http://chat.test/api/chat/h1%2F..%2Fx/stream', 400],
    ['GET', 'http://chat.test/api/chat/%E0%A4%A/stream', 400],
  ])('%s %s → %i', async (method, url, status) => {
    const { chat, store } = counted();
    const res = await chat.handle(new Request(url, { method }));
    expect(res.status).toBe(status);
    const { error } = (await res.json()) as { error: { code: string } };
    expect(error.code).toMatch(/^(bad_request|not_found|method_not_allowed)$/);
    expect(store.writes).toEqual([]);
  });

  it('an answer that fits no open request is a 409 and writes nothing', async () => {
    const { chat, store } = counted();
    await send(chat, 'h2', [userMessage('mail a@b')]);
    const written = store.writes.length;
    const RUN = 'chat:h2:1';
    const answer = { kind: 'answer', resultId: 's0.input', text: 'no' };
    const wrong = await chat.handle(json({ id: 'h2', runId: RUN, input: answer }));
    expect(wrong.status).toBe(409);
    const other = await chat.handle(json({ id: 'h2', runId: RUN, input: { kind: 'approve', resultId: 's9.input' } }));
    expect(other.status).toBe(409);
    const nothing = { id: 'x', role: 'assistant', parts: [] };
    const silent = await chat.handle(json({ id: 'h2', messages: [userMessage('mail a@b'), nothing] }));
    expect(silent.status).toBe(409);
    expect(((await silent.json()) as { error: { code: string } }).error.code).toBe('conflict');
    expect(store.writes).toHaveLength(written);
  });

  it('options bags refuse keys they do not know, and a request() that names another run is refused', async () => {
    const { chat } = counted();
    const { agent, store, request } = chat;
    const bad = () => chatHandler({ agent, store, request, maxBodyByte: 5 } as never);
    expect(bad).toThrow(/maxBodyByte/);
    expect(() => chatEngine({ agent: chat.agent, store: chat.store } as never)).toThrow(/request/);
    const elsewhere = (t: ChatTurn) => ({ ...request(t), runId: 'elsewhere' });
    const engine = chatEngine({ agent, store: new InMemoryStore(), request: elsewhere });
    const refused = await engine.post({ id: 'h3', messages: [userMessage('hi')] }).catch((e: unknown) => e);
    expect(isPolyLoopError(refused, 'invalid_request')).toBe(true);
    expect(() => chatRunId('a/b', 1)).toThrow(/chat id/);
  });
});
