import { describe, expect, it } from 'vitest';
import { parseSSE } from '../../../src/adapters/sse.ts';
import type { SSEEvent } from '../../../src/adapters/sse.ts';

function streamOf(chunks: readonly string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
}

async function collect(chunks: readonly string[]): Promise<SSEEvent[]> {
  const out: SSEEvent[] = [];
  for await (const e of parseSSE(streamOf(chunks), new AbortController().signal)) out.push(e);
  return out;
}

describe('parseSSE', () => {
  it.each([
    ['LF', ['data: a\n\ndata: b\n\n']],
    ['CRLF split between chunks', ['data: a\r', '\n\r\ndata: b\r\n\r\n']],
    ['CR only', ['data: a\r\rdata: b\r\r']],
    ['one byte at a time', [...'data: a\n\ndata: b\n\n']],
  ])('splits events on %s line ends', async (_name, chunks) => {
    expect((await collect(chunks)).map((e) => e.data)).toEqual(['a', 'b']);
  });

  it('reads event names, ids, multi-line data, comments and a leading BOM', async () => {
    const events = await collect([
      '\uFEFF: keep-alive\nevent: content_block_delta\nid: 7\ndata: {"x":\ndata:1}\n\n',
      'data:no-space\n\n',
    ]);
    expect(events).toEqual([
      { event: 'content_block_delta', data: '{"x":\n1}', id: '7' },
      { event: 'message', data: 'no-space', id: '7' },
    ]);
  });

  it('drops an unterminated last event', async () => {
    expect((await collect(['data: whole\n\ndata: torn'])).map((e) => e.data)).toEqual(['whole']);
  });

  it('rejects with the signal reason when aborted', async () => {
    const ac = new AbortController();
    const reason = new Error('stop');
    const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode('data: a\n\n')) });
    const it = parseSSE(body, ac.signal);
    expect((await it.next()).value).toMatchObject({ data: 'a' });
    ac.abort(reason);
    await expect(it.next()).rejects.toBe(reason);
  });
});
