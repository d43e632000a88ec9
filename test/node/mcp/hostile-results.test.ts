/**
 * polyloop/mcp against what a server may list or answer that no model could take: structured
 * content nested deeper than any value the library keeps, and tool names model providers refuse
 * (with or without a prefix).
 */
import type { ServerResponse } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { isPolyLoopError, run } from '../../../src/core/index.ts';
import type { RunResult } from '../../../src/core/index.ts';
import { connectMcp, mcpTools } from '../../../src/mcp/index.ts';
import { call, final, mcpAgent } from '../../fixtures/mcp/agent.ts';
import { startRawMcp } from './raw-server.ts';
import type { RawCall, RawServer } from './raw-server.ts';

const servers: RawServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** `levels` objects nested in each other, as JSON text (no serializer needed to write it). */
const nested = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** A server whose one tool answers the JSON-RPC `result` text `resultJson`. */
async function answering(resultJson: (c: RawCall) => string, tools?: Record<string, unknown>[]): Promise<RawServer> {
  const server = await startRawMcp({
    ...(tools ? { tools } : {}),
    call: (c, res: ServerResponse) => {
      const body = `{"jsonrpc":"2.0","id":${JSON.stringify(c.id)},"result":${resultJson(c)}}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    },
  });
  servers.push(server);
  return server;
}

async function reportOnce(server: RawServer, runId: string): Promise<RunResult> {
  const mcp = await connectMcp({ url: server.url });
  const { agent, request } = mcpAgent(runId, mcp.registry, [call('report'), final('done')]);
  const result = await run(agent, request);
  await mcp.close();
  return result;
}

it('ends the run with env_error, saying why, when structured content is nested too deep to show', async () => {
  const server = await answering(() => `{"content":[],"structuredContent":${nested(5_000)}}`);
  const result = await reportOnce(server, 'deep');
  expect(result.stopReason).toBe('env_error');
  expect(result.trajectory[0]?.actionStatus).toBe('env_error');
  const why = 'structured content nested more than 100 levels deep, which cannot be shown to the model';
  expect(result.error).toBe(`MCP server ${server.url}: tools/call "report" answered ${why}`);
});

it('shows structured content of 100 levels and refuses 101, the depth limit of every value kept', async () => {
  const at = (levels: number) => answering(() => `{"content":[],"structuredContent":${nested(levels)}}`);
  const deepest = await reportOnce(await at(100), 'deepest');
  expect(deepest.trajectory[0]).toMatchObject({ actionStatus: 'executed', observation: nested(100) });
  expect((await reportOnce(await at(101), 'too-deep')).stopReason).toBe('env_error');
});

it('shows text content whatever is nested beside it, since only the parts’ own fields are read', async () => {
  const server = await answering(() => `{"content":[{"type":"text","text":"plain","_meta":${nested(5_000)}}]}`);
  const step = (await reportOnce(server, 'deep-meta')).trajectory[0];
  expect(step).toMatchObject({ actionStatus: 'executed', observation: 'plain' });
});

const named = (...names: string[]) => names.map((name) => ({ name, inputSchema: { type: 'object' } }));

it('refuses a server listing a tool name providers refuse, naming the tool; include takes the rest', async () => {
  for (const bad of ['read.file', 'read file', 'lire_fiché', 'x'.repeat(65)]) {
    const server = await answering(() => '{}', named('ok_tool', bad));
    const error = await mcpTools({ url: server.url }).catch((e: unknown) => e);
    expect(isPolyLoopError(error, 'invalid_request')).toBe(true);
    expect((error as Error).message).toBe(
      `MCP server ${server.url}: tool ${JSON.stringify(bad)} has a name model providers refuse ` +
        '(only letters, digits, _ and -, at most 64 characters); leave it out with include',
    );
    expect((await mcpTools({ url: server.url, include: ['ok_tool'] })).names()).toEqual(['ok_tool']);
  }
});

it('refuses a tool whose name only the prefix makes too long, naming it as the model would see it', async () => {
  const long = 'y'.repeat(60);
  const server = await answering(() => '{}', named(long));
  expect((await mcpTools({ url: server.url, prefix: 'abc_' })).names()).toEqual([`abc_${long}`]);
  const refused = `tool ${JSON.stringify(long)} has a name model providers refuse (as "abcde_${long}": `;
  await expect(mcpTools({ url: server.url, prefix: 'abcde_' })).rejects.toThrow(refused);
});

it('refuses a prefix with a character model providers refuse in a tool name, before connecting', async () => {
  for (const prefix of ['files.', 'files/', 'fichiers→']) {
    const error = await mcpTools({ url: 'http://127.0.0.1:9/mcp', prefix }).catch((e: unknown) => e);
    expect(isPolyLoopError(error, 'invalid_request')).toBe(true);
    const rule = 'only letters, digits, _ and - (model providers refuse any other character in a tool name)';
    expect((error as Error).message).toBe(`mcpTools: prefix may hold ${rule}, got ${JSON.stringify(prefix)}`);
  }
});
