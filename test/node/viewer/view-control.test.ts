/**
 * A person in control from the viewer, over real HTTP on loopback: stop a run (one another driver
 * is running, one that waits for a person, one no one drives), fork it from a step, approve with
 * edited arguments, read a step's messages as the model saw them — and hostile bodies refused
 * with clear 4xx, writing nothing. Over a Worker, the same routes are passed to the Worker's own.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLog, resume } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { workerSource } from '../../../src/viewer/server/view-worker.ts';
import { startViewer } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import agentFor, { hold, SENT } from './agent.ts';
import { runIn } from './runs.ts';

let dir: string;
let pageDir: string;
let viewer: RunningViewer;
let readOnly: RunningViewer;

type Json = Record<string, unknown>;
type Answer = { status: number; body: Json; headers: Headers };

async function send(v: RunningViewer, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${v.origin}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${v.key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Json, headers: res.headers };
}
const post = (v: RunningViewer, runId: string, route: string, body: unknown): Promise<Answer> =>
  send(v, `/runs/${encodeURIComponent(runId)}/${route}`, body);
async function get(v: RunningViewer, path: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${v.origin}${path}`, { headers: { authorization: `Bearer ${v.key}` } });
  return { status: res.status, body: (await res.json()) as Json };
}
const messageOf = (a: { body: Json }): string => String((a.body['error'] as Json | undefined)?.['message']);
const logOf = (runId: string): Promise<string> => readFile(new FileStore({ dir }).logPath(runId), 'utf8');
const viewOf = async (runId: string) => readRunLog(await new FileStore({ dir }).readLog(runId));

/** Until the run has ended (a reply is carried on in the background once it landed). */
async function ended(runId: string): Promise<ReturnType<typeof readRunLog>> {
  for (let i = 0; i < 200; i++) {
    const view = await viewOf(runId);
    if (view.ended) return view;
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error(`run ${runId} never ended`);
}

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-control-');
  pageDir = await dirs.make('polyloop-viewer-page-');
  await mkdir(join(pageDir, 'assets'));
  await writeFile(join(pageDir, 'index.html'), '<!doctype html><title>viewer</title>');
  for (const runId of ['finished-1', 'approve-1', 'approve-2', 'approve-3', 'approve-4', 'approve-5'])
    await runIn(dir, runId);
  viewer = await startViewer({ source: await dirSource({ dir, agent: agentFor, pollMs: 50 }), pageDir });
  readOnly = await startViewer({ source: await dirSource({ dir }), pageDir });
}, 60_000);

afterAll(async () => {
  await viewer?.close();
  await readOnly?.close();
});

describe('stop from the viewer', () => {
  it('ends a run another driver is running, inside its model call, cancelled with the reason', async () => {
    const held = hold('held-stop');
    const live = runIn(dir, 'held-stop');
    await held.reached;
    const answer = await post(viewer, 'held-stop', 'stop', { reason: 'wrong customer' });
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({
      runId: 'held-stop',
      requested: true,
      stopRequest: { reason: 'wrong customer' },
    });
    // Its driver ends it within a second (or already has, when it was quicker than this answer).
    expect(String(answer.body['message'])).toMatch(
      /its driver \(process \d+\) ends it cancelled within a second|ended/,
    );
    const result = await live;
    held.release();
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'wrong customer' } });
    expect((await viewOf('held-stop')).ended?.stopRequest).toEqual({ reason: 'wrong customer' });
    const summary = await get(viewer, '/runs/held-stop');
    expect(summary.body).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'wrong customer' } });
  }, 20_000);

  it("ends a run that waits for approval at once with the viewer's agent: the tool never runs", async () => {
    const answer = await post(viewer, 'approve-2', 'stop', { reason: 'not today' });
    expect(answer.status).toBe(202);
    expect(answer.body['message']).toBe('no process drove it: this viewer ended it cancelled now');
    const view = await viewOf('approve-2');
    expect(view.ended).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'not today' } });
    expect(SENT.filter((s) => s.runId === 'approve-2')).toEqual([]);
    // A reply sent now finds the run ended: refused, nothing carried out.
    expect((await post(viewer, 'approve-2', 'input', { kind: 'approve', resultId: 's0.input' })).status).toBe(409);
  });

  it('without the agent keeps the stop for the next resume, which ends the run before the approval given to it runs', async () => {
    const answer = await post(readOnly, 'approve-3', 'stop', {});
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ requested: true, stopRequest: {} });
    expect(answer.body['message']).toMatch(/it ends cancelled at its next resume, before any model call or action/);
    expect((await viewOf('approve-3')).ended).toBeNull();
    const { agent, request } = agentFor({ runId: 'approve-3', dir });
    const result = await resume(agent, request, { input: { kind: 'approve', resultId: 's0.input' } });
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: {} });
    expect(SENT.filter((s) => s.runId === 'approve-3')).toEqual([]);
  });

  it('leaves an ended run alone and says so (200)', async () => {
    const before = await logOf('finished-1');
    const answer = await post(viewer, 'finished-1', 'stop', { reason: 'late' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ runId: 'finished-1', requested: false, stopReason: 'final_answer' });
    expect(answer.body['message']).toMatch(/has already ended \(final_answer\): nothing to stop/);
    expect(await logOf('finished-1')).toBe(before);
  });

  it('refuses hostile stops with a clear 4xx, writing nothing: a huge reason, a huge body, unknown keys, no JSON', async () => {
    const huge = await post(viewer, 'approve-1', 'stop', { reason: 'x'.repeat(2_001) });
    expect(huge.status).toBe(400);
    expect(messageOf(huge)).toMatch(/reason is longer than 2000 characters/);
    expect((await post(viewer, 'approve-1', 'stop', { reason: 'x'.repeat(2 * 1024 * 1024) })).status).toBe(413);
    const unknown = await post(viewer, 'approve-1', 'stop', { reason: 'a', force: true });
    expect(unknown.status).toBe(400);
    expect(messageOf(unknown)).toMatch(/force is not an option of a stop/);
    expect(messageOf(await post(viewer, 'approve-1', 'stop', { reason: 7 }))).toMatch(/reason must be a string/);
    expect((await post(viewer, 'approve-1', 'stop', [])).status).toBe(400);
    expect((await post(viewer, 'approve-1', 'stop', '{"reason":')).status).toBe(400);
    expect((await send(viewer, '/runs/approve-1/stop', {}, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await send(viewer, '/runs/approve-1/stop', {}, { origin: 'http://evil.example' })).status).toBe(403);
    expect(
      (await send(viewer, '/runs/approve-1/stop', {}, { authorization: 'Bearer wrong-key-wrong-key' })).status,
    ).toBe(401);
    expect((await post(viewer, 'no-such-run', 'stop', {})).status).toBe(404);
    expect((await viewOf('approve-1')).state).toBe('awaiting_input');
    // No stop was kept either: a resume with the approval carries it out.
    await expect(readFile(new FileStore({ dir }).stopPath('approve-1'))).rejects.toThrow(/ENOENT/);
  });
});

describe('fork from the viewer', () => {
  it('forks a finished run at a step: 201 with its URL, the steps before copied, the source unchanged byte for byte', async () => {
    const before = await logOf('finished-1');
    const answer = await post(viewer, 'finished-1', 'fork', { atStep: 1, newRunId: 'finished-1.retry' });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({
      runId: 'finished-1.retry',
      url: '/runs/finished-1.retry',
      forkedFrom: { runId: 'finished-1', atStep: 1 },
    });
    expect(answer.headers.get('location')).toBe('/runs/finished-1.retry');
    expect(await logOf('finished-1')).toBe(before);
    const fork = await viewOf('finished-1.retry');
    expect(fork.started?.forkedFrom).toEqual({ runId: 'finished-1', atStep: 1 });
    expect(fork.trajectory).toHaveLength(1);
    const summary = await get(viewer, '/runs/finished-1.retry');
    expect(summary.body).toMatchObject({ forkedFrom: { runId: 'finished-1', atStep: 1 }, steps: 1 });
  });

  it('forks a run at the approval it waits for: approve as edited in the fork, deny in the source', async () => {
    const forked = await post(viewer, 'approve-4', 'fork', { atStep: 0, newRunId: 'approve-4-fork' });
    expect(forked.status).toBe(201);
    expect((await viewOf('approve-4-fork')).pending?.resultId).toBe('s0.input');
    const edited = { kind: 'approve', resultId: 's0.input', arguments: { to: 'bo@example.com' } };
    expect((await post(viewer, 'approve-4-fork', 'input', edited)).status).toBe(202);
    const deny = { kind: 'deny', resultId: 's0.input', reason: 'no' };
    expect((await post(viewer, 'approve-4', 'input', deny)).status).toBe(202);
    await ended('approve-4-fork');
    await ended('approve-4');
    expect(SENT.filter((s) => s.runId.startsWith('approve-4'))).toEqual([
      { runId: 'approve-4-fork', to: 'bo@example.com' },
    ]);
    const step = (await viewOf('approve-4-fork')).trajectory[0];
    expect(step?.observation).toMatch(/^A person changed the arguments of this call before it ran, to \{"to":"bo@/);
  });

  it('refuses hostile forks with a clear 4xx, writing nothing', async () => {
    const bad = async (body: unknown, status: number, message: RegExp): Promise<void> => {
      const answer = await post(viewer, 'finished-1', 'fork', body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(messageOf(answer)).toMatch(message);
    };
    const idRule = /newRunId must be 1 to 200 characters of A-Z/;
    await bad({ atStep: 0, newRunId: '../escape' }, 400, idRule);
    await bad({ atStep: 0, newRunId: 'a b' }, 400, idRule);
    await bad({ atStep: 0, newRunId: '' }, 400, idRule);
    await bad({ atStep: 0, newRunId: '..' }, 400, idRule);
    await bad({ atStep: 0, newRunId: 'x'.repeat(201) }, 400, idRule);
    await bad({ atStep: 0, newRunId: 7 }, 400, idRule);
    await bad({ atStep: -1, newRunId: 'f-1' }, 400, /atStep must be a step number/);
    await bad({ atStep: 1.5, newRunId: 'f-1' }, 400, /atStep must be a step number/);
    await bad({ atStep: '1', newRunId: 'f-1' }, 400, /atStep must be a step number/);
    await bad({ atStep: 0, newRunId: 'f-1', into: 'elsewhere' }, 400, /into is not an option of a fork/);
    await bad({ atStep: 9, newRunId: 'f-1' }, 409, /cannot be forked at step 9: its last completed step is 2/);
    await bad({ atStep: 0, newRunId: 'approve-1' }, 409, /run "approve-1" already has a log/);
    await bad({ atStep: 0, newRunId: 'finished-1' }, 409, /newRunId must differ from the source run/);
    const none = await post(viewer, 'no-such-run', 'fork', { atStep: 0, newRunId: 'f-1' });
    expect(none.status).toBe(404);
    expect((await get(viewer, '/runs/f-1')).status).toBe(404);
  });
});

describe('edit and approve from the viewer', () => {
  it('runs the edited arguments and says in history what the person changed', async () => {
    const reply = { kind: 'approve', resultId: 's0.input', arguments: { to: 'cy@example.com' } };
    expect((await post(viewer, 'approve-5', 'input', reply)).status).toBe(202);
    const view = await ended('approve-5');
    expect(SENT.filter((s) => s.runId === 'approve-5')).toEqual([{ runId: 'approve-5', to: 'cy@example.com' }]);
    expect(view.trajectory[0]?.observation).toMatch(/^A person changed the arguments/);
  });

  it('refuses edited arguments the schema does not take, or that are not an object, with the reason (400)', async () => {
    await runIn(dir, 'approve-bad');
    const schema = await post(viewer, 'approve-bad', 'input', { kind: 'approve', resultId: 's0.input', arguments: {} });
    expect(schema.status).toBe(400);
    expect(messageOf(schema)).toMatch(/the edited arguments are refused: arguments of "send" do not match its schema/);
    expect(messageOf(schema)).toMatch(/to/);
    const text = await post(viewer, 'approve-bad', 'input', {
      kind: 'approve',
      resultId: 's0.input',
      arguments: '{"to": "not parsed"',
    });
    expect(text.status).toBe(400);
    expect(messageOf(text)).toMatch(/reply.arguments must be an object of the edited arguments, got a string/);
    const denyEdit = { kind: 'deny', resultId: 's0.input', reason: 'x', arguments: { to: 'a@b.c' } };
    expect(messageOf(await post(viewer, 'approve-bad', 'input', denyEdit))).toMatch(/taken only with kind "approve"/);
    expect((await viewOf('approve-bad')).state).toBe('awaiting_input');
    expect(SENT.filter((s) => s.runId === 'approve-bad')).toEqual([]);
  });
});

describe("a step's messages as the model saw them", () => {
  type Page = {
    stepIndex: number;
    total: number;
    from: number;
    messages: { part: string; step: number | null; message: { role: string; content: Json[] } }[];
    tools: { name: string }[];
    limits: string[];
  };

  it('gives the goal, the history before the step and the tools of the call', async () => {
    const { status, body } = await get(viewer, '/runs/finished-1/steps/2/messages');
    expect(status).toBe(200);
    const page = body as unknown as Page;
    expect(page.stepIndex).toBe(2);
    expect(page.total).toBe(5);
    expect(page.messages.map((m) => [m.part, m.step, m.message.role])).toEqual([
      ['goal', null, 'user'],
      ['history', 0, 'assistant'],
      ['history', 0, 'user'],
      ['history', 1, 'assistant'],
      ['history', 1, 'user'],
    ]);
    expect(page.messages[0]?.message.content[0]).toEqual({ type: 'text', text: 'Which city is warmer?' });
    expect(page.messages[2]?.message.content[0]?.['text']).toBe('Oslo: 21°C <b>sunny</b>');
    expect(page.tools.map((t) => t.name)).toEqual(['lookup', 'send', 'fire']);
    expect(page.limits[0]).toMatch(/model caller/);
    const second = (await get(viewer, '/runs/finished-1/steps/2/messages?from=3&limit=1')).body as unknown as Page;
    expect(second).toMatchObject({ from: 3, total: 5 });
    expect(second.messages.map((m) => m.step)).toEqual([1]);
  });

  it('gives the messages of a step that waits for approval, and 404 or 400 for a step without a model call or no number', async () => {
    const waiting = (await get(viewer, '/runs/approve-1/steps/0/messages')).body as unknown as Page;
    expect(waiting.messages.map((m) => m.part)).toEqual(['goal']);
    const none = await get(viewer, '/runs/finished-1/steps/3/messages');
    expect(none.status).toBe(404);
    expect(messageOf(none)).toMatch(/step 3 made no model call/);
    expect((await get(viewer, '/runs/finished-1/steps/x/messages')).status).toBe(400);
    expect((await get(viewer, '/runs/finished-1/steps/0/messages?limit=-1')).status).toBe(400);
    expect((await get(viewer, '/runs/no-such-run/steps/0/messages')).status).toBe(404);
  });
});

describe('stop and fork over a Worker', () => {
  it("passes each to the Worker's own route and gives back its answer, its refusals in its words", async () => {
    const seen: { url: string; body: string }[] = [];
    const answers: Record<string, [number, unknown]> = {
      '/runs/w-1/stop': [202, { runId: 'w-1', requested: true, stopRequest: { reason: 'r' } }],
      '/runs/w-1/fork': [201, { runId: 'w-2', url: '/runs/w-2', forkedFrom: { runId: 'w-1', atStep: 0 } }],
      '/runs/w-3/fork': [409, { error: { code: 'conflict', message: 'run "w-2" exists' } }],
    };
    const worker = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', body });
        const [status, out] = answers[req.url ?? ''] ?? [404, { error: { code: 'not_found', message: 'no' } }];
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      });
    });
    await new Promise<void>((ok) => worker.listen(0, '127.0.0.1', ok));
    const address = worker.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const over = await startViewer({ source: workerSource({ url, token: 'secret' }), pageDir });
    try {
      const stop = await post(over, 'w-1', 'stop', { reason: 'r' });
      expect(stop).toMatchObject({ status: 202, body: { requested: true, stopRequest: { reason: 'r' } } });
      const fork = await post(over, 'w-1', 'fork', { atStep: 0, newRunId: 'w-2' });
      expect(fork.status).toBe(201);
      expect(fork.headers.get('location')).toBe('/runs/w-2');
      const refused = await post(over, 'w-3', 'fork', { atStep: 0, newRunId: 'w-2' });
      expect(refused.status).toBe(409);
      expect(messageOf(refused)).toBe('run "w-2" exists');
      expect(seen.map((s) => [s.url, s.body])).toEqual([
        ['/runs/w-1/stop', '{"reason":"r"}'],
        ['/runs/w-1/fork', '{"atStep":0,"newRunId":"w-2"}'],
        ['/runs/w-3/fork', '{"atStep":0,"newRunId":"w-2"}'],
      ]);
    } finally {
      await over.close();
      await new Promise((ok) => worker.close(ok));
    }
  });
});
