/**
 * Several open input requests over HTTP in workerd (docs/http.md#post-runsidinput): a run whose step holds
 * several calls that each need approval shows every open request on `GET /runs/:id`, takes a reply to any
 * of them on `POST /runs/:id/input` (in any order), refuses a foreign resultId naming every open one, and
 * is ended by a cancel while it waits for several.
 */
import { describe, expect, it } from 'vitest';
import { call, status, waitFor } from './http.ts';
import type { Status } from './http.ts';

const PROBES = '/probes';

async function startSeveral(goal: string): Promise<string> {
  const runId = `several-${crypto.randomUUID()}`;
  const res = await call(`${PROBES}/runs`, {
    method: 'POST',
    body: JSON.stringify({ runId, input: { goal, approve: true, several: true, fault: 'none' } }),
  });
  if (res.status !== 201) throw new Error(`start failed: ${res.status} ${await res.text()}`);
  return runId;
}

const reply = (runId: string, body: unknown): Promise<Response> =>
  call(`${PROBES}/runs/${runId}/input`, { method: 'POST', body: JSON.stringify(body) });

const openIds = (s: Status): string[] => (s.openRequests ?? []).map((r) => r.resultId);

const waitOpen = (runId: string, ids: string[]): Promise<Status> =>
  waitFor(
    runId,
    (s) => s.status === 'awaiting_input' && JSON.stringify(openIds(s)) === JSON.stringify(ids),
    15_000,
    PROBES,
  );

describe('a run awaiting several requests (workerd)', () => {
  it('shows every open request with its action, takes the second approval first, then the first, and the run goes on with both calls', async () => {
    const runId = await startSeveral('ab cd');
    const waiting = await waitOpen(runId, ['s0.a0.input', 's0.a1.input']);
    expect(waiting.pending).toMatchObject({ resultId: 's0.a0.input', kind: 'approval' });
    expect(waiting.openRequests.map((r) => r.decision)).toMatchObject([
      { action: { kind: 'tool_call', name: 'reverse_word', arguments: { word: 'ab' } } },
      { action: { kind: 'tool_call', name: 'reverse_word', arguments: { word: 'cd' } } },
    ]);
    const second = await reply(runId, { kind: 'approve', resultId: 's0.a1.input' });
    expect(second.status).toBe(202);
    expect(await second.json()).toEqual({ runId, resultId: 's0.a1.input' });
    const left = await waitOpen(runId, ['s0.a0.input']);
    expect(left.pending?.resultId).toBe('s0.a0.input');
    expect((await reply(runId, { kind: 'approve', resultId: 's0.a0.input' })).status).toBe(202);
    const done = await waitFor(runId, (s) => s.status === 'ended', 15_000, PROBES);
    expect(done).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'ba dc', validActions: 2, pending: null });
    expect(done.openRequests).toEqual([]);
    const { steps } = (await (await call(`${PROBES}/runs/${runId}/trajectory`)).json()) as {
      steps: { calls?: { resultId: string; status: string }[] }[];
    };
    expect(steps[0]?.calls?.map((c) => [c.resultId, c.status])).toEqual([
      ['s0.a0', 'executed'],
      ['s0.a1', 'executed'],
    ]);
  });

  it('lands two replies sent at once to two open requests (202 each), and the run goes on with both calls', async () => {
    const runId = await startSeveral('ab cd');
    await waitOpen(runId, ['s0.a0.input', 's0.a1.input']);
    const [first, second] = await Promise.all([
      reply(runId, { kind: 'approve', resultId: 's0.a0.input' }),
      reply(runId, { kind: 'deny', resultId: 's0.a1.input', reason: 'Not that one.' }),
    ]);
    expect([first?.status, second?.status]).toEqual([202, 202]);
    const done = await waitFor(runId, (s) => s.status === 'ended', 15_000, PROBES);
    expect(done).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'ba Not that one.', validActions: 1 });
  });

  it('refuses a reply to no open request with a 409 naming every open one, and writes nothing', async () => {
    const runId = await startSeveral('ab cd');
    await waitOpen(runId, ['s0.a0.input', 's0.a1.input']);
    const before = await (await call(`${PROBES}/runs/${runId}/log`)).text();
    const res = await reply(runId, { kind: 'approve', resultId: 's0.a7.input' });
    expect(res.status).toBe(409);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('"s0.a0.input"');
    expect(error.message).toContain('"s0.a1.input"');
    expect(error.message).toContain('"s0.a7.input"');
    expect(await (await call(`${PROBES}/runs/${runId}/log`)).text()).toBe(before);
    const answer = await reply(runId, { kind: 'answer', resultId: 's0.a1.input', text: 'x' });
    expect(answer.status).toBe(400);
    expect(await (await call(`${PROBES}/runs/${runId}/log`)).text()).toBe(before);
  });

  it('ends a run waiting for several requests on POST /runs/:id/cancel, also after one of them was answered', async () => {
    const runId = await startSeveral('ab cd ef');
    await waitOpen(runId, ['s0.a0.input', 's0.a1.input', 's0.a2.input']);
    expect((await reply(runId, { kind: 'deny', resultId: 's0.a2.input', reason: 'No.' })).status).toBe(202);
    await waitOpen(runId, ['s0.a0.input', 's0.a1.input']);
    expect((await call(`${PROBES}/runs/${runId}/cancel`, { method: 'POST' })).status).toBe(202);
    const done = await waitFor(runId, (s) => s.status === 'ended', 15_000, PROBES);
    expect(done).toMatchObject({ stopReason: 'cancelled', validActions: 0, pending: null });
    expect(done.openRequests).toEqual([]);
    expect((await status(runId, PROBES)).status).toBe('ended');
  });
});
