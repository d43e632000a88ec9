/**
 * polyloop/mcp against servers that misbehave: names that collide, a schema that is not JSON
 * Schema, a connection dropped mid-call, a result of 10 MB, a tool that never answers. Each ends
 * in a clear error or outcome, and nothing hangs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPolyLoopError, run, ToolRegistry } from '../../../src/core/index.ts';
import { connectMcp, mcpTools } from '../../../src/mcp/index.ts';
import { call, final, mcpAgent } from '../../fixtures/mcp/agent.ts';
import { startMcpFixture } from '../../fixtures/mcp/server.ts';
import type { McpFixture } from '../../fixtures/mcp/server.ts';

let fixture: McpFixture;
beforeAll(async () => {
  fixture = await startMcpFixture();
});
afterAll(() => fixture.close());

let nsSeq = 0;
function server(flavour = 'good'): { ns: string; url: string } {
  const ns = `h${++nsSeq}`;
  return { ns, url: `${fixture.base}/${ns}/${flavour}/mcp` };
}

describe('names that collide', () => {
  it('refuses a server that lists one name twice, naming the server and the name', async () => {
    const { url } = server('dup');
    const error = await mcpTools({ url }).catch((e: unknown) => e);
    expect(isPolyLoopError(error, 'invalid_request')).toBe(true);
    expect((error as Error).message).toBe(`MCP server ${url}: duplicate tool name "lookup"`);
  });

  it('refuses to merge two servers whose tools share a name, and merges them under prefixes', async () => {
    const a = await connectMcp({ url: server().url });
    const b = await connectMcp({ url: server().url });
    expect(() => ToolRegistry.of([...a.specs, ...b.specs])).toThrow(/duplicate tool name "lookup"/);
    const c = await connectMcp({ url: server().url, prefix: 'b_' });
    expect(ToolRegistry.of([...a.specs, ...c.specs]).names()).toContain('b_lookup');
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it('refuses a prefix that makes one server’s tool collide with another’s own name', async () => {
    const plain = await connectMcp({ url: server('empty').url });
    const prefixed = await connectMcp({ url: server().url, prefix: 'look', include: ['lookup'] });
    const local = {
      name: 'looklookup',
      description: 'A local tool.',
      parameters: { type: 'object' },
      handler: async () => 'x',
    };
    expect(() => ToolRegistry.of([local, ...plain.specs, ...prefixed.specs])).toThrow(
      /duplicate tool name "looklookup"/,
    );
    await Promise.all([plain.close(), prefixed.close()]);
  });
});

it('refuses a tool whose parameter schema is not JSON Schema, naming the server and the tool', async () => {
  const { url } = server('badschema');
  const error = await mcpTools({ url }).catch((e: unknown) => e);
  expect(isPolyLoopError(error, 'invalid_request')).toBe(true);
  expect((error as Error).message).toMatch(new RegExp(`^MCP server ${url}: tool "broken": `));
  // The rest of that server stays usable by leaving the broken tool out.
  expect((await mcpTools({ url, include: ['lookup'] })).names()).toEqual(['lookup']);
});

describe('a call that goes wrong on the wire', () => {
  it('ends the run with env_error when the server drops the connection mid-call, and the next call connects anew', async () => {
    const { ns, url } = server();
    const mcp = await connectMcp({ url, trust: true });
    const started = Date.now();
    const { agent, request } = mcpAgent('drop', mcp.registry, [call('drop'), final('never')]);
    const result = await run(agent, request);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.stopReason).toBe('env_error');
    expect(result.trajectory[0]?.actionStatus).toBe('env_error');
    expect(result.error).toMatch(new RegExp(`MCP server ${url}: tools/call "drop" failed`));
    const again = mcpAgent('after-drop', mcp.registry, [call('lookup', { key: 'z' }), final('ok')]);
    expect(await run(again.agent, again.request)).toMatchObject({ stopReason: 'final_answer' });
    expect(fixture.counts(ns)).toEqual({ drop: 1, lookup: 1 });
    await mcp.close();
  });

  it('cuts a 10 MB result to maxResultChars with a marker saying how much is left out', async () => {
    const tools = await mcpTools({ url: server().url, maxResultChars: 1_000 });
    const { agent, request } = mcpAgent('big', tools, [call('big', { mb: 10 }), final('ok')]);
    const result = await run(agent, request);
    const seen = result.trajectory[0]?.observation ?? '';
    expect(result.stopReason).toBe('final_answer');
    expect(seen.length).toBeLessThanOrEqual(1_000);
    expect(seen).toMatch(/^x+\n\[… truncated: \d+ of 10485760 characters not shown\]$/);
  });

  it('fails a call whose response is larger than maxResponseBytes with env_error, before reading it all', async () => {
    const tools = await mcpTools({ url: server().url, maxResponseBytes: 1024 * 1024 });
    const { agent, request } = mcpAgent('too-big', tools, [call('big', { mb: 10 }), final('ok')]);
    const result = await run(agent, request);
    expect(result.stopReason).toBe('env_error');
    expect(result.error).toMatch(/larger than 1048576 bytes \(maxResponseBytes\)/);
  });

  it('gives up on a tool that never answers after timeoutMs, with env_error', async () => {
    const tools = await mcpTools({ url: server().url, timeoutMs: 1_500 });
    const { agent, request } = mcpAgent('slow', tools, [call('hang'), final('ok')]);
    const result = await run(agent, request);
    expect(result.stopReason).toBe('env_error');
    expect(result.error).toMatch(/tools\/call "hang" failed/);
  });

  it('stops waiting for a hanging tool when the run is cancelled, and the server hears of it', async () => {
    const { ns, url } = server();
    const tools = await mcpTools({ url });
    const { agent, request } = mcpAgent('cancel', tools, [call('hang'), final('ok')]);
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
      )
      .toBe(1);
  });

  it('ends the run with env_error when the server is gone by the time a tool is called', async () => {
    const gone = await startMcpFixture();
    const tools = await mcpTools({ url: `${gone.base}/g/good/mcp` });
    await gone.close();
    const { agent, request } = mcpAgent('gone', tools, [call('lookup', { key: 'a' }), final('ok')]);
    const result = await run(agent, request);
    expect(result.stopReason).toBe('env_error');
    expect(result.error).toMatch(/^MCP server http:\/\/127\.0\.0\.1:\d+\/g\/good\/mcp: tools\/call "lookup" failed/);
  });
});
