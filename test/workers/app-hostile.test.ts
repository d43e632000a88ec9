import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/platform-workers/index.ts';
import type { RunStatus } from '../../src/platform-workers/index.ts';
import type { StartOutcome } from '../../src/platform-workers/run-setup.ts';
import { call, startRun, waitFor } from './http.ts';

type RunRpc = { start(runId: string, input: unknown): Promise<StartOutcome>; status(): Promise<RunStatus | null> };
type ErrorBody = { error: { code: string; message: string } };

async function expectError(res: Response, statusCode: number, code: string): Promise<string> {
  const text = await res.text();
  expect(res.status, text).toBe(statusCode);
  const body = JSON.parse(text) as ErrorBody;
  expect(body.error.code).toBe(code);
  expect(text).not.toMatch(/\n\s+at |\.ts:\d+/);
  return body.error.message;
}

const nested = (depth: number, leaf = '"x"'): string => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

describe('a deeply nested input (workerd)', () => {
  it('answers 400 bad_request naming the depth limit for an input 100,000 levels deep, within the 1 MiB limit', async () => {
    const body = `{"input":${nested(100_000)}}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    const message = await expectError(await call('/runs', { method: 'POST', body }), 400, 'bad_request');
    expect(message).toMatch(/input.*nested more than 100 levels/);
  });

  it('answers 400 for an input one level over the limit, and accepts one at the limit', async () => {
    // The demo agent refuses an array input, so "accepted" here means: past the depth check, refused by the factory.
    const over = await call('/runs', { method: 'POST', body: `{"input":${nested(101)}}` });
    expect(await expectError(over, 400, 'bad_request')).toMatch(/nested more than 100 levels/);
    const at = await call('/runs', { method: 'POST', body: `{"input":${nested(100)}}` });
    expect(await expectError(at, 400, 'bad_request')).not.toMatch(/nested/);
  });

  it('answers 400 for a deep object in an otherwise valid input', async () => {
    const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    const res = await call('/runs', { method: 'POST', body: `{"input":{"goal":"a b","extra":${deep}}}` });
    expect(await expectError(res, 400, 'bad_request')).toMatch(/^input\.extra.*nested more than 100 levels/);
  });

  it('is refused by the run object itself when its start is called over RPC, and nothing is stored', async () => {
    const runId = `deep-rpc-${crypto.randomUUID()}`;
    const stub = env.RUNS.get(env.RUNS.idFromName(runId)) as unknown as RunRpc;
    const outcome = await stub.start(runId, { goal: 'a', deep: JSON.parse(nested(500)) as unknown });
    expect(outcome).toMatchObject({ ok: false, code: 'bad_request' });
    expect(outcome.ok ? '' : outcome.message).toMatch(/input\.deep.*nested more than 100 levels/);
    expect(await stub.status()).toBeNull();
  });
});

describe('bodies that are JSON but not an object (workerd)', () => {
  it('answers 400 bad_request for null, an array, a string, a number and a boolean', async () => {
    for (const body of ['null', '[]', '"input"', '42', 'true', '[{"input":"x"}]']) {
      const message = await expectError(await call('/runs', { method: 'POST', body }), 400, 'bad_request');
      expect(message, body).toMatch(/body/);
    }
  });

  it('answers 400 for a runId that is not a string and for a __proto__ key, and passes an input holding __proto__ through', async () => {
    for (const body of [
      '{"runId":null,"input":"a"}',
      '{"runId":5,"input":"a"}',
      '{"runId":["a"],"input":"a"}',
      '{"input":"a","__proto__":{"runId":"x"}}',
    ]) {
      await expectError(await call('/runs', { method: 'POST', body }), 400, 'bad_request');
    }
    const res = await call('/runs', { method: 'POST', body: '{"input":{"goal":"a b","__proto__":{"pauseMs":5}}}' });
    expect(await expectError(res, 400, 'bad_request')).toMatch(/demo agent takes/);
  });

  it('answers 400 for an empty body and a body of only whitespace', async () => {
    for (const body of ['', '   \n'])
      await expectError(await call('/runs', { method: 'POST', body }), 400, 'bad_request');
  });

  it('answers 400 for a body that is not valid UTF-8', async () => {
    const res = await call('/runs', { method: 'POST', body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) });
    expect(await expectError(res, 400, 'bad_request')).toMatch(/UTF-8/);
  });
});

describe('hostile run ids in the path (workerd)', () => {
  it('answers 404 not_found (never 500) for ids the rule refuses, on every run route', async () => {
    const ids = ['%00', '%FF', '%E2%28%A1', 'a%2Fb', '%2E%2E', 'x'.repeat(201), '%F0%9F%98%80', 'a%20b', '%', '%zz'];
    for (const id of ids) {
      for (const [path, method] of [
        [`/runs/${id}`, 'GET'],
        [`/runs/${id}/trajectory`, 'GET'],
        [`/runs/${id}/events`, 'GET'],
        [`/runs/${id}/cancel`, 'POST'],
      ] as const) {
        await expectError(await call(path, { method }), 404, 'not_found');
      }
    }
  });
});

describe('Last-Event-ID values (workerd)', () => {
  it('answers 400 bad_request for values that are not a record sequence number, and never 500', async () => {
    const runId = await startRun('one two');
    await waitFor(runId, (s) => s.status === 'ended');
    for (const value of ['-1', 'abc', '1e3', '0x10', '1.5', '9'.repeat(16), ' ', '+1']) {
      const res = await call(`/runs/${runId}/events`, { headers: { 'last-event-id': value } });
      expect(await expectError(res, 400, 'bad_request'), JSON.stringify(value)).toMatch(/Last-Event-ID/);
    }
  });

  it('answers 400 for a sequence number beyond the log', async () => {
    const runId = await startRun('one two');
    await waitFor(runId, (s) => s.status === 'ended');
    expect(
      await expectError(
        await call(`/runs/${runId}/events`, { headers: { 'last-event-id': '999999999999999' } }),
        400,
        'bad_request',
      ),
    ).toMatch(/beyond/);
  });
});

describe('the 401 body (workerd)', () => {
  it('says a bearer token is expected and nothing more, the same whether no token is configured or the token is wrong or missing', async () => {
    const app = createApp<Cloudflare.Env>({ runs: (e) => e.RUNS });
    const unset = { RUNS: env.RUNS } as Cloudflare.Env;
    const bodies = new Set<string>();
    const withToken = (token: string | null): Request =>
      new Request('http://x/runs/abc', token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
    for (const [request, bindings] of [
      [withToken('anything'), unset],
      [withToken(null), unset],
      [withToken('anything'), { RUNS: env.RUNS, POLYLOOP_TOKEN: '' }],
      [withToken('wrong-token'), env],
      [withToken(null), env],
    ] as const) {
      const res = await app.fetch(request, bindings);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      bodies.add(await res.text());
    }
    expect([...bodies]).toEqual([
      JSON.stringify({ error: { code: 'unauthorized', message: 'unauthorized: send Authorization: Bearer <token>' } }),
    ]);
    // Nothing of the real token, not even its length.
    expect([...bodies][0]).not.toContain('test-token');
    expect([...bodies][0]).not.toMatch(/\d/);
  });
});
