/**
 * The one capped body reader (src/core/capped-body.ts): a request body read whole, a response body
 * passed on as it is read, both refusing more bytes than the limit whatever the sender claims.
 */
import { describe, expect, it } from 'vitest';
import { cappedStream, declaresMoreThan, readCapped } from '../../../src/core/internal-entry.ts';

/** `chunks` chunks of `size` bytes (endless for Infinity), pulled on demand; what was pulled, how it was cancelled. */
function source(chunks: number, size: number, failAt = -1) {
  const seen = { pulled: 0, cancelled: undefined as unknown, wasCancelled: false };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.pulled === failAt) return controller.error(new Error('the connection reset'));
        if (seen.pulled >= chunks) return controller.close();
        seen.pulled++;
        controller.enqueue(new Uint8Array(size).fill(seen.pulled));
      },
      cancel(reason) {
        seen.wasCancelled = true;
        seen.cancelled = reason;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, seen };
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  return bytes;
}

describe('readCapped', () => {
  it('gives the whole body, in order, when it fits the limit exactly', async () => {
    const { body } = source(3, 4);
    expect([...((await readCapped(body, 12)) ?? [])]).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
  });

  it('stops at the chunk that passes the limit and leaves the stream unlocked and uncancelled', async () => {
    const { body, seen } = source(Infinity, 1000);
    expect(await readCapped(body, 2_500)).toBeNull();
    expect([seen.pulled, body.locked, seen.wasCancelled]).toEqual([3, false, false]);
  });

  it('rejects with the failure of a read', async () => {
    await expect(readCapped(source(5, 10, 2).body, 1_000)).rejects.toThrow('the connection reset');
  });
});

describe('declaresMoreThan', () => {
  it.each([
    ['no Content-Length', {}, false],
    ['a Content-Length at the limit', { 'content-length': '10' }, false],
    ['a Content-Length over it', { 'content-length': '11' }, true],
  ] as const)('%s', (_what, headers, over) => {
    expect(declaresMoreThan(new Request('http://x/', { headers }), 10)).toBe(over);
  });
});

describe('cappedStream', () => {
  it('passes a body within the limit on, chunk by chunk, and says it ended', async () => {
    const { body } = source(4, 5);
    const chunks: number[] = [];
    const ends: unknown[] = [];
    const onChunk = (c: Uint8Array): number => chunks.push(c.byteLength);
    const onEnd = (e: unknown, big: boolean): number => ends.push([e, big]);
    const stream = cappedStream(body, { maxBytes: 20, tooLarge: () => 'big', onChunk, onEnd });
    expect(await drain(stream)).toBe(20);
    expect([chunks, ends]).toEqual([[5, 5, 5, 5], [[undefined, false]]]);
  });

  it('fails past the limit with its error, and cancels the source with it', async () => {
    const { body, seen } = source(Infinity, 1000);
    const tooLarge = new Error('too large');
    const ends: unknown[] = [];
    const onEnd = (e: unknown, big: boolean): number => ends.push([e, big]);
    const stream = cappedStream(body, { maxBytes: 2_500, tooLarge: () => tooLarge, onEnd });
    await expect(drain(stream)).rejects.toBe(tooLarge);
    expect([seen.pulled, seen.cancelled, ends]).toEqual([3, tooLarge, [[tooLarge, true]]]);
  });

  it('fails with the read failure itself, or with what readFailed makes of it', async () => {
    const plain = cappedStream(source(5, 10, 1).body, { maxBytes: 100, tooLarge: () => 'big' });
    await expect(drain(plain)).rejects.toThrow('the connection reset');
    const readFailed = (e: unknown): string => `broke off: ${String(e)}`;
    const wrapped = cappedStream(source(5, 10, 1).body, { maxBytes: 100, tooLarge: () => 'big', readFailed });
    await expect(drain(wrapped)).rejects.toBe('broke off: Error: the connection reset');
  });

  it("cancels the source with the signal's reason, and with the reason the stream is cancelled with", async () => {
    const aborted = source(Infinity, 10);
    const controller = new AbortController();
    cappedStream(aborted.body, { maxBytes: 100, tooLarge: () => 'big', signal: controller.signal });
    controller.abort('the call was cancelled');
    await Promise.resolve();
    expect(aborted.seen.cancelled).toBe('the call was cancelled');
    const dropped = source(Infinity, 10);
    await cappedStream(dropped.body, { maxBytes: 100, tooLarge: () => 'big' }).cancel('not wanted');
    expect(dropped.seen.cancelled).toBe('not wanted');
  });

  it('reads nothing until asked, unless told to read ahead', async () => {
    const lazy = source(5, 10);
    cappedStream(lazy.body, { maxBytes: 100, tooLarge: () => 'big' });
    const eager = source(5, 10);
    cappedStream(eager.body, { maxBytes: 100, tooLarge: () => 'big', highWaterMark: 1 });
    await new Promise((r) => setTimeout(r, 0));
    expect([lazy.seen.pulled, eager.seen.pulled]).toEqual([0, 1]);
  });
});
