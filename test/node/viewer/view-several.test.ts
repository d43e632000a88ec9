/**
 * The run viewer's server on a run whose step holds several tool calls: the summary gives every
 * open request (with its call's action and the replies it accepts) and each call of the step in
 * flight, the input route takes a reply to any open request, in any order, and a page of steps
 * gives each call's outcome.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { startViewer } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import agentFor, { SENT } from './agent.ts';
import { runIn } from './runs.ts';

type Open = { resultId: string; kind: string; action: { name: string; arguments: unknown }; accepts: string[] };
type Summary = {
  status: string;
  pending: Open | null;
  openRequests: Open[];
  inFlight: { calls: { resultId: string; action: { name: string } | null; status: string }[] | null } | null;
};

let dir: string;
let viewer: RunningViewer;

const headers = (): Record<string, string> => ({ authorization: `Bearer ${viewer.key}` });
const summary = async (runId: string): Promise<Summary> =>
  (await (await fetch(`${viewer.origin}/runs/${runId}`, { headers: headers() })).json()) as Summary;
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
  dir = await dirs.make('polyloop-viewer-several-');
  const pageDir = await dirs.make('polyloop-viewer-several-page-');
  await mkdir(join(pageDir, 'assets'));
  await writeFile(join(pageDir, 'index.html'), '<!doctype html><title>viewer</title>');
  await runIn(dir, 'several-1');
  await runIn(dir, 'several-2');
  await runIn(dir, 'several-3');
  viewer = await startViewer({ source: await dirSource({ dir, agent: agentFor, pollMs: 50 }), pageDir });
}, 60_000);

afterAll(async () => {
  await viewer?.close();
});

describe('the viewer on a step with several calls', () => {
  it('gives every open request with its action and replies, and each call of the waiting step', async () => {
    const s = await summary('several-1');
    expect(s.status).toBe('awaiting_input');
    expect(s.pending?.resultId).toBe('s0.a0.input');
    expect(s.openRequests).toMatchObject([
      { resultId: 's0.a0.input', kind: 'approval', action: { name: 'send', arguments: { to: 'ana@example.com' } } },
      { resultId: 's0.a1.input', kind: 'approval', action: { name: 'send', arguments: { to: 'bo@example.com' } } },
    ]);
    expect(s.openRequests.map((r) => r.accepts)).toEqual([
      ['approve', 'deny', 'cancel'],
      ['approve', 'deny', 'cancel'],
    ]);
    expect(s.inFlight?.calls?.map((c) => [c.resultId, c.action?.name, c.status])).toEqual([
      ['s0.a0', 'send', 'awaiting approval: s0.a0.input'],
      ['s0.a1', 'send', 'awaiting approval: s0.a1.input'],
      ['s0.a2', 'lookup', 'not run yet'],
    ]);
  });

  it('takes the second request first, then the first, and the run ends with every call carried out', async () => {
    const second = await reply('several-2', { kind: 'deny', resultId: 's0.a1.input', reason: 'Not Bo.' });
    expect(second.status).toBe(202);
    expect(await second.json()).toEqual({ runId: 'several-2', resultId: 's0.a1.input' });
    const left = await summary('several-2');
    expect(left.openRequests.map((r) => r.resultId)).toEqual(['s0.a0.input']);
    expect(left.inFlight?.calls?.[1]?.status).toBe('deny landed');
    const foreign = await reply('several-2', { kind: 'approve', resultId: 's0.a1.input' });
    expect(foreign.status).toBe(409);
    expect((await reply('several-2', { kind: 'approve', resultId: 's0.a0.input' })).status).toBe(202);
    const done = await until('several-2', (s) => s.status === 'ended');
    expect(done.openRequests).toEqual([]);
    expect(SENT.filter((x) => x.runId === 'several-2')).toEqual([{ runId: 'several-2', to: 'ana@example.com' }]);
    const page = await fetch(`${viewer.origin}/runs/several-2/steps?from=0&limit=5`, { headers: headers() });
    const { steps } = (await page.json()) as {
      steps: { step: { calls?: { resultId: string; status: string; observation: string }[] } }[];
    };
    expect(steps[0]?.step.calls?.map((c) => [c.resultId, c.status, c.observation])).toEqual([
      ['s0.a0', 'executed', 'sent'],
      ['s0.a1', 'denied', 'Not Bo.'],
      ['s0.a2', 'executed', 'Oslo: 21°C <b>sunny</b>'],
    ]);
  });

  it('lands two replies sent at once to two open requests (202 each): the one that meets the run busy waits its turn', async () => {
    const [a, b] = await Promise.all([
      reply('several-3', { kind: 'approve', resultId: 's0.a0.input' }),
      reply('several-3', { kind: 'approve', resultId: 's0.a1.input' }),
    ]);
    expect([a.status, b.status], `${await a.text()} ${await b.text()}`).toEqual([202, 202]);
    await until('several-3', (s) => s.status === 'ended');
    expect(
      SENT.filter((x) => x.runId === 'several-3')
        .map((x) => x.to)
        .sort(),
    ).toEqual(['ana@example.com', 'bo@example.com']);
  });

  it("clips each call's observation in a page of steps, counting what it left out, and gives it whole for the step alone", async () => {
    await runIn(dir, 'several-big');
    for (const resultId of ['s0.a0.input', 's0.a1.input'])
      expect((await reply('several-big', { kind: 'deny', resultId, reason: 'No.' })).status).toBe(202);
    await until('several-big', (s) => s.status === 'ended');
    type Page = { steps: { step: { calls: { observation: string }[] }; observationClippedChars: number }[] };
    const page = async (full: string): Promise<Page['steps'][number] | undefined> =>
      (
        (await (
          await fetch(`${viewer.origin}/runs/several-big/steps?from=0&limit=1${full}`, { headers: headers() })
        ).json()) as Page
      ).steps[0];
    const clipped = await page('');
    expect(clipped?.step.calls[2]?.observation).toHaveLength(20_000);
    expect(clipped?.observationClippedChars).toBe(5 * 1024 * 1024 - 20_000);
    const whole = await page('&full=1');
    expect(whole?.step.calls[2]?.observation).toHaveLength(5 * 1024 * 1024);
    expect(whole?.observationClippedChars).toBe(0);
  });
});
