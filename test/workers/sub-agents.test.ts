/**
 * Sub-agents on Workers: the child run of a parent's `agentTool` is its own run object
 * (`/runs/<parent>.s0.action`), written by the parent's object; a child waiting for a person pauses
 * its parent, the reply to the parent reaches the child across evictions, and a cancel of the
 * parent ends the child too. The family agent: fixtures/family-object.ts.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { childRunId } from '../../src/core/index.ts';
import { familyNotes, releaseFamily } from './fixtures/family-object.ts';
import type { FamilyInput } from './fixtures/family-object.ts';
import { call, status, waitFor } from './http.ts';
import type { Status } from './http.ts';

const FAMILY = '/family';
const stubOf = (runId: string): DurableObjectStub => env.FAMILY.get(env.FAMILY.idFromName(runId));
let n = 0;
const uid = (name: string): string => `${name}-${Date.now()}-${n++}`;

type ChildStatus = Status & {
  children: { runId: string; stepIndex: number; resultId: string; state: string }[];
  pending: (Status['pending'] & { child?: { runId: string; request: { kind: string; resultId: string } } }) | null;
};

const statusOf = async (runId: string): Promise<ChildStatus> => (await status(runId, FAMILY)) as ChildStatus;
const until = (runId: string, done: (s: Status) => boolean): Promise<ChildStatus> =>
  waitFor(runId, done, 15_000, FAMILY) as Promise<ChildStatus>;

async function startFamily(name: string, input: Partial<FamilyInput> = {}): Promise<{ parent: string; child: string }> {
  const res = await call(`${FAMILY}/runs`, {
    method: 'POST',
    body: JSON.stringify({ runId: uid(name), input: { question: 'what is it?', ...input } }),
  });
  expect(res.status).toBe(201);
  const { runId: parent } = (await res.json()) as { runId: string };
  return { parent, child: childRunId(parent, 's0.action') };
}

/** Reset one object's instance as an eviction would: its in-memory driver is gone, its storage stays. */
async function evict(runId: string): Promise<void> {
  await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
}

/** The notes the child's never tool wrote, read in the isolate that runs the objects. */
const notesOf = (child: string): Promise<readonly string[]> =>
  runInDurableObject(stubOf(child), () => [...familyNotes(child)]);

const messageOf = async (res: Response): Promise<string> =>
  ((await res.json()) as { error: { message: string } }).error.message;

/** The NDJSON log of a run. */
const logOf = async (runId: string): Promise<string> =>
  new TextDecoder().decode(await (await call(`${FAMILY}/runs/${runId}/log`)).arrayBuffer());

/** The run ids whose records an object's storage holds. */
const logsIn = (runId: string): Promise<string[]> =>
  runInDurableObject(stubOf(runId), (_o, state) =>
    state.storage.sql
      .exec<{ run_id: string }>('SELECT DISTINCT run_id FROM polyloop_log')
      .toArray()
      .map((r) => r.run_id),
  );

describe('a sub-agent run in its own run object (workerd)', () => {
  it("pauses its parent while it awaits approval; after both objects are evicted the reply to the parent's request finishes both runs, and the never tool ran once", async () => {
    const { parent, child } = await startFamily('family-evict');
    const paused = await until(parent, (s) => s.status !== 'running');
    expect(paused).toMatchObject({
      status: 'awaiting_input',
      pending: {
        kind: 'child',
        resultId: 's0.c0',
        child: { runId: child, request: { kind: 'approval', resultId: 's0.input' } },
      },
      children: [{ runId: child, stepIndex: 0, resultId: 's0.action', state: 'awaiting_input' }],
    });
    // The child is a run of its own: its status is its object's, its log in its object's storage only.
    expect(await statusOf(child)).toMatchObject({
      runId: child,
      status: 'awaiting_input',
      pending: { kind: 'approval', resultId: 's0.input' },
      children: [],
    });
    expect(await logsIn(parent)).toEqual([parent]);
    expect(await logsIn(child)).toEqual([child]);

    await evict(parent);
    await evict(child);
    const reply = await call(`${FAMILY}/runs/${parent}/input`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'approve', resultId: 's0.c0' }),
    });
    expect(reply.status).toBe(202);
    const done = await until(parent, (s) => s.status === 'ended' || s.status === 'halted');
    expect(done).toMatchObject({
      status: 'ended',
      stopReason: 'final_answer',
      finalAnswer: 'parent heard: the answer is 42',
      children: [{ runId: child, stepIndex: 0, resultId: 's0.action', state: 'finished' }],
    });
    expect(await statusOf(child)).toMatchObject({
      status: 'ended',
      stopReason: 'final_answer',
      finalAnswer: 'the answer is 42',
    });
    expect(await notesOf(child)).toEqual(['found it']);
  });

  it('carries the reply through a middle sub-agent to a grandchild, each run in its own object, after all three are evicted', async () => {
    const { parent, child } = await startFamily('family-nested', { nested: true });
    const grandchild = childRunId(child, 's0.action');
    const paused = await until(parent, (s) => s.status !== 'running');
    expect(paused.pending).toMatchObject({
      kind: 'child',
      resultId: 's0.c0',
      child: {
        runId: child,
        request: { kind: 'child', resultId: 's0.c0', child: { runId: grandchild, request: { kind: 'approval' } } },
      },
    });
    expect(await statusOf(child)).toMatchObject({
      status: 'awaiting_input',
      children: [{ runId: grandchild, state: 'awaiting_input' }],
    });
    for (const id of [parent, child, grandchild]) await evict(id);
    const reply = await call(`${FAMILY}/runs/${parent}/input`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'approve', resultId: 's0.c0' }),
    });
    expect(reply.status).toBe(202);
    expect(await until(parent, (s) => s.status === 'ended' || s.status === 'halted')).toMatchObject({
      status: 'ended',
      finalAnswer: 'parent heard: middle heard: the answer is 42',
    });
    expect(await statusOf(child)).toMatchObject({
      status: 'ended',
      children: [{ runId: grandchild, state: 'finished' }],
    });
    expect(await statusOf(grandchild)).toMatchObject({ status: 'ended', finalAnswer: 'the answer is 42' });
    expect(await notesOf(grandchild)).toEqual(['found it']);
    expect(await logsIn(grandchild)).toEqual([grandchild]);
  });

  it("serves the child's trajectory, log and event stream from its own object, which arms no alarm of its own", async () => {
    const { parent, child } = await startFamily('family-routes');
    await until(parent, (s) => s.status === 'awaiting_input');
    await call(`${FAMILY}/runs/${parent}/input`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'approve', resultId: 's0.c0' }),
    });
    await until(parent, (s) => s.status === 'ended');
    const trajectory = (await (await call(`${FAMILY}/runs/${child}/trajectory`)).json()) as {
      runId: string;
      steps: { decision: string }[];
    };
    expect(trajectory).toMatchObject({ runId: child });
    expect(trajectory.steps.map((s) => s.decision)).toEqual(['action', 'final']);
    const log = await logOf(child);
    const kinds = log
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; runId?: string });
    expect(kinds[0]).toMatchObject({ kind: 'run_started', runId: child });
    expect(kinds.at(-1)?.kind).toBe('run_ended');
    const events = await call(`${FAMILY}/runs/${child}/events`);
    expect(events.status).toBe(200);
    expect(await events.text()).toContain('event: run_ended');
    // Its parent's object drives it: the child's object has no alarm to resume it by.
    expect(await runDurableObjectAlarm(stubOf(child))).toBe(false);
  });

  it('ends the child cancelled when the parent waiting on it is cancelled, and the never tool never ran', async () => {
    const { parent, child } = await startFamily('family-cancel');
    await until(parent, (s) => s.status === 'awaiting_input');
    await evict(parent);
    expect((await call(`${FAMILY}/runs/${parent}/cancel`, { method: 'POST' })).status).toBe(202);
    expect(await until(parent, (s) => s.status === 'ended')).toMatchObject({ stopReason: 'cancelled' });
    expect(await statusOf(child)).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
    expect(await notesOf(child)).toEqual([]);
  });

  it('ends the child cancelled when the parent is cancelled while the child runs', async () => {
    const { parent, child } = await startFamily('family-cancel-running', { hold: true });
    // The child has started (its run_started is in its object) and its model call is held.
    for (let i = 0; i < 600 && (await call(`${FAMILY}/runs/${child}`)).status === 404; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(await statusOf(child)).toMatchObject({ status: 'running', steps: 0 });
    expect((await call(`${FAMILY}/runs/${parent}/cancel`, { method: 'POST' })).status).toBe(202);
    expect(await until(parent, (s) => s.status === 'ended')).toMatchObject({ stopReason: 'cancelled' });
    expect(await statusOf(child)).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
    await runInDurableObject(stubOf(parent), () => releaseFamily(child));
    expect(await notesOf(child)).toEqual([]);
  });

  it("refuses a reply, a cancel or an upgrade sent to the child's own object: they go through its parent", async () => {
    const { parent, child } = await startFamily('family-direct');
    await until(parent, (s) => s.status === 'awaiting_input');
    const input = await call(`${FAMILY}/runs/${child}/input`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'approve', resultId: 's0.input' }),
    });
    expect(input.status).toBe(409);
    expect(await messageOf(input)).toContain(`sub-agent of run ${JSON.stringify(parent)}: answer its parent's`);
    // The parent's request is answered as its child's approval asks: an answer is refused, nothing written.
    const wrong = await call(`${FAMILY}/runs/${parent}/input`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'answer', resultId: 's0.c0', text: 'yes' }),
    });
    expect(wrong.status).toBe(400);
    expect(await messageOf(wrong)).toBe(
      '"s0.c0" is an approval request of a sub-agent run; it accepts approve, deny, cancel, not answer',
    );
    const cancel = await call(`${FAMILY}/runs/${child}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(409);
    expect(await messageOf(cancel)).toContain(`cancel its parent (POST /runs/${parent}/cancel)`);
    const upgrade = await call(`${FAMILY}/runs/${child}/upgrade`, {
      method: 'POST',
      body: JSON.stringify({ reason: 'x' }),
    });
    expect(upgrade.status).toBe(409);
    expect(await statusOf(child)).toMatchObject({ status: 'awaiting_input' });
    expect(await statusOf(parent)).toMatchObject({ status: 'awaiting_input' });
    expect(await notesOf(child)).toEqual([]);
    // A POST /runs of the child's id is refused: the id is taken.
    const again = await call(`${FAMILY}/runs`, { method: 'POST', body: JSON.stringify({ runId: child, input: {} }) });
    expect(again.status).toBe(409);
  });

  it("halts the parent, writing nothing, when its child's id holds a run started on its own", async () => {
    const runId = uid('family-squatted');
    const child = childRunId(runId, 's0.action');
    const own = await call(`${FAMILY}/runs`, {
      method: 'POST',
      body: JSON.stringify({ runId: child, input: { question: 'squatter' } }),
    });
    expect(own.status).toBe(201);
    const ownDone = await until(child, (s) => s.status === 'awaiting_input');
    const before = await logOf(child);
    const res = await call(`${FAMILY}/runs`, {
      method: 'POST',
      body: JSON.stringify({ runId, input: { question: 'what is it?' } }),
    });
    expect(res.status).toBe(201);
    const halted = await until(runId, (s) => s.status === 'halted');
    expect(halted.error).toMatch(/RunLockedError: .*started on its own/);
    expect(await logOf(child)).toBe(before);
    expect(ownDone.status).toBe('awaiting_input');
  });
});
