/**
 * The run viewer's server without a browser: where it listens and whom it answers, what it says
 * about hostile logs, the live event stream, and replies carried out by the user's agent.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/cli.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { startViewer, ViewerRefusedError } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import agentFor, { hold, SENT } from './agent.ts';
import { everydayRuns, hostileRuns, runIn } from './runs.ts';

let dir: string;
let pageDir: string;
let viewer: RunningViewer;
let readOnly: RunningViewer;
/** The header the page sends with every request once it has `v`'s key (none for an empty key). */
const auth = (key: string): Record<string, string> => (key === '' ? {} : { authorization: `Bearer ${key}` });
const get = (v: RunningViewer, path: string, headers: Record<string, string> = {}, key = v.key): Promise<Response> =>
  fetch(`${v.origin}${path}`, { headers: { ...auth(key), ...headers } });
const reply = (
  v: RunningViewer,
  runId: string,
  body: unknown,
  headers: Record<string, string> = {},
  key = v.key,
): Promise<Response> =>
  fetch(`${v.origin}/runs/${encodeURIComponent(runId)}/input`, {
    method: 'POST',
    headers: { ...auth(key), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** GET /runs with a Host header of our choosing (fetch does not let a caller set one). */
function statusUnderHost(v: RunningViewer, host: string): Promise<number | undefined> {
  return new Promise((ok, fail) => {
    const req = request(`${v.origin}/runs`, { headers: { host, ...auth(v.key) } }, (res) => {
      res.resume();
      ok(res.statusCode);
    });
    req.on('error', fail);
    req.end();
  });
}

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-');
  pageDir = await dirs.make('polyloop-viewer-page-');
  const { writeFile, mkdir } = await import('node:fs/promises');
  await mkdir(join(pageDir, 'assets'));
  await writeFile(join(pageDir, 'index.html'), '<!doctype html><title>viewer</title>');
  await everydayRuns(dir);
  await hostileRuns(dir);
  viewer = await startViewer({ source: await dirSource({ dir, agent: agentFor, pollMs: 50 }), pageDir });
  readOnly = await startViewer({ source: await dirSource({ dir }), pageDir });
}, 60_000);

afterAll(async () => {
  await viewer?.close();
  await readOnly?.close();
});

describe('where the viewer listens and whom it answers', () => {
  it('binds 127.0.0.1 on a free port by default and prints a URL with its access key in the fragment', () => {
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#key=[\w-]{22}$/);
  });

  it('refuses a non-loopback address unless allowRemote is given, from the API and from the command line', async () => {
    await expect(startViewer({ source: await dirSource({ dir }), pageDir, host: '0.0.0.0' })).rejects.toBeInstanceOf(
      ViewerRefusedError,
    );
    const err: string[] = [];
    const code = await runCli(['view', dir, '--host', '0.0.0.0'], { out: () => undefined, err: (t) => err.push(t) });
    expect(code).toBe(2);
    expect(err.join('')).toContain('--allow-remote');
    const open = await startViewer({ source: await dirSource({ dir }), pageDir, host: '0.0.0.0', allowRemote: true });
    expect(open.origin).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    await open.close();
  });

  it('answers nothing without the access key, and nothing under a foreign Host (DNS rebinding)', async () => {
    expect((await get(viewer, '/runs', {}, '')).status).toBe(401);
    expect((await get(viewer, '/runs', {}, 'wrong')).status).toBe(401);
    expect((await get(viewer, '/runs', {}, readOnly.key)).status).toBe(401);
    expect(await statusUnderHost(viewer, `evil.example:${new URL(viewer.origin).port}`)).toBe(403);
    expect(await statusUnderHost(viewer, `localhost:${new URL(viewer.origin).port}`)).toBe(200);
    expect((await get(viewer, '/runs')).status).toBe(200);
  });

  it('takes a reply only as JSON from its own origin (no cross-site form can post one)', async () => {
    expect(
      (await reply(viewer, 'approve-1', { kind: 'approve', resultId: 's0.input' }, { 'content-type': 'text/plain' }))
        .status,
    ).toBe(415);
    expect(
      (await reply(viewer, 'approve-1', { kind: 'approve', resultId: 's0.input' }, { origin: 'http://evil.example' }))
        .status,
    ).toBe(403);
  });

  it('sends a content security policy that allows no inline script', async () => {
    const res = await get(viewer, '/');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
  });
});

describe('what the viewer says about each run', () => {
  it('lists every run with its status, stop reason and steps, and says which logs cannot be read', async () => {
    const { runs } = (await (await get(viewer, '/runs')).json()) as {
      runs: { runId: string; status: string; steps: number; stopReason: string | null; error: string | null }[];
    };
    const by = Object.fromEntries(runs.map((r) => [r.runId, r]));
    expect(by['finished-1']).toMatchObject({ status: 'ended', stopReason: 'final_answer', steps: 3 });
    expect(by['approve-1']).toMatchObject({ status: 'awaiting_input', steps: 0 });
    expect(by['finished-cut']).toMatchObject({ status: 'interrupted', steps: 1 });
    expect(by['finished-torn']).toMatchObject({ status: 'ended', steps: 3, error: null });
    expect(by['finished-corrupt']?.status).toBe('corrupt');
    expect(by['finished-corrupt']?.error).toMatch(/:6: not valid JSON/);
    expect(by['long-1']).toMatchObject({ status: 'ended', steps: 50_000 });
  });

  it('reads a torn tail as the run without it, with a warning, and a corrupt middle line up to the line before it', async () => {
    const torn = (await (await get(viewer, '/runs/finished-torn')).json()) as { warnings: string[]; steps: number };
    expect(torn.warnings[0]).toMatch(/torn last line/);
    const corrupt = (await (await get(viewer, '/runs/finished-corrupt')).json()) as { error: string; steps: number };
    expect(corrupt).toMatchObject({ steps: 1 });
    expect(corrupt.error).toMatch(/not valid JSON/);
  });

  it('clips a 5 MB observation in a page of steps and gives it whole for the step alone', async () => {
    type Page = { steps: { step: { observation: string }; observationClippedChars: number }[] };
    const page = (await (await get(viewer, '/runs/big-1/steps?from=0&limit=10')).json()) as Page;
    expect(page.steps[0]?.step.observation).toHaveLength(20_000);
    expect(page.steps[0]?.observationClippedChars).toBe(5 * 1024 * 1024 - 20_000);
    const full = (await (await get(viewer, '/runs/big-1/steps?from=0&limit=1&full=1')).json()) as Page;
    expect(full.steps[0]?.step.observation).toHaveLength(5 * 1024 * 1024);
  });

  it('marks a step resumed after a crash when the log shows it (a settlement), with the recorded action and the reply', async () => {
    const page = (await (await get(viewer, '/runs/never-settled/steps')).json()) as {
      steps: { resumed: string | null; action: unknown; input: { kind: string; reply: unknown }[] }[];
    };
    expect(page.steps[0]?.resumed).toMatch(
      /resumed after a crash: the action was in flight and was settled by a person \(executed\)/,
    );
    expect(page.steps[0]?.action).toEqual({ kind: 'tool_call', name: 'fire', arguments: {} });
    expect(page.steps[0]?.input[0]).toMatchObject({
      kind: 'settle',
      reply: { kind: 'executed', observation: 'it was fired' },
    });
    expect(page.steps[1]?.resumed).toBeNull();
  });

  it('pages the steps of a 50,000-step run', async () => {
    const page = (await (await get(viewer, '/runs/long-1/steps?from=49990&limit=100')).json()) as {
      steps: { step: { stepIndex: number } }[];
    };
    expect(page.steps.map((s) => s.step.stepIndex)).toEqual(Array.from({ length: 10 }, (_, i) => 49_990 + i));
    expect((await get(viewer, '/runs/long-1/steps?from=-1')).status).toBe(400);
  });

  it("streams a run's records as server-sent events, live, and closes after run_ended", async () => {
    // Held at its second model call: the stream opens on a live run with step #0 written.
    const held = hold('held-events');
    const live = runIn(dir, 'held-events');
    await held.reached;
    const res = await get(viewer, '/runs/held-events/events');
    expect(res.status).toBe(200);
    held.release();
    const text = await res.text();
    await live;
    const kinds = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(kinds[0]).toBe('run_started');
    expect(kinds.at(-1)).toBe('run_ended');
    expect(kinds.filter((k) => k === 'step')).toHaveLength(9);
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual(ids.map((_, i) => i));
  }, 20_000);

  it('answers 400 to a Last-Event-ID beyond the log, as the Worker does, instead of waiting for records that cannot be', async () => {
    for (const runId of ['finished-1', 'finished-cut']) {
      const { lastSeq } = (await (await get(viewer, `/runs/${runId}`)).json()) as { lastSeq: number };
      const res = await get(viewer, `/runs/${runId}/events`, { 'last-event-id': String(lastSeq + 3) });
      expect(res.status).toBe(400);
      const message = `Last-Event-ID ${lastSeq + 3} is beyond the run's last record (${lastSeq})`;
      expect(await res.json()).toEqual({ error: { code: 'bad_request', message } });
    }
    // Everything up to run_ended seen: 204, which tells an EventSource to stop reconnecting.
    const ended = (await (await get(viewer, '/runs/finished-1')).json()) as { lastSeq: number };
    expect((await get(viewer, '/runs/finished-1/events', { 'last-event-id': String(ended.lastSeq) })).status).toBe(204);
    // At the end of a run that goes on (interrupted): the stream, which waits for what comes next.
    const { lastSeq } = (await (await get(viewer, '/runs/finished-cut')).json()) as { lastSeq: number };
    const open = new AbortController();
    const headers = { ...auth(viewer.key), 'last-event-id': String(lastSeq) };
    const res = await fetch(`${viewer.origin}/runs/finished-cut/events`, { headers, signal: open.signal });
    expect(res.status).toBe(200);
    open.abort();
  });
});

describe('replies', () => {
  it('without the agent the viewer writes nothing and says why', async () => {
    const res = await reply(readOnly, 'approve-1', { kind: 'approve', resultId: 's0.input' });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/--agent/);
    const summary = (await (await get(readOnly, '/runs/approve-1')).json()) as { answering: { enabled: boolean } };
    expect(summary.answering.enabled).toBe(false);
  });

  it('refuses a reply for another request (409) or of a kind the request does not take (400), writing nothing', async () => {
    expect((await reply(viewer, 'approve-1', { kind: 'approve', resultId: 's9.input' })).status).toBe(409);
    expect((await reply(viewer, 'approve-1', { kind: 'answer', resultId: 's0.input', text: 'x' })).status).toBe(400);
    expect((await reply(viewer, 'finished-1', { kind: 'approve', resultId: 's0.input' })).status).toBe(409);
    expect((await reply(viewer, 'approve-1', { kind: 'approve' })).status).toBe(400);
    expect(((await (await get(viewer, '/runs/approve-1')).json()) as { status: string }).status).toBe('awaiting_input');
  });

  it("carries out an approval with the user's agent, as resume does: 202 once it is in the log, then the run ends", async () => {
    await runIn(dir, 'approve-2');
    const res = await reply(viewer, 'approve-2', { kind: 'approve', resultId: 's0.input' });
    expect(res.status).toBe(202);
    for (
      let i = 0;
      i < 100 && ((await (await get(viewer, '/runs/approve-2')).json()) as { status: string }).status !== 'ended';
      i++
    )
      await new Promise((ok) => setTimeout(ok, 50));
    expect(await (await get(viewer, '/runs/approve-2')).json()).toMatchObject({
      status: 'ended',
      stopReason: 'final_answer',
      steps: 2,
    });
    expect(SENT.filter((s) => s.runId === 'approve-2')).toEqual([{ runId: 'approve-2', to: 'ana@example.com' }]);
    expect((await reply(viewer, 'approve-2', { kind: 'approve', resultId: 's0.input' })).status).toBe(409);
  });
});
