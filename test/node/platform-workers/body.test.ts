import { describe, expect, it } from 'vitest';
import { drainBody, exceedsBytes, readBody } from '../../../src/platform-workers/body.ts';

/** A request whose body is `chunks` chunks of `size` bytes (endless for Infinity), with a record of what was pulled and whether it was cancelled. */
function streamed(
  chunks: number,
  size: number,
  headers: Record<string, string> = {},
): { req: Request; pulled: () => number; cancelled: () => boolean } {
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= chunks) return controller.close();
        pulled++;
        controller.enqueue(new Uint8Array(size));
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  const req = new Request('http://x/', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
  return { req, pulled: () => pulled, cancelled: () => cancelled };
}

describe('drainBody', () => {
  it('reads an unread body to its end when it fits the budget, without cancelling it', async () => {
    const s = streamed(10, 1000);
    await drainBody(s.req, 20_000);
    expect(s.pulled()).toBe(10);
    expect(s.cancelled()).toBe(false);
  });

  it('cancels an endless body once the budget is spent instead of reading on', async () => {
    const s = streamed(Infinity, 1000);
    await drainBody(s.req, 5_500);
    expect(s.cancelled()).toBe(true);
    expect(s.pulled()).toBeLessThanOrEqual(7);
  });

  it('cancels at once a body whose Content-Length is over the budget', async () => {
    const s = streamed(Infinity, 1000, { 'content-length': '999999' });
    await drainBody(s.req, 5_000);
    expect(s.cancelled()).toBe(true);
    expect(s.pulled()).toBeLessThanOrEqual(1);
  });

  it('leaves alone a body that was read already, and a request without one', async () => {
    const s = streamed(2, 10);
    expect(await readBody(s.req, 100)).toHaveLength(20);
    await expect(drainBody(s.req)).resolves.toBeUndefined();
    await expect(drainBody(new Request('http://x/'))).resolves.toBeUndefined();
  });
});

describe('readBody', () => {
  it('refuses a body over the limit and leaves the rest of the stream unlocked for the drain', async () => {
    const s = streamed(10, 1000);
    await expect(readBody(s.req, 2_500)).resolves.toBeNull();
    expect(s.req.body?.locked).toBe(false);
    await drainBody(s.req);
    expect(s.pulled()).toBe(10);
    expect(s.cancelled()).toBe(false);
  });
});

describe('exceedsBytes', () => {
  it.each([
    ['ASCII at the limit', 'a'.repeat(10), 10, false],
    ['ASCII one over', 'a'.repeat(11), 10, true],
    ['3-byte characters at the limit', '€'.repeat(4), 12, false],
    ['3-byte characters one over', '€'.repeat(4), 11, true],
    ['a surrogate pair counts 4 bytes', '😀'.repeat(3), 11, true],
    ['a surrogate pair at the limit', '😀'.repeat(3), 12, false],
  ] as const)('counts UTF-8 bytes, not characters: %s', (_what, text, max, over) => {
    expect(exceedsBytes(text, max)).toBe(over);
  });
});
