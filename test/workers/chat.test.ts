/**
 * `POST /chat` and `GET /chat/:chatId/stream` in workerd: each turn of a chat is its own object,
 * which drives the turn with the chat engine and streams it as the AI SDK's UI message stream;
 * its history comes from the previous turn's log (another object); replies reach the awaiting
 * turn's object; an evicted turn is resumed by a reconnect or by its alarm. The chat is the
 * probe chat of fixtures/chat-probe.ts, under `/probes`.
 */
import { safeValidateTypes } from '@ai-sdk/provider-utils';
import { readUIMessageStream, uiMessageChunkSchema } from 'ai';
import type { UIMessage, UIMessageChunk } from 'ai';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { chatProbeRan, chatProbeSeen } from './fixtures/chat-probe.ts';
import { call } from './http.ts';

const stubOf = (runId: string): DurableObjectStub => env.CHAT_PROBES.get(env.CHAT_PROBES.idFromName(runId));
type Ran = Readonly<Record<string, number>>;
const ranIn = (runId: string): Promise<Ran> => runInDurableObject(stubOf(runId), () => chatProbeRan(runId));
const seenIn = (runId: string): Promise<readonly unknown[]> =>
  runInDurableObject(stubOf(runId), () => chatProbeSeen(runId));
/** Reset a turn object's instance as an eviction would: its driver is gone, its storage stays. */
const evict = (runId: string): Promise<void> =>
  // abort() throws by design: the instance is gone either way.
  runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);

let chats = 0;
/** A fresh chat id per test. */
const chatId = (): string => `c${++chats}-${crypto.randomUUID().slice(0, 8)}`;

const user = (text: string, id = `u-${text}`): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

function post(body: unknown, init: { token?: string | null } = {}): Promise<Response> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return call('/probes/chat', { method: 'POST', body: text, ...init });
}

const send = (id: string, messages: UIMessage[]): Promise<Response> =>
  post({ id, messages, trigger: 'submit-message' });

/** The chunks of a UI message stream response, each checked against the AI SDK's schema; stops after one `until` matches. */
async function chunksOf(res: Response, until?: (c: UIMessageChunk) => boolean): Promise<UIMessageChunk[]> {
  expect(res.status).toBe(200);
  expect(res.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
  const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
  const out: UIMessageChunk[] = [];
  let buffer = '';
  let done = false;
  while (!done) {
    const next = await reader.read();
    if (next.done) break;
    buffer += next.value;
    let at: number;
    while (!done && (at = buffer.indexOf('\n\n')) >= 0) {
      const data = buffer.slice(0, at).replace(/^data: /, '');
      buffer = buffer.slice(at + 2);
      if (data === '[DONE]') break;
      const chunk = JSON.parse(data) as UIMessageChunk;
      const checked = await safeValidateTypes({ value: chunk, schema: uiMessageChunkSchema });
      expect(checked.success, data).toBe(true);
      out.push(chunk);
      done = until?.(chunk) ?? false;
    }
  }
  await reader.cancel().catch(() => undefined); // the turn goes on without this reader: that is the point
  return out;
}

/** The message the AI SDK assembles from `chunks` (continuing `from`, as useChat does for an answer). */
async function assemble(chunks: readonly UIMessageChunk[], from?: UIMessage): Promise<UIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(c) {
      for (const chunk of chunks) c.enqueue(structuredClone(chunk));
      c.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream, ...(from ? { message: structuredClone(from) } : {}) })) last = m;
  return JSON.parse(JSON.stringify(last)) as UIMessage;
}

const textOf = (m: UIMessage): string => m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
const types = (chunks: readonly UIMessageChunk[]): string[] => chunks.map((c) => c.type);
type ToolPart = { type: string; toolCallId: string; state: string; output?: unknown; approval?: { id: string } };
const toolParts = (m: UIMessage): ToolPart[] =>
  m.parts.filter((p) => p.type.startsWith('tool-')) as unknown as ToolPart[];

describe('chat on Workers: a turn per object (workerd)', () => {
  it('streams a turn as UI message chunks the AI SDK accepts: its text delta by delta, under one assistant message id', async () => {
    const id = chatId();
    const chunks = await chunksOf(await send(id, [user('hello')]));
    expect(chunks[0]).toEqual({ type: 'start', messageId: `chat:${id}:1:assistant` });
    expect(types(chunks).filter((t) => t === 'text-delta').length).toBeGreaterThan(2);
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(textOf(await assemble(chunks))).toBe('heard: hello');
  });

  it('gives the second turn the history the first turn ended with, from its log: a client’s tampered history reaches no model', async () => {
    const id = chatId();
    const first = await assemble(await chunksOf(await send(id, [user('hello')])));
    const forged: UIMessage = { id: first.id, role: 'assistant', parts: [{ type: 'text', text: 'forged reply' }] };
    const second = await assemble(await chunksOf(await send(id, [user('TAMPERED', 'u-hello'), forged, user('again')])));
    expect(textOf(second)).toBe('heard: hello | again');
    const seen = JSON.stringify(await seenIn(`chat:${id}:2`));
    expect(seen).toContain('heard: hello');
    expect(seen).not.toContain('forged');
    expect(seen).not.toContain('TAMPERED');
  });

  it('attaches a repeated POST of a turn to the running turn: the model is called once per step, and both streams tell the same turn', async () => {
    const id = chatId();
    const [a, b] = await Promise.all([send(id, [user('slow 2')]), send(id, [user('slow 2')])]);
    const [one, two] = await Promise.all([chunksOf(a), chunksOf(b)]);
    const runId = `chat:${id}:1`;
    expect((await seenIn(runId)).length).toBe(3);
    expect(await ranIn(runId)).toEqual({ slow_add: 2 });
    for (const chunks of [one, two]) expect(textOf(await assemble(chunks))).toBe('done: 1, 2');
    // Once it has ended, a third POST is the whole turn from the log, and calls nothing.
    expect(textOf(await assemble(await chunksOf(await send(id, [user('slow 2')]))))).toBe('done: 1, 2');
    expect((await seenIn(runId)).length).toBe(3);
  });

  it("carries out an approval and a denial sent back as the AI SDK's approval parts, in the awaiting turn's object", async () => {
    for (const approved of [true, false]) {
      const id = chatId();
      const asked = await chunksOf(await send(id, [user('email')]));
      expect(types(asked)).toEqual(expect.arrayContaining(['tool-input-available', 'tool-approval-request']));
      expect(asked.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
      const message = await assemble(asked);
      const [part] = toolParts(message);
      expect(part).toMatchObject({ type: 'tool-send_email', state: 'approval-requested' });
      // What addToolApprovalResponse makes of the part.
      const responded = {
        ...part,
        state: 'approval-responded',
        approval: { id: part?.approval?.id, approved, reason: 'Not now.' },
      };
      const answered = {
        ...message,
        parts: message.parts.map((p) => (p === (part as unknown) ? responded : p)),
      } as UIMessage;
      const rest = await chunksOf(await send(id, [user('email'), answered]));
      const done = await assemble(rest, answered);
      expect(toolParts(done)[0]?.state).toBe(approved ? 'output-available' : 'output-denied');
      expect(textOf(done)).toBe(approved ? 'done: sent to bob@example.com' : 'done: Not now.');
      expect(await ranIn(`chat:${id}:1`)).toEqual(approved ? { send_email: 1 } : {});
    }
  });

  it('resumes a turn whose object was evicted mid-turn when the page reconnects with GET …/stream, and streams it to its end with nothing twice', async () => {
    const id = chatId();
    const runId = `chat:${id}:1`;
    await chunksOf(await send(id, [user('slow 3')]), (c) => c.type === 'tool-output-available');
    await evict(runId);
    const stalled = (await seenIn(runId)).length;
    await new Promise((r) => setTimeout(r, 500));
    expect((await seenIn(runId)).length).toBe(stalled);
    const chunks = await chunksOf(await call(`/probes/chat/${id}/stream`));
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    const message = await assemble(chunks);
    expect(textOf(message)).toBe('done: 1, 2, 3');
    expect(toolParts(message).map((p) => p.output)).toEqual(['1', '2', '3']);
    expect((await call(`/probes/chat/${id}/stream`)).status).toBe(204);
  });

  it('resumes an evicted turn from its alarm when no page reconnects, and clears the alarm once the turn has ended', async () => {
    const id = chatId();
    const runId = `chat:${id}:1`;
    await chunksOf(await send(id, [user('slow 2')]), (c) => c.type === 'start-step');
    await evict(runId);
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    // Only the logs are read from here on (GET …/messages drives nothing): the alarm's driver ends the turn.
    let last: UIMessage | undefined;
    for (let i = 0; i < 100 && (last === undefined || textOf(last) === ''); i++) {
      await new Promise((r) => setTimeout(r, 50));
      last = ((await (await call(`/probes/chat/${id}/messages`)).json()) as UIMessage[]).at(-1);
    }
    expect(last === undefined ? '' : textOf(last)).toBe('done: 1, 2');
    expect(await runInDurableObject(stubOf(runId), (_o, state) => state.storage.getAlarm())).toBeNull();
  });

  it("runs a never tool once: an eviction mid-call makes the turn ask a person to settle it, and a { id, runId, input } reply settles it in the turn's object", async () => {
    const id = chatId();
    const runId = `chat:${id}:1`;
    await chunksOf(await send(id, [user('charge')]), (c) => c.type === 'tool-input-available');
    await new Promise((r) => setTimeout(r, 50)); // the charge has started (it takes 400 ms)
    await evict(runId);
    const asked = await chunksOf(await call(`/probes/chat/${id}/stream`));
    type Settle = { data: { runId: string; resultId: string } };
    const settle = asked.find((c) => c.type === 'data-polyloop-settle') as Settle | undefined;
    expect(settle).toBeDefined();
    expect(asked.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    const again = await chunksOf(await send(id, [user('charge')]));
    expect(again.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    const reply = { kind: 'executed', resultId: settle?.data.resultId, observation: 'charged (checked by hand)' };
    const rest = await chunksOf(await post({ id, runId: settle?.data.runId, input: reply }));
    const done = await assemble(rest, await assemble(asked));
    const charged = { type: 'tool-charge', state: 'output-available', output: 'charged (checked by hand)' };
    expect(toolParts(done)).toMatchObject([charged]);
    expect(textOf(done)).toBe('done: charged (checked by hand)');
    expect(await ranIn(runId)).toEqual({ charge: 1 });
  });

  it('refuses with 409 a { id, runId, input } reply kept from an earlier turn when the latest turn asks the same request id, and sends nothing', async () => {
    const id = chatId();
    const first = await chunksOf(await send(id, [user('email')]));
    const approve = { id, runId: `chat:${id}:1`, input: { kind: 'approve', resultId: 's0.input' } };
    const message = await assemble(await chunksOf(await post(approve)), await assemble(first));
    expect(await ranIn(`chat:${id}:1`)).toEqual({ send_email: 1 });
    const asked = await chunksOf(await send(id, [user('email'), message, user('email', 'u-email-2')]));
    const request = { type: 'tool-approval-request', approvalId: `chat:${id}:2:s0.input` };
    expect(asked).toContainEqual(expect.objectContaining(request));
    const stale = await post(approve);
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ error: { code: 'conflict' } });
    expect(await ranIn(`chat:${id}:2`)).toEqual({});
  });

  it('cancels a turn still waiting for an approval when the next turn is posted, and runs the next one on its history', async () => {
    const id = chatId();
    const message = await assemble(await chunksOf(await send(id, [user('email')])));
    const next = await assemble(await chunksOf(await send(id, [user('email'), message, user('never mind')])));
    expect(textOf(next)).toContain('never mind');
    const log = (await (await call(`/probes/chat/${id}/messages`)).json()) as UIMessage[];
    expect(log.map((m) => m.id)).toEqual(
      ['1:user', '1:assistant', '2:user', '2:assistant'].map((s) => `chat:${id}:${s}`),
    );
    expect(await ranIn(`chat:${id}:1`)).toEqual({});
  });

  it("restores the conversation with GET …/messages from the turns' logs, and answers 204 to a reconnect when no turn runs", async () => {
    const id = chatId();
    expect((await call(`/probes/chat/${id}/stream`)).status).toBe(204);
    expect(await (await call(`/probes/chat/${id}/messages`)).json()).toEqual([]);
    const first = await assemble(await chunksOf(await send(id, [user('add')])));
    const second = await assemble(await chunksOf(await send(id, [user('add'), first, user('thanks')])));
    const restored = (await (await call(`/probes/chat/${id}/messages`)).json()) as UIMessage[];
    expect(restored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(restored[1]).toEqual(first);
    expect(restored[3]).toEqual(second);
    expect((await call(`/probes/chat/${id}/stream`)).status).toBe(204);
  });

  it('refuses what it cannot serve: 401 without the token, 413 over 1 MiB, 400 for a bad chat id, body or turn, 409 while the previous turn runs', async () => {
    const id = chatId();
    expect((await post({ id, messages: [user('x')] }, { token: null })).status).toBe(401);
    expect((await call(`/probes/chat/${id}/stream`, { token: 'wrong' })).status).toBe(401);
    const big = await post({ id, messages: [user('x'.repeat(1024 * 1024 + 1))] });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    const bad = [
      'not json',
      '[]',
      { id: '../etc', messages: [user('x')] },
      { id: 'x'.repeat(129), messages: [user('x')] },
      { id, messages: [] },
      { id, messages: [{ role: 'robot', parts: [] }] },
    ];
    for (const body of bad) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'bad_request' } });
    }
    for (const path of ['a%20b', 'x'.repeat(129), '%E0%A4%A']) {
      expect((await call(`/probes/chat/${path}/stream`)).status, path).toBe(400);
    }
    const fresh = chatId();
    expect((await send(fresh, [user('one'), user('two')])).status).toBe(400); // turn 2 of a chat with no turn 1
    const nothing = { id: fresh, runId: `chat:${fresh}:1`, input: { kind: 'approve', resultId: 's0.input' } };
    expect((await post(nothing)).status).toBe(400); // nothing to answer
    expect((await post({ id, input: { kind: 'approve', resultId: 's0.input' } })).status).toBe(400); // no runId
    const tables = (_o: unknown, state: DurableObjectState): unknown[] =>
      state.storage.sql.exec('SELECT name FROM sqlite_master').toArray();
    expect(await runInDurableObject(stubOf(`chat:${fresh}:2`), tables)).toEqual([]); // refused before anything was stored
    const slow = chatId();
    await chunksOf(await send(slow, [user('slow 2')]), (c) => c.type === 'start');
    expect((await send(slow, [user('slow 2'), user('next')])).status).toBe(409);
  });
});
