import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/platform-workers/index.ts';
import { MAX_BODY_BYTES } from '../../src/platform-workers/body.ts';
import { call, startRun, status, waitFor } from './http.ts';

type ErrorBody = { error: { code: string; message: string } };
const uid = (p: string): string => `${p}-${crypto.randomUUID()}`;
const UNAUTHORIZED = 'unauthorized: send Authorization: Bearer <token>';

async function expectError(res: Response, statusCode: number, code: string): Promise<string> {
  expect(res.status).toBe(statusCode);
  const text = await res.text();
  const body = JSON.parse(text) as ErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(text).not.toMatch(/\n\s+at |\.ts:\d+/);
  return body.error.message;
}

describe('the HTTP app in workerd', () => {
  it('runs the demo agent to its final answer through the app, with status and trajectory', async () => {
    const runId = await startRun('hello brave new world');
    const done = await waitFor(runId, (s) => s.status === 'ended');
    expect(done).toEqual({
      runId,
      status: 'ended',
      stopReason: 'final_answer',
      finalAnswer: 'olleh evarb wen dlrow',
      steps: 5,
      validActions: 4,
      pending: null,
      openRequests: [],
      children: [],
      error: null,
    });
    const res = await call(`/runs/${runId}/trajectory`);
    expect(res.status).toBe(200);
    const traj = (await res.json()) as {
      runId: string;
      steps: { stepIndex: number; decision: string; observation: string | null }[];
    };
    expect(traj.runId).toBe(runId);
    expect(traj.steps.map((s) => s.decision)).toEqual(['action', 'action', 'action', 'action', 'final']);
    expect(traj.steps.map((s) => s.observation).slice(0, 4)).toEqual(['olleh', 'evarb', 'wen', 'dlrow']);
  });

  it("uses the caller's runId, and answers 409 when that run already exists", async () => {
    const runId = uid('mine');
    expect(await startRun('one two', runId)).toBe(runId);
    const again = await call('/runs', { method: 'POST', body: JSON.stringify({ runId, input: 'other' }) });
    await expectError(again, 409, 'conflict');
    await waitFor(runId, (s) => s.status === 'ended');
  });

  it('makes a UUID when runId is absent', async () => {
    const runId = await startRun('one');
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses every route without a token, or with a wrong one, with 401', async () => {
    for (const [path, method] of [
      ['/runs', 'POST'],
      ['/runs/x', 'GET'],
      ['/runs/x/trajectory', 'GET'],
      ['/runs/x/events', 'GET'],
      ['/runs/x/cancel', 'POST'],
      ['/nope', 'GET'],
    ] as const) {
      const message = await expectError(await call(path, { method, token: null }), 401, 'unauthorized');
      expect(message).toBe(UNAUTHORIZED);
      await expectError(await call(path, { method, token: 'wrong-token' }), 401, 'unauthorized');
    }
  });

  it('refuses every request when no token is configured', async () => {
    const app = createApp<Cloudflare.Env>({ runs: (e) => e.RUNS });
    const unset = { RUNS: env.RUNS } as Cloudflare.Env;
    const res = await app.fetch(new Request('http://x/runs/abc', { headers: { authorization: 'Bearer ' } }), unset);
    expect(await expectError(res, 401, 'unauthorized')).toBe(UNAUTHORIZED);
    const post = new Request('http://x/runs', {
      method: 'POST',
      body: '{"input":"x"}',
      headers: { authorization: 'Bearer anything' },
    });
    await expectError(await app.fetch(post, { RUNS: env.RUNS, POLYLOOP_TOKEN: '' }), 401, 'unauthorized');
    const custom = createApp<Cloudflare.Env>({ runs: (e) => e.RUNS, token: () => undefined });
    await expectError(
      await custom.fetch(new Request('http://x/runs/abc', { headers: { authorization: 'Bearer test-token' } }), env),
      401,
      'unauthorized',
    );
  });

  it('answers 400 for malformed JSON and for bodies that break the schema', async () => {
    const post = (body: string): Promise<Response> => call('/runs', { method: 'POST', body });
    expect(await expectError(await post('{"input": '), 400, 'bad_request')).toMatch(/not valid JSON/);
    expect(await expectError(await post('[1,2]'), 400, 'bad_request')).toBeTruthy();
    expect(await expectError(await post('{"runId":"x"}'), 400, 'bad_request')).toMatch(/input/);
    expect(await expectError(await post('{"runId":"a/b","input":"x"}'), 400, 'bad_request')).toMatch(/runId/);
    expect(
      await expectError(await post(JSON.stringify({ runId: 'r'.repeat(201), input: 'x' })), 400, 'bad_request'),
    ).toMatch(/runId/);
    expect(await expectError(await post('{"input":"x","extra":1}'), 400, 'bad_request')).toMatch(/extra/);
  });

  it('answers 400 when the agent factory rejects the input, and stores nothing', async () => {
    const runId = uid('rejected');
    const res = await call('/runs', { method: 'POST', body: JSON.stringify({ runId, input: { goal: 42 } }) });
    expect(await expectError(res, 400, 'bad_request')).toMatch(/demo agent takes a goal string/);
    await expectError(await call(`/runs/${runId}`), 404, 'not_found');
  });

  it('answers 413 for a body over 1 MiB that is not the import form (or not JSON at all), after auth and before its schema is checked', async () => {
    const big = JSON.stringify({ input: 'x'.repeat(MAX_BODY_BYTES) });
    await expectError(await call('/runs', { method: 'POST', body: big }), 413, 'payload_too_large');
    await expectError(
      await call('/runs', { method: 'POST', body: `{${'x'.repeat(MAX_BODY_BYTES)}` }),
      413,
      'payload_too_large',
    );
    await expectError(await call('/runs', { method: 'POST', body: big, token: null }), 401, 'unauthorized');
    const streamed = new Blob([big]).stream();
    await expectError(
      await call('/runs', { method: 'POST', body: streamed, duplex: 'half' } as RequestInit),
      413,
      'payload_too_large',
    );
  });

  it('accepts a body of exactly 1 MiB', async () => {
    const prefix = '{"input":{"goal":"a","pauseMs":0},"runId":"exact-';
    const id = crypto.randomUUID();
    const body = `${prefix}${id}"${' '.repeat(MAX_BODY_BYTES - prefix.length - id.length - 2)}}`;
    expect(new TextEncoder().encode(body).byteLength).toBe(MAX_BODY_BYTES);
    const res = await call('/runs', { method: 'POST', body });
    expect(res.status).toBe(201);
  });

  it('answers 404 for unknown runs on every run route', async () => {
    const id = uid('unknown');
    await expectError(await call(`/runs/${id}`), 404, 'not_found');
    await expectError(await call(`/runs/${id}/trajectory`), 404, 'not_found');
    await expectError(await call(`/runs/${id}/events`), 404, 'not_found');
    await expectError(await call(`/runs/${id}/cancel`, { method: 'POST' }), 404, 'not_found');
  });

  it('reports a started run as running with zero steps and null outcome before it ends', async () => {
    const runId = await startRun({ goal: 'slow words here', pauseMs: 300 });
    const s = await status(runId);
    expect(s).toMatchObject({ runId, status: 'running', stopReason: null, finalAnswer: null, error: null });
    await call(`/runs/${runId}/cancel`, { method: 'POST' });
    await waitFor(runId, (x) => x.status === 'ended');
  });

  it('says why a failed run failed in error, as RunResult.error does', async () => {
    const runId = uid('failed');
    const res = await call('/probes/runs', {
      method: 'POST',
      body: JSON.stringify({ runId, input: { goal: 'one', fault: 'fails-model' } }),
    });
    expect(res.status).toBe(201);
    const done = await waitFor(runId, (s) => s.status === 'ended', 15_000, '/probes');
    expect(done).toMatchObject({
      status: 'ended',
      stopReason: 'model_error',
      finalAnswer: null,
      steps: 1,
      validActions: 0,
    });
    expect(done.error).toMatch(/the model is down/);
    const trajectory = (await (await call(`/probes/runs/${runId}/trajectory`)).json()) as {
      steps: { observation: string | null }[];
    };
    expect(done.error).toBe(trajectory.steps.at(-1)?.observation);
  });

  it('cancels a run mid-way: 202, then the run ends cancelled with its finished steps kept, and a second cancel is a 409', async () => {
    // Forty words at 100 ms a call: a run of some 8 s, so a loaded machine still cancels it mid-way.
    const runId = await startRun({ goal: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), pauseMs: 100 });
    await waitFor(runId, (s) => s.steps >= 2);
    const res = await call(`/runs/${runId}/cancel`, { method: 'POST' });
    expect(res.status).toBe(202);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    expect(done.stopReason).toBe('cancelled');
    expect(done.steps).toBeGreaterThanOrEqual(2);
    expect(done.steps).toBeLessThan(41);
    await expectError(await call(`/runs/${runId}/cancel`, { method: 'POST' }), 409, 'conflict');
  });
});

describe('the bearer token check', () => {
  it('accepts the scheme in any case and one or more spaces before the token (RFC 6750: "Bearer" 1*SP token)', async () => {
    for (const header of ['Bearer test-token', 'bearer test-token', 'BEARER test-token', 'Bearer   test-token']) {
      const res = await call('/runs/no-such-run', { token: null, headers: { authorization: header } });
      expect(res.status, header).toBe(404);
    }
    for (const header of [
      'Bearer',
      'Bearer test-token extra',
      'Basic test-token',
      'Bearertest-token',
      'Bearer test-tokenx',
    ]) {
      const res = await call('/runs/no-such-run', { token: null, headers: { authorization: header } });
      expect(res.status, header).toBe(401);
    }
  });
});

describe('the 1 MiB body limit', () => {
  it('counts the bytes actually sent when Content-Length understates them, for a plain and a streamed body', async () => {
    const big = JSON.stringify({ input: 'x'.repeat(MAX_BODY_BYTES) });
    const plain = await call('/runs', { method: 'POST', body: big, headers: { 'content-length': '10' } });
    await expectError(plain, 413, 'payload_too_large');
    const streamed = await call('/runs', {
      method: 'POST',
      body: new Blob([big]).stream(),
      duplex: 'half',
      headers: { 'content-length': '10' },
    } as RequestInit);
    await expectError(streamed, 413, 'payload_too_large');
  });
});

describe('the demo agent', () => {
  it('answers a goal of as many words as it reverses (12), and reverses only the first 12 of a longer one', async () => {
    const words = Array.from({ length: 14 }, (_, i) => `w${i}x`);
    for (const n of [12, 14]) {
      const runId = await startRun(words.slice(0, n).join(' '));
      const done = await waitFor(runId, (s) => s.status === 'ended');
      expect(done, `${n} words`).toMatchObject({ stopReason: 'final_answer', steps: 13, validActions: 12 });
      expect(done.finalAnswer).toBe(
        words
          .slice(0, 12)
          .map((w) => [...w].reverse().join(''))
          .join(' '),
      );
    }
  });
});

describe('run ids that a URL path cannot carry', () => {
  it('refuses "." and ".." with 400 (URL normalisation would make such a run unreachable), and accepts "..."', async () => {
    for (const runId of ['.', '..']) {
      const res = await call('/runs', { method: 'POST', body: JSON.stringify({ runId, input: 'a' }) });
      expect(await expectError(res, 400, 'bad_request')).toMatch(/runId/);
    }
    const runId = `...${crypto.randomUUID()}`;
    expect(await startRun('a', runId)).toBe(runId);
    expect((await status(runId)).runId).toBe(runId);
  });
});
