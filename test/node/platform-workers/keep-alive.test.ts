import http from 'node:http';
import { join } from 'node:path';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker, ROOT, startWorker, TOKEN } from './miniflare-harness.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

// The demo Worker in real workerd, served over loopback HTTP, as `wrangler dev` serves it: a body
// the Worker leaves unread must not break the keep-alive connection the next request goes over.

let mf: Miniflare;
let base: URL;
let dir = '';

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-keepalive-');
  mf = await startWorker(await bundleWorker(join(ROOT, 'examples/workers/worker.ts')), dir, {
    host: '127.0.0.1',
    port: 0,
  });
  base = await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
});

type Reply = {
  readonly status: number;
  readonly body: string;
  readonly localPort: number | undefined;
  readonly reused: boolean;
};

/** One request over `agent`; the body, if any, is written in 64 KiB chunks (chunked encoding unless a content-length header is given). */
function send(
  agent: http.Agent,
  method: string,
  path: string,
  options: { body?: Buffer; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...options.headers };
    const req = http.request(new URL(path, base), { method, agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, localPort: req.socket?.localPort, reused: req.reusedSocket }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    const body = options.body;
    if (body === undefined) return void req.end();
    void (async () => {
      for (let at = 0; at < body.length; at += 64 * 1024) {
        if (!req.write(body.subarray(at, at + 64 * 1024))) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })();
  });
}

/** Send `first`, then a status request on the same keep-alive connection; both replies. */
async function thenNext(first: (agent: http.Agent) => Promise<Reply>): Promise<[Reply, Reply]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const a = await first(agent);
    const b = await send(agent, 'GET', '/runs/no-such-run');
    return [a, b];
  } finally {
    agent.destroy();
  }
}

const overLimit = Buffer.from(`{"input":"${'x'.repeat(2 * 1024 * 1024)}"}`);

describe('a request body the Worker does not read, over loopback HTTP (real workerd)', () => {
  it('refuses a chunked body over 1 MiB with 413, and answers the next request on the same connection', async () => {
    const [first, next] = await thenNext((agent) => send(agent, 'POST', '/runs', { body: overLimit }));
    expect(first.status).toBe(413);
    expect(JSON.parse(first.body)).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(next.status).toBe(404);
    expect(next.reused).toBe(true);
    expect(next.localPort).toBe(first.localPort);
  });

  it('refuses a body whose Content-Length is over 1 MiB with 413, and answers the next request on the same connection', async () => {
    const headers = { 'content-length': String(overLimit.length) };
    const [first, next] = await thenNext((agent) => send(agent, 'POST', '/runs', { body: overLimit, headers }));
    expect(first.status).toBe(413);
    expect(next.status).toBe(404);
    expect(next.reused).toBe(true);
  });

  it('answers the next request on the same connection after a 401, a 404 and a cancel that left their bodies unread', async () => {
    const body = Buffer.alloc(200_000, 'x');
    const cases: [string, string, Record<string, string>, number][] = [
      ['POST', '/runs', { authorization: 'Bearer wrong' }, 401],
      ['POST', '/nope', {}, 404],
      ['POST', '/runs/no-such-run/cancel', {}, 404],
    ];
    for (const [method, path, headers, expected] of cases) {
      const [first, next] = await thenNext((agent) => send(agent, method, path, { body, headers }));
      expect(first.status, `${method} ${path}`).toBe(expected);
      expect(next.status, `after ${method} ${path}`).toBe(404);
      expect(next.reused, `after ${method} ${path}`).toBe(true);
    }
  });

  it('still starts a run from a chunked body under the limit, and the connection serves the next request', async () => {
    const [first, next] = await thenNext((agent) =>
      send(agent, 'POST', '/runs', { body: Buffer.from('{"input":"one two"}') }),
    );
    expect(first.status).toBe(201);
    expect(next.status).toBe(404);
    expect(next.reused).toBe(true);
  });
});
