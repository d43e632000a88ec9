/**
 * polyloop/mcp when calls race each other on one connection (one `connectMcp` shared by several
 * runs at once) or race the wire: what goes wrong with one call must not end the others, and a
 * cancelled call must not hold its answer stream open.
 */
import { setTimeout as sleep } from 'node:timers/promises';
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
  await expect.poll(async () => ((await (await fetch(`${fixture.base}/${ns}/stats`)).json()) as { aborted: Record<string, number> }).aborted['hang'], { timeout: 3_000 }).toBe(1);
});
