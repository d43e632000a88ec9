/**
 * An MCP server written against the Streamable HTTP wire format by hand, for answers the SDK's own
 * server classes never send: streams that end unanswered, answers to other ids, 202 to a request,
 * nesting no serializer would write, names no provider takes. `initialize`, notifications,
 * `tools/list` and the client's own responses are answered as the protocol says (stateless:
 * no session id); `tools/call` and resumed streams (GET with Last-Event-ID) are the test's.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A `tools/call` request as it arrived. */
export type RawCall = {
  readonly id: number | string;
  readonly name: string;
  readonly arguments: Record<string, unknown>;
};

/** What the test decides: how to answer a call, and a resumed stream. */
export type RawHandlers = {
  readonly tools?: readonly Record<string, unknown>[];
  readonly call: (call: RawCall, res: ServerResponse) => void;
  readonly resume?: (lastEventId: string, res: ServerResponse) => void;
};

/** One request the server saw. */
export type Seen = { readonly method: string; readonly rpc: string | null; readonly lastEventId: string | null };

export type RawServer = { readonly url: string; readonly seen: Seen[]; close(): Promise<void> };

const DEFAULT_TOOLS = [{ name: 'report', description: 'Answers as the test says.', inputSchema: { type: 'object' } }];

/** Open an event stream on `res` and write `text` to it (whole events, each ending in a blank line). */
export function sse(res: ServerResponse, text = ''): void {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (text !== '') res.write(text);
}

/** One `message` event carrying `message` as JSON, with an event id when given. */
export const event = (message: unknown, id?: string): string =>
  `${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(message)}\n\n`;

/** A JSON-RPC result with the given text. */
export const textResult = (id: unknown, text: string): unknown => ({
  jsonrpc: '2.0',
  id,
  result: { content: [{ type: 'text', text }] },
});

type Message = { id?: number | string; method?: string; params?: Record<string, unknown> };

/** Answer `res` with `body` as JSON. */
const sendJson = (res: ServerResponse, body: unknown): void =>
  void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

async function bodyOf(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

/** Start the server on a random loopback port. */
export async function startRawMcp(handlers: RawHandlers): Promise<RawServer> {
  const seen: Seen[] = [];
  const http = createServer(async (req, res) => {
    const lastEventId = typeof req.headers['last-event-id'] === 'string' ? req.headers['last-event-id'] : null;
    if (req.method === 'GET') {
      seen.push({ method: 'GET', rpc: null, lastEventId });
      if (lastEventId === null || !handlers.resume) return void res.writeHead(405).end();
      return handlers.resume(lastEventId, res);
    }
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const message = JSON.parse(await bodyOf(req)) as Message;
    seen.push({ method: 'POST', rpc: message.method ?? null, lastEventId });
    // A notification, or the client's answer to a request the server sent: accepted, nothing to say.
    if (message.id === undefined || message.method === undefined) return void res.writeHead(202).end();
    const json = (answer: unknown): void => sendJson(res, { jsonrpc: '2.0', id: message.id, result: answer });
    const params = message.params ?? {};
    if (message.method === 'initialize') {
      const serverInfo = { name: 'raw', version: '1.0.0' };
      return json({ protocolVersion: params['protocolVersion'], capabilities: { tools: {} }, serverInfo });
    }
    if (message.method === 'tools/list') return json({ tools: handlers.tools ?? DEFAULT_TOOLS });
    if (message.method === 'tools/call') {
      const args = (params['arguments'] ?? {}) as Record<string, unknown>;
      return handlers.call({ id: message.id, name: String(params['name']), arguments: args }, res);
    }
    sendJson(res, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no such method' } });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}
