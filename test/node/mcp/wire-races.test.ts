/**
 * polyloop/mcp when calls race each other on one connection (one `connectMcp` shared by several
 * runs at once) or race the wire: what goes wrong with one call must not end the others, and a
 * cancelled call must not hold its answer stream open.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { Server } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { run } from '../../../src/core/index.ts';
import { connectMcp, mcpTools } from '../../../src/mcp/index.ts';
import { call, final, mcpAgent } from '../../fixtures/mcp/agent.ts';
import { startMcpFixture } from '../../fixtures/mcp/server.ts';
import type { McpFixture } from '../../fixtures/mcp/server.ts';

let fixture: McpFixture;
beforeAll(async () => {
  fixture = await startMcpFixture();
});
afterAll(() => fixture.close());

it('a call that times out does not fail another run’s call in flight on the same connection', async () => {
  const ns = 'shared1';
  const mcp = await connectMcp({ url: `${fixture.base}/${ns}/good/mcp`, trust: true, timeoutMs: 2_000 });
  const slow = mcpAgent('slow', mcp.registry, [call('hang'), final('x')]);
  const held = mcpAgent('held', mcp.registry, [call('delete_item', { id: 'i1', hold: true }), final('ok')]);
  const slowResult = run(slow.agent, slow.request);
  await expect.poll(() => fixture.counts(ns)['hang']).toBe(1);
  // Started a second later, so its own deadline is a second after the hanging call's.
  await sleep(1_000);
  const heldResult = run(held.agent, held.request);
  await expect.poll(() => fixture.counts(ns)['delete_item']).toBe(1);
  expect((await slowResult).stopReason).toBe('env_error');
  await fetch(`${fixture.base}/${ns}/release`, { method: 'POST' });
  const done = await heldResult;
  expect(done.trajectory[0]).toMatchObject({ actionStatus: 'executed', observation: 'deleted i1' });
  expect(done.stopReason).toBe('final_answer');
  await mcp.close();
});

it('closes a cancelled call’s answer stream even when its response headers arrive after the cancellation', async () => {
  const ns = 'late-headers';
  // The server has the call (and counts it) well before this client sees its response headers.
  const lateHeaders = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    if (typeof init?.body === 'string' && init.body.includes('"tools/call"')) await sleep(300);
    return response;
  };
  const tools = await mcpTools({ url: `${fixture.base}/${ns}/good/mcp`, fetch: lateHeaders });
  const { agent, request } = mcpAgent('late', tools, [call('hang'), final('ok')]);
  const controller = new AbortController();
  const reason = new Error('user cancelled');
  const pending = run(agent, request, { signal: controller.signal });
  await expect.poll(() => fixture.counts(ns)['hang']).toBe(1);
  controller.abort(reason);
  await expect(pending).rejects.toBe(reason);
  await expect
    .poll(
      async () =>
        ((await (await fetch(`${fixture.base}/${ns}/stats`)).json()) as { aborted: Record<string, number> }).aborted[
          'hang'
        ],
      { timeout: 3_000 },
    )
    .toBe(1);
});

/**
 * A stateful server (the SDK's classes, with an event store) whose one tool closes its answer
 * stream first and answers later: the MCP "polling" pattern, where the client resumes the stream
 * with a GET carrying Last-Event-ID.
 */
async function pollingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const events: { id: string; stream: string; message: unknown }[] = [];
  const eventStore = {
    storeEvent: async (stream: string, message: unknown) => {
      const id = `${stream}_${events.length}`;
      events.push({ id, stream, message });
      return id;
    },
    replayEventsAfter: async (lastId: string, { send }: { send: (id: string, message: never) => Promise<void> }) => {
      const from = events.findIndex((e) => e.id === lastId);
      const stream = events[from]!.stream;
      for (const e of events.slice(from + 1)) if (e.stream === stream) await send(e.id, e.message as never);
      return stream;
    },
  };
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const known = sessions.get(String(req.headers['mcp-session-id']));
    if (known) return known.handleRequest(req, res);
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore,
      retryInterval: 50,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    const server = new Server({ name: 'polling', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', () => ({
      tools: [
        { name: 'slow_report', description: 'Answers after closing its stream.', inputSchema: { type: 'object' } },
      ],
    }));
    server.setRequestHandler('tools/call', async (_req, ctx) => {
      ctx.http?.closeSSE?.();
      await sleep(200);
      return { content: [{ type: 'text', text: 'report ready' }] };
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}

it('follows a server that closes a call’s answer stream and answers on the resumed stream (Last-Event-ID)', async () => {
  const server = await pollingServer();
  const mcp = await connectMcp({ url: server.url, timeoutMs: 5_000 });
  const { agent, request } = mcpAgent('poll', mcp.registry, [call('slow_report'), final('ok')]);
  const started = Date.now();
  const result = await run(agent, request);
  expect(result.trajectory[0]).toMatchObject({ actionStatus: 'executed', observation: 'report ready' });
  expect(Date.now() - started).toBeLessThan(4_000);
  await mcp.close();
  await server.close();
});

it('close() takes connectMcp’s listener off a long-lived signal, so a closed connection is not kept reachable by it', async () => {
  const app = new AbortController();
  for (let i = 0; i < 3; i++) {
    const mcp = await connectMcp({ url: `${fixture.base}/closing${i}/good/mcp`, signal: app.signal });
    await mcp.close();
  }
  expect(EventEmitter.getEventListeners(app.signal, 'abort')).toHaveLength(0);
});
