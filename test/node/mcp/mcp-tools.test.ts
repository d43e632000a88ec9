/**
 * polyloop/mcp against a real MCP server (the SDK's server classes on 127.0.0.1): the tool list,
 * full agent runs, and what a trust decision changes after a crash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryStore, isPolyLoopError, resume, run } from '../../../src/core/index.ts';
import type { InputReply, RunStore } from '../../../src/core/index.ts';
import { connectMcp, mcpTools } from '../../../src/mcp/index.ts';
import type { McpToolsOptions } from '../../../src/mcp/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { call, FULL_RUN, final, mcpAgent } from '../../fixtures/mcp/agent.ts';
import { startMcpFixture } from '../../fixtures/mcp/server.ts';
import type { McpFixture } from '../../fixtures/mcp/server.ts';

let fixture: McpFixture;
beforeAll(async () => {
  fixture = await startMcpFixture();
});
afterAll(() => fixture.close());

let nsSeq = 0;
/** A fresh namespace on the fixture (its own call counts) and its URL for `flavour`. */
function server(flavour = 'good'): { ns: string; url: string } {
  const ns = `n${++nsSeq}`;
  return { ns, url: `${fixture.base}/${ns}/${flavour}/mcp` };
}

describe('the tool list', () => {
  it('lists every page of tools as specs with the server’s names, descriptions and schemas', async () => {
    const { url } = server();
    const mcp = await connectMcp({ url });
    expect(mcp.registry.names()).toEqual([
      'lookup',
      'set_flag',
      'delete_item',
      'fail',
      'hang',
      'mixed',
      'big',
      'drop',
      'protocol_error',
    ]);
    expect(mcp.registry.get('lookup')).toMatchObject({
      description: 'Look a key up (read-only).',
      parameters: { type: 'object', required: ['key'] },
    });
    await mcp.close();
  });

  it('makes every tool of an untrusted server never-replayed, whatever its annotations say', async () => {
    const tools = await mcpTools({ url: server().url });
    expect(tools.names().map((n) => tools.get(n)?.replayPolicy)).toEqual(Array(9).fill('never'));
  });

  it('takes read-only and idempotent non-destructive tools as safe only from a trusted server', async () => {
    const tools = await mcpTools({ url: server().url, trust: true });
    const safe = tools.names().filter((n) => tools.get(n)?.replayPolicy === 'safe');
    expect(safe).toEqual(['lookup', 'set_flag', 'hang', 'big']);
  });

  it('lets the user override a tool’s policy and approval, and asks approval for destructive tools when told to', async () => {
    const tools = await mcpTools({
      url: server().url,
      trust: true,
      needsApproval: 'destructive',
      tools: { fail: { replayPolicy: 'safe', needsApproval: false } },
    });
    const approval = tools.names().filter((n) => tools.get(n)?.needsApproval);
    expect(approval).toEqual(['delete_item', 'mixed', 'drop', 'protocol_error']);
    expect(tools.get('fail')?.replayPolicy).toBe('safe');
    const untrusted = await mcpTools({ url: server().url, needsApproval: 'destructive' });
    expect(untrusted.names().every((n) => untrusted.get(n)?.needsApproval)).toBe(true);
  });

  it('prefixes names and keeps only the included tools, refusing a name the server does not list', async () => {
    const tools = await mcpTools({ url: server().url, prefix: 'fx_', include: ['lookup', 'fail'] });
    expect(tools.names()).toEqual(['fx_lookup', 'fx_fail']);
    await expect(mcpTools({ url: server().url, include: ['nope'] })).rejects.toThrow(/no tool named "nope"/);
    await expect(mcpTools({ url: server().url, tools: { nope: { replayPolicy: 'safe' } } })).rejects.toThrow(
      /no tool named "nope"/,
    );
  });

  it('refuses options that are not what they claim to be, before connecting', async () => {
    const bad: unknown[] = [
      { url: 'not a url' },
      { url: 'file:///x' },
      { url: server().url, trust: 'yes' },
      { url: server().url, maxResultChars: 0 },
    ];
    for (const o of bad)
      await expect(mcpTools(o as McpToolsOptions)).rejects.toSatisfy((e) => isPolyLoopError(e, 'invalid_request'));
  });

  it('fails with ToolEnvironmentError naming the server when nothing listens there', async () => {
    const url = 'http://127.0.0.1:9/mcp';
    await expect(mcpTools({ url })).rejects.toSatisfy(
      (e) => isPolyLoopError(e, 'tool_environment') && e.message.includes(url),
    );
  });
});

describe('a full agent run', () => {
  it('runs every kind of tool to the final answer, with observations the model can read', async () => {
    const { ns, url } = server();
    const mcp = await connectMcp({ url, trust: true });
    const { agent, request } = mcpAgent('full', mcp.registry, FULL_RUN.script);
    const result = await run(agent, request);
    await mcp.close();
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'done', validActions: 6 });
    expect(result.trajectory.slice(0, 6).map((s) => s.observation)).toEqual(FULL_RUN.observations);
    expect(result.trajectory.slice(0, 6).map((s) => s.actionStatus)).toEqual(Array(6).fill('executed'));
    expect(fixture.counts(ns)).toEqual(FULL_RUN.counts);
  });
});

/** The index of the write that records the first step, with its action's outcome (the tool ran just before it). */
async function firstStepWrite(build: (store: RunStore) => ReturnType<typeof mcpAgent>): Promise<number> {
  const counting = faultyStore(new InMemoryStore(), { crashAfterWrites: Number.POSITIVE_INFINITY });
  const { agent, request } = build(counting);
  await run(agent, request);
  return counting.writes.findIndex((w) => w.method === 'step');
}

describe('a crash while a tool is in flight', () => {
  async function crashInFlight(tool: string, opts: Omit<McpToolsOptions, 'url'>) {
    const script = [call(tool, tool === 'lookup' ? { key: 'k' } : { id: 'i1' }), final('ok')];
    const reference = server();
    const refTools = await mcpTools({ url: reference.url, ...opts });
    const at = await firstStepWrite((store) => mcpAgent('ref', refTools, script, store));
    const { ns, url } = server();
    const inner = new InMemoryStore();
    const tools = await mcpTools({ url, ...opts });
    const crashed = mcpAgent('c1', tools, script, faultyStore(inner, { crashAfterWrites: at }));
    await expect(run(crashed.agent, crashed.request)).rejects.toThrow(/simulated crash/);
    expect(fixture.counts(ns)[tool]).toBe(1);
    // A new process: the tools listed again, the run resumed from the log the crash left.
    const again = mcpAgent('c1', await mcpTools({ url, ...opts }), script, inner);
    return { ns, again, result: await resume(again.agent, again.request) };
  }

  it('asks to settle a destructive call of a trusted server and never calls it again', async () => {
    const { ns, again, result } = await crashInFlight('delete_item', { trust: true });
    expect(result.stopReason).toBe('awaiting_input');
    expect(result.pending).toMatchObject({ kind: 'settle', target: 'action' });
    const reply: InputReply = {
      kind: 'executed',
      resultId: result.pending!.resultId,
      observation: 'deleted i1 (seen in the admin page)',
    };
    const done = await resume(again.agent, again.request, { input: reply });
    expect(done).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'ok' });
    expect(fixture.counts(ns)['delete_item']).toBe(1);
  });

  it('calls a read-only tool of a trusted server again after the crash', async () => {
    const { ns, result } = await crashInFlight('lookup', { trust: true });
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'ok' });
    expect(fixture.counts(ns)['lookup']).toBe(2);
  });

  it('does not call a read-only tool of an untrusted server again: it asks to settle', async () => {
    const { ns, result } = await crashInFlight('lookup', {});
    expect(result).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'settle' } });
    expect(fixture.counts(ns)['lookup']).toBe(1);
  });
});

describe('a server whose tools changed', () => {
  it('makes resume fail with RunIdentityMismatchError instead of running a different tool', async () => {
    const first = server();
    const store = new InMemoryStore();
    const approve = await mcpTools({ url: first.url, needsApproval: true });
    const paused = mcpAgent('changed', approve, [call('lookup', { key: 'a' }), final('x')], store);
    expect((await run(paused.agent, paused.request)).stopReason).toBe('awaiting_input');
    const changed = await mcpTools({ url: `${fixture.base}/${first.ns}/changed/mcp`, needsApproval: true });
    const again = mcpAgent('changed', changed, [call('lookup', { key: 'a' }), final('x')], store);
    const error = await resume(again.agent, again.request).catch((e: unknown) => e);
    expect(isPolyLoopError(error, 'run_identity_mismatch')).toBe(true);
    expect((error as { differingKeys: string[] }).differingKeys).toEqual(['tools[lookup].description']);
    expect(fixture.counts(first.ns)['lookup']).toBeUndefined();
  });
});
