/**
 * `GET /runs` in workerd: the run index lists runs newest first, page by page, each with the
 * status its run object last reported (created, imported, awaiting input, going on after a
 * reply, ended); and a cancel of an ended run is a 409.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, exportRun, InMemoryStore, run } from '../../src/core/index.ts';
import { faultyStore } from '../../src/testing/index.ts';
import { demoSetup } from '../../examples/workers/demo-agent.ts';
import { call, startRun, waitFor } from './http.ts';

type Item = { runId: string; status: string; stopReason: string | null; createdAt: string; updatedAt: string };
type Page = { runs: Item[]; nextCursor: string | null };

const uid = (p: string): string => `${p}-${crypto.randomUUID()}`;

async function page(query = ''): Promise<Page> {
  const res = await call(`/runs${query}`);
  if (res.status !== 200) throw new Error(`list failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Page;
}

/** Every listed run, following nextCursor with pages of `limit`. */
async function everything(limit: number): Promise<{ items: Item[]; pages: number }> {
  const items: Item[] = [];
  let pages = 0;
  for (let cursor: string | null = null; ; ) {
    const p = await page(`?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    pages++;
    expect(p.runs.length).toBeLessThanOrEqual(limit);
    items.push(...p.runs);
    if (p.nextCursor === null) return { items, pages };
    cursor = p.nextCursor;
  }
}

/** The listing's entry for `runId` once `done` holds for it (reports follow the log writes). */
async function listedAs(runId: string, done: (i: Item) => boolean): Promise<Item> {
  for (const until = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 25))) {
    const item = (await everything(100)).items.find((i) => i.runId === runId);
    if (item !== undefined && done(item)) return item;
    if (Date.now() > until) throw new Error(`${runId} never listed as wanted: ${JSON.stringify(item)}`);
  }
}

describe('GET /runs (workerd)', () => {
  it('lists a run as soon as POST /runs answered 201, newest first, and with its outcome once it ended', async () => {
    const ids = [uid('list-a'), uid('list-b'), uid('list-c')];
    for (const id of ids) await startRun({ goal: 'one two', pauseMs: 50 }, id);
    const first = await page('?limit=100');
    const mine = first.runs.filter((i) => ids.includes(i.runId));
    expect(mine.map((i) => i.runId)).toEqual([...ids].reverse());
    for (const id of ids) await waitFor(id, (s) => s.status === 'ended');
    const ended = await listedAs(ids[0]!, (i) => i.status === 'ended');
    expect(ended).toMatchObject({ status: 'ended', stopReason: 'final_answer' });
    expect(Date.parse(ended.updatedAt)).toBeGreaterThanOrEqual(Date.parse(ended.createdAt));
  });

  it('pages through every run with limit and nextCursor: no run twice, none left out, newest first', async () => {
    const ids = [uid('page-a'), uid('page-b'), uid('page-c'), uid('page-d'), uid('page-e')];
    for (const id of ids) await startRun('one', id);
    const { items, pages } = await everything(2);
    const listed = items.map((i) => i.runId);
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed.filter((id) => ids.includes(id))).toEqual([...ids].reverse());
    expect(pages).toBeGreaterThanOrEqual(3);
    const top = await page('?limit=1');
    expect(top.runs).toHaveLength(1);
    expect(top.nextCursor).not.toBeNull();
  });

  it('lists a run waiting for a person as awaiting_input, no longer waiting by the time the reply is answered 202, then ended', async () => {
    const runId = await startRun({ goal: 'hi', approve: true, pauseMs: 200 });
    await waitFor(runId, (s) => s.status === 'awaiting_input');
    expect(await listedAs(runId, (i) => i.status === 'awaiting_input')).toMatchObject({ stopReason: null });
    const reply = await call(`/runs/${runId}/input`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'approve', resultId: 's0.input' }),
    });
    expect(reply.status).toBe(202);
    // The run object reports "running" before it answers the reply: the listing never shows a landed reply as still awaited.
    expect(['running', 'ended']).toContain((await everything(100)).items.find((i) => i.runId === runId)?.status);
    await waitFor(runId, (s) => s.status === 'ended');
    expect(await listedAs(runId, (i) => i.status === 'ended')).toMatchObject({ stopReason: 'final_answer' });
  });

  it('lists an imported run, and it ends there like any run', async () => {
    const runId = uid('list-import');
    const setup = demoSetup({ env: {}, runId, input: 'one two' });
    const inner = new InMemoryStore();
    const { request, ...seams } = setup;
    const agent = defineAgent({
      ...seams,
      store: faultyStore(inner, { crashAfterWrites: 3 }),
      events: { params: { sink: 'test' }, deliver: () => undefined },
    });
    await run(agent, { ...request, runId }).catch(() => undefined);
    const res = await call('/runs', {
      method: 'POST',
      body: JSON.stringify({ runId, input: 'one two', log: await exportRun(inner, runId) }),
    });
    expect(res.status).toBe(201);
    expect((await page('?limit=100')).runs.map((i) => i.runId)).toContain(runId);
    await waitFor(runId, (s) => s.status === 'ended');
    expect(await listedAs(runId, (i) => i.status === 'ended')).toMatchObject({ stopReason: 'final_answer' });
  });

  it.each([
    ['?limit=0', /limit must be an integer from 1 to 100/],
    ['?limit=101', /limit must be an integer from 1 to 100/],
    ['?limit=abc', /limit must be an integer/],
    ['?limit=2.5', /limit must be an integer/],
    ['?cursor=xyz', /cursor must be a nextCursor/],
    ['?cursor=-1', /cursor must be a nextCursor/],
    ['?limit=1&limit=2', /once each/],
    ['?page=2', /unknown query parameter\(s\): page/],
  ])('refuses %s with 400 bad_request', async (query, message) => {
    const res = await call(`/runs${query}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message).toMatch(message);
  });

  it('asks for the bearer token like every route', async () => {
    expect((await call('/runs', { token: null })).status).toBe(401);
  });

  it('is a 404 on an app without a run index (the probe app is one)', async () => {
    const res = await call('/probes/runs');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/no run index is configured/);
  });
});

describe('POST /runs/:id/cancel of an ended run (workerd)', () => {
  it('answers 409 conflict naming how the run ended, and changes nothing', async () => {
    const runId = await startRun('one');
    const done = await waitFor(runId, (s) => s.status === 'ended');
    const res = await call(`/runs/${runId}/cancel`, { method: 'POST' });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error).toEqual({
      code: 'conflict',
      message: `run ${JSON.stringify(runId)} has ended (final_answer); there is nothing to cancel`,
    });
    expect(await waitFor(runId, (s) => s.status === 'ended')).toEqual(done);
  });
});
