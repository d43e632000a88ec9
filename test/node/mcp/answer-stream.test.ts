/**
 * polyloop/mcp when a call's answer stream cannot bring the answer: it ends cleanly without one,
 * answers another request, is a 202, or cannot be resumed. The call fails at once with env_error
 * (the SDK alone would wait for `timeoutMs`), while the protocol's own cases still work: messages
 * the server sends before the answer, and a stream closed on purpose and resumed with
 * Last-Event-ID (the polling pattern), again and again.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { run } from '../../../src/core/index.ts';
import type { RunResult } from '../../../src/core/index.ts';
import { connectMcp } from '../../../src/mcp/index.ts';
import { call, final, mcpAgent } from '../../fixtures/mcp/agent.ts';
import { event, sse, startRawMcp, textResult } from './raw-server.ts';
import type { RawCall, RawHandlers, RawServer } from './raw-server.ts';

const servers: RawServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/**
 * One run calling `report` once on a server answering as `handlers` say. `timeoutMs` is far longer
 * than the test's own timeout: a call that waits for it instead of failing at once fails the test.
 */
async function reportRun(handlers: RawHandlers, runId: string): Promise<{ result: RunResult; server: RawServer }> {
  const server = await startRawMcp(handlers);
  servers.push(server);
  const mcp = await connectMcp({ url: server.url, timeoutMs: 120_000 });
  const { agent, request } = mcpAgent(runId, mcp.registry, [call('report'), final('done')]);
  const result = await run(agent, request);
  await mcp.close();
  return { result, server };
}

const log = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } };
const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } };

it('fails the call at once with env_error when its answer stream ends without an answer', async () => {
  const unanswered: RawHandlers = { call: (_c, res) => (sse(res, event(log)), res.end()) };
  const { result, server } = await reportRun(unanswered, 'ends-unanswered');
  expect(result.stopReason).toBe('env_error');
  expect(result.trajectory[0]?.actionStatus).toBe('env_error');
  const why = 'ToolEnvironmentError: the answer stream ended without an answer';
  expect(result.error).toBe(`MCP server ${server.url}: tools/call "report" failed (${why})`);
});

it('fails the call at once when its answer stream answers another request only', async () => {
  const another: RawHandlers = {
    call: (c, res) => (sse(res, event(textResult(Number(c.id) + 100, 'not yours'))), res.end()),
  };
  const { result } = await reportRun(another, 'other-id');
  expect(result.stopReason).toBe('env_error');
  expect(result.error).toMatch(/the answer stream answered another request \(id \d+\), not this one/);
});

it('fails the call at once when a JSON answer answers another request only', async () => {
  const other = (_c: RawCall, res: ServerResponse): void =>
    void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(textResult('x', 'not yours')));
  const { result } = await reportRun({ call: other }, 'json-other-id');
  expect(result.stopReason).toBe('env_error');
  expect(result.error).toMatch(/answered another request \(id "x"\)/);
});

it('fails the call at once when the server accepts it with 202 and no answer', async () => {
  const { result } = await reportRun({ call: (_c, res) => void res.writeHead(202).end() }, 'accepted');
  expect(result.stopReason).toBe('env_error');
  expect(result.error).toMatch(/accepted the request \(HTTP 202\) without answering it/);
});

it('reads the answer that follows notifications and a request of the server’s own with the same id', async () => {
  const answer = (c: RawCall, res: ServerResponse): void => {
    // The server's request ids are its own: one equal to the call's id is not an answer to it.
    sse(res, event(log) + event(progress) + event({ jsonrpc: '2.0', id: c.id, method: 'ping' }));
    setTimeout(() => (sse(res, event(textResult(c.id, 'report ready'))), res.end()), 50);
  };
  const { result } = await reportRun({ call: answer }, 'chatty');
  expect(result.stopReason).toBe('final_answer');
  expect(result.trajectory[0]).toMatchObject({ actionStatus: 'executed', observation: 'report ready' });
});

/** A server that closes the call's stream after an event id and answers on the second resumption. */
function polling(resumed: (id: string, res: ServerResponse, answer: (text: string) => void) => void): RawHandlers {
  let callId: number | string = -1;
  return {
    call: (c, res) => {
      callId = c.id;
      sse(res, 'retry: 10\nid: e1\ndata: \n\n');
      res.end();
    },
    resume: (id, res) => resumed(id, res, (text) => (sse(res, event(textResult(callId, text), 'e3')), res.end())),
  };
}

it('follows a stream closed on purpose and resumed twice (Last-Event-ID), and answers on the last', async () => {
  const handlers = polling((id, res, answer) => {
    if (id === 'e1') return (sse(res, event(log, 'e2')), res.end()); // closed again: still no answer
    answer('answered after two polls');
  });
  const { result, server } = await reportRun(handlers, 'polled');
  expect(result.trajectory[0]).toMatchObject({ actionStatus: 'executed', observation: 'answered after two polls' });
  expect(server.seen.filter((s) => s.method === 'GET').map((s) => s.lastEventId)).toEqual(['e1', 'e2']);
});

it('fails the call at once when a resumed stream ends with no answer and no event id to resume from', async () => {
  const noId = polling((_id, res) => (sse(res, `data: ${JSON.stringify(log)}\n\n`), res.end()));
  const { result } = await reportRun(noId, 'resumed-empty');
  expect(result.stopReason).toBe('env_error');
  expect(result.error).toMatch(/the resumed answer stream ended without an answer or an event id to resume from/);
});

it('fails the call when its answer stream cannot be resumed, after as many tries as the client makes', async () => {
  const { result, server } = await reportRun(
    polling((_id, res) => void res.writeHead(404).end()),
    'resume-refused',
  );
  expect(result.stopReason).toBe('env_error');
  expect(result.error).toMatch(/the answer stream could not be resumed \(HTTP 404\)/);
  expect(server.seen.filter((s) => s.method === 'GET')).toHaveLength(2);
});

it('fails only the call whose stream ended unanswered, and keeps the connection for the others', async () => {
  let release = (): void => undefined;
  const handlers: RawHandlers = {
    tools: [
      { name: 'held', inputSchema: { type: 'object' } },
      { name: 'report', inputSchema: { type: 'object' } },
    ],
    call: (c, res) => {
      sse(res);
      if (c.name === 'report') return void res.end();
      release = () => (sse(res, event(textResult(c.id, 'held done'))), res.end());
    },
  };
  const server = await startRawMcp(handlers);
  servers.push(server);
  const mcp = await connectMcp({ url: server.url, timeoutMs: 120_000 });
  const held = mcpAgent('held', mcp.registry, [call('held'), final('ok')]);
  const heldResult = run(held.agent, held.request);
  await expect.poll(() => server.seen.filter((s) => s.rpc === 'tools/call').length).toBe(1);
  const failing = mcpAgent('failing', mcp.registry, [call('report'), final('never')]);
  expect((await run(failing.agent, failing.request)).stopReason).toBe('env_error');
  release();
  expect((await heldResult).trajectory[0]).toMatchObject({ actionStatus: 'executed', observation: 'held done' });
  expect(server.seen.filter((s) => s.rpc === 'initialize')).toHaveLength(1);
  await mcp.close();
});
