/**
 * The run viewer's server on a parent run and its sub-agent run: the parent's summary names its
 * children and shows a child request as what it really asks, a child run names its parent and
 * where a reply to it goes, and a reply given to the parent reaches the child (both runs end).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportRun, InMemoryStore, run } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { workerSource } from '../../../src/viewer/server/view-worker.ts';
import { startViewer } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import agentFor from './agent.ts';
import { runIn } from './runs.ts';
import { family } from '../subagents/family.ts';

type Summary = {
  status: string;
  children: { runId: string; stepIndex: number; resultId: string; state: string }[];
  parentRunId: string | null;
  replyTo: { runId: string; resultId: string } | null;
  openRequests: {
    resultId: string;
    kind: string;
    accepts: string[];
    asked: { runId: string; resultId: string; kind: string; action: unknown } | null;
  }[];
};

let dir: string;
let viewer: RunningViewer;

const headers = (): Record<string, string> => ({ authorization: `Bearer ${viewer.key}` });
const get = async (path: string): Promise<unknown> =>
  (await fetch(`${viewer.origin}${path}`, { headers: headers() })).json();
const summary = async (runId: string): Promise<Summary> => (await get(`/runs/${runId}`)) as Summary;
const reply = (runId: string, body: unknown): Promise<Response> =>
  fetch(`${viewer.origin}/runs/${runId}/input`, {
    method: 'POST',
    headers: { ...headers(), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function until(runId: string, done: (s: Summary) => boolean): Promise<Summary> {
  for (let i = 0; i < 300; i++) {
    const s = await summary(runId);
    if (done(s)) return s;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  throw new Error(`run ${runId} never got there: ${JSON.stringify(await summary(runId))}`);
}

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-family-');
  const pageDir = await dirs.make('polyloop-viewer-family-page-');
  await mkdir(join(pageDir, 'assets'));
  await writeFile(join(pageDir, 'index.html'), '<!doctype html><title>viewer</title>');
  await runIn(dir, 'family-1');
  viewer = await startViewer({ source: await dirSource({ dir, agent: agentFor, pollMs: 50 }), pageDir });
}, 60_000);

afterAll(async () => {
  await viewer?.close();
});

describe('the viewer on a parent run and its sub-agent run', () => {
  it("names the parent's children and shows its child request as the approval in the sub-agent run", async () => {
    const s = await summary('family-1');
    expect(s.status).toBe('awaiting_input');
    expect(s.children).toEqual([
      { runId: 'family-1.s0.action', stepIndex: 0, resultId: 's0.action', state: 'awaiting_input' },
    ]);
    expect(s.parentRunId).toBeNull();
    expect(s.replyTo).toBeNull();
    expect(s.openRequests).toMatchObject([
      {
        resultId: 's0.c0',
        kind: 'child',
        accepts: ['approve', 'deny', 'cancel'],
        asked: {
          runId: 'family-1.s0.action',
          resultId: 's0.input',
          kind: 'approval',
          action: { kind: 'tool_call', name: 'note', arguments: { text: 'found it' } },
        },
      },
    ]);
  });

  it("names a child run's parent, and sends a reply to its request to the parent's", async () => {
    const s = await summary('family-1.s0.action');
    expect(s.parentRunId).toBe('family-1');
    expect(s.replyTo).toEqual({ runId: 'family-1', resultId: 's0.c0' });
    expect(s.openRequests[0]?.asked).toBeNull();
    const before = await new FileStore({ dir }).readLog('family-1.s0.action');
    const direct = await reply('family-1.s0.action', { kind: 'approve', resultId: 's0.input' });
    expect(direct.status).toBe(409);
    const body = (await direct.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/run "family-1" waits on this request: reply to its request "s0\.c0"/);
    expect(await new FileStore({ dir }).readLog('family-1.s0.action')).toEqual(before);
  });

  it("carries the parent's reply to the child: both runs end, and the parent's step names its child", async () => {
    const res = await reply('family-1', { kind: 'approve', resultId: 's0.c0' });
    expect(res.status).toBe(202);
    const parent = await until('family-1', (s) => s.status === 'ended');
    expect(parent.children).toEqual([
      { runId: 'family-1.s0.action', stepIndex: 0, resultId: 's0.action', state: 'finished' },
    ]);
    const child = await until('family-1.s0.action', (s) => s.status === 'ended');
    expect(child.replyTo).toBeNull();
    const page = (await get('/runs/family-1/steps')) as { steps: { step: { childRunId?: string } }[] };
    expect(page.steps[0]?.step.childRunId).toBe('family-1.s0.action');
  });
});

describe('the viewer over a Worker, on a sub-agent run', () => {
  it("reads the parent's log to name a child run's parent and where a reply to it goes", async () => {
    const store = new InMemoryStore();
    await run(family({ store }).parent, { runId: 'w1', goal: 'find it' });
    // What a Worker answers for a run's status and its log (docs/http.md), from the store.
    const fakeFetch = (async (input: string | URL | Request) => {
      const path = decodeURIComponent(new URL(String(input)).pathname);
      const m = /^\/runs\/([^/]+)(\/log)?$/.exec(path);
      if (!m || (await store.readLog(m[1] as string)).length === 0) return Response.json({}, { status: 404 });
      if (m[2]) return new Response(await exportRun(store, m[1] as string));
      return Response.json({ status: 'awaiting_input', stopReason: null, steps: 0 });
    }) as typeof fetch;
    const source = workerSource({ url: 'http://worker.test', token: 't', fetch: fakeFetch });
    const child = await source.summary('w1.s0.action');
    expect(child?.parentRunId).toBe('w1');
    expect(child?.replyTo).toEqual({ runId: 'w1', resultId: 's0.c0' });
    const parent = await source.summary('w1');
    expect(parent?.children).toEqual([
      { runId: 'w1.s0.action', stepIndex: 0, resultId: 's0.action', state: 'awaiting_input' },
    ]);
    expect(parent?.openRequests[0]?.asked?.runId).toBe('w1.s0.action');
  });
});
