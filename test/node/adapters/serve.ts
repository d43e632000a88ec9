/** Serve a hono app on 127.0.0.1 over a real node:http socket (no @hono/node-server here). */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hono } from 'hono';
import { createAnthropicFake } from './anthropic-server.ts';
import type { AnthropicFake, AnthropicTurn } from './anthropic-server.ts';
import { createOpenAIFake } from './openai-server.ts';
import type { OpenAIFake, OpenAITurn } from './openai-server.ts';

export type Served = { readonly origin: string; close(): Promise<void> };

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
  return new Request(new URL(req.url ?? '/', origin), {
    method: req.method ?? 'GET',
    headers,
    ...(body ? { body } : {}),
  });
}

async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => (headers[k] = v));
  res.writeHead(response.status, headers);
  if (response.body) {
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        // Flush each chunk on its own so SSE arrives in pieces, as from a real server.
        await new Promise<void>((resolve, reject) => res.write(value, (e) => (e ? reject(e) : resolve())));
      }
    } catch {
      // The client went away (abort): stop writing.
    }
  }
  res.end();
}

/** Start `app` on an ephemeral loopback port. */
export async function serve(app: Hono): Promise<Served> {
  let origin = '';
  const server = createServer((req, res) => {
    void toRequest(req, origin)
      .then((request) => app.fetch(request))
      .then((response) => writeResponse(res, response))
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Start the OpenAI fake on loopback (see {@link createOpenAIFake}). */
export async function startOpenAIFake(
  turns: OpenAITurn[] = [],
  opts: { readonly deterministic?: boolean } = {},
): Promise<OpenAIFake> {
  const fake = createOpenAIFake(turns, opts);
  const served = await serve(fake.app);
  return { ...fake, baseURL: `${served.origin}/v1`, close: served.close };
}

/** Start the Anthropic fake on loopback (see {@link createAnthropicFake}). */
export async function startAnthropicFake(
  turns: AnthropicTurn[] = [],
  opts: { readonly deterministic?: boolean } = {},
): Promise<AnthropicFake> {
  const fake = createAnthropicFake(turns, opts);
  const served = await serve(fake.app);
  return { ...fake, baseURL: `${served.origin}/v1`, close: served.close };
}
