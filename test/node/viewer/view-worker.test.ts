/**
 * The run viewer over a real Worker (the demo Worker under Miniflare, on a loopback port): the
 * same read API, each run read from the Worker's log, a reply passed to its `POST /runs/:id/input`
 * — and the bearer token never in what the page receives.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewer } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { workerSource } from '../../../src/viewer/server/view-worker.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { bundleWorker, ROOT, startWorker, TOKEN } from '../platform-workers/miniflare-harness.ts';

let dir: string;
let mf: Miniflare;
let viewer: RunningViewer;

const get = async (path: string): Promise<{ status: number; text: string }> => {
  const res = await fetch(`${viewer.origin}${path}`, { headers: { authorization: `Bearer ${viewer.key}` } });
  return { status: res.status, text: await res.text() };
};

async function until(path: string, test: (body: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const body = JSON.parse((await get(path)).text) as Record<string, unknown>;
    if (test(body)) return body;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`${path} never reached the state`);
}

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-worker-');
  mf = await startWorker(await bundleWorker(join(ROOT, 'examples/workers/worker.ts')), dir, {
    host: '127.0.0.1',
    port: 0,
  });
  const base = (await mf.ready).toString();
  await mkdir(join(dir, 'page/assets'), { recursive: true });
  await writeFile(join(dir, 'page/index.html'), '<!doctype html><title>viewer</title>');
  viewer = await startViewer({ source: workerSource({ url: base, token: TOKEN }), pageDir: join(dir, 'page') });
  const started = await fetch(new URL('/runs', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ runId: 'w-approve', input: { goal: 'hello', approve: true } }),
  });
  expect(started.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await viewer?.close();
  await mf?.dispose();
});

describe('the viewer over a Worker', () => {
  it("shows a waiting run read from the Worker's log, with the replies its request accepts", async () => {
    const summary = await until('/runs/w-approve', (b) => b['status'] === 'awaiting_input');
    expect(summary['pending']).toMatchObject({
      resultId: 's0.input',
      kind: 'approval',
      accepts: ['approve', 'deny', 'cancel'],
    });
    expect(summary['answering']).toEqual({ enabled: true, why: null });
    expect((await get('/runs/nope')).status).toBe(404);
  });

  it('passes an approval to the Worker, and the run ends there', async () => {
    const res = await fetch(`${viewer.origin}/runs/w-approve/input`, {
      method: 'POST',
      headers: { authorization: `Bearer ${viewer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'approve', resultId: 's0.input' }),
    });
    expect(res.status).toBe(202);
    const ended = await until('/runs/w-approve', (b) => b['status'] === 'ended');
    expect(ended['stopReason']).toBe('final_answer');
    const page = JSON.parse((await get('/runs/w-approve/steps')).text) as {
      steps: { input: { reply: { kind: string } }[] }[];
    };
    expect(page.steps.flatMap((s) => s.input.map((i) => i.reply.kind))).toEqual(['approve']);
    expect(
      (
        await fetch(`${viewer.origin}/runs/w-approve/input`, {
          method: 'POST',
          headers: { authorization: `Bearer ${viewer.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ kind: 'approve', resultId: 's0.input' }),
        })
      ).status,
    ).toBe(409);
  }, 30_000);

  it('says the Worker lists no runs when it has no run index, instead of an empty list', async () => {
    const res = await get('/runs');
    expect(res.status).toBe(502);
    expect(res.text).toMatch(/no run index is configured/);
  });

  it('never gives the page the bearer token', async () => {
    for (const path of ['/viewer', '/runs', '/runs/w-approve', '/runs/w-approve/steps', '/runs/w-approve/log'])
      expect((await get(path)).text).not.toContain(TOKEN);
  });
});

describe('the viewer over a Worker with a run index', () => {
  it("lists every run, past the first page of 100 the Worker's list route gives", async () => {
    const mfi = new Miniflare({
      modules: true,
      script: await bundleWorker(join(ROOT, 'examples/workers/worker.ts')),
      compatibilityDate: '2026-04-20',
      durableObjects: {
        RUNS: { className: 'RunObject', useSQLite: true },
        RUN_INDEX: { className: 'RunIndex', useSQLite: true },
      },
      durableObjectsPersist: join(dir, 'indexed'),
      bindings: { POLYLOOP_TOKEN: TOKEN },
    });
    const v = await startViewer({
      source: workerSource({
        url: 'http://worker.test',
        token: TOKEN,
        fetch: ((url: string, init?: RequestInit) => mfi.dispatchFetch(url, init as never)) as unknown as typeof fetch,
      }),
      pageDir: join(dir, 'page'),
    });
    try {
      const start = (i: number): Promise<{ status: number }> =>
        mfi.dispatchFetch('http://worker.test/runs', {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ runId: `w-many-${i}`, input: 'hello' }),
        });
      for (let i = 0; i < 101; i += 10)
        for (const res of await Promise.all(Array.from({ length: Math.min(10, 101 - i) }, (_, j) => start(i + j))))
          expect(res.status).toBe(201);
      const res = await fetch(`${v.origin}/runs`, { headers: { authorization: `Bearer ${v.key}` } });
      const { runs } = (await res.json()) as { runs: { runId: string; steps: number | null }[] };
      expect(runs).toHaveLength(101);
      // The oldest run is on the Worker's second page.
      expect(runs.map((r) => r.runId)).toContain('w-many-0');
    } finally {
      await v.close();
      await mfi.dispose();
    }
  }, 60_000);
});
