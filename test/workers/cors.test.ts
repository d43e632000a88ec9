/**
 * CORS of the HTTP app in workerd: the demo Worker allows the example page's origins; a preflight
 * is answered before auth; answers carry the CORS headers for allowed origins only; an app made
 * without the option answers no preflight (the probe app under /probes is one).
 */
import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/platform-workers/index.ts';
import { BASE, call, startRun, waitFor } from './http.ts';

const PAGE = 'http://127.0.0.1:5173';
const STRANGER = 'https://evil.example';

function preflight(path: string, origin: string, prefix = ''): Promise<Response> {
  return call(`${prefix}${path}`, {
    method: 'OPTIONS',
    token: null,
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });
}

describe('CORS (workerd)', () => {
  it('answers a preflight from an allowed origin with 204 before any token is checked', async () => {
    const res = await preflight('/runs', PAGE);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization,content-type,last-event-id');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('vary')).toMatch(/Origin/);
  });

  it('gives a preflight from another origin no Access-Control-Allow-Origin, so the browser refuses the call', async () => {
    const res = await preflight('/runs', STRANGER);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('puts the allowed origin on answers of every kind (201, 200, SSE, 401, 404), and nothing for another origin', async () => {
    const created = await call('/runs', {
      method: 'POST',
      headers: { origin: PAGE },
      body: JSON.stringify({ input: 'one' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe(PAGE);
    const { runId } = (await created.json()) as { runId: string };
    await waitFor(runId, (s) => s.status === 'ended');
    const cases: [string, RequestInit & { token?: string | null }, number][] = [
      [`/runs/${runId}`, {}, 200],
      [`/runs/${runId}/events`, {}, 200],
      [`/runs/${runId}`, { token: 'wrong' }, 401],
      [`/runs/no-such-run`, {}, 404],
    ];
    for (const [path, init, code] of cases) {
      const allowed = await call(path, { ...init, headers: { origin: PAGE } });
      expect(allowed.status).toBe(code);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(PAGE);
      expect(allowed.headers.get('vary')).toMatch(/Origin/);
      await allowed.body?.cancel();
      const other = await call(path, { ...init, headers: { origin: STRANGER } });
      expect(other.status).toBe(code);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      await other.body?.cancel();
    }
    expect(
      (await call(`/runs/${runId}`, { headers: { origin: PAGE } })).headers.get('access-control-expose-headers'),
    ).toBe('www-authenticate');
  });

  it('leaves CORS out by default: a preflight to an app without the option is a 401 with no CORS header', async () => {
    const res = await preflight('/runs', PAGE, '/probes');
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const plain = await call(`/probes/runs/x`, { headers: { origin: PAGE } });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows any origin with ["*"]', async () => {
    const app = createApp<Cloudflare.Env>({ runs: (e) => e.RUNS, cors: { origins: ['*'], maxAgeSeconds: 60 } });
    const res = await app.fetch(
      new Request(`${BASE}/runs`, {
        method: 'OPTIONS',
        headers: { origin: STRANGER, 'access-control-request-method': 'GET' },
      }),
      env,
      createExecutionContext(),
    );
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-max-age')).toBe('60');
    const runId = await startRun('one');
    const got = await app.fetch(
      new Request(`${BASE}/runs/${runId}`, { headers: { origin: STRANGER, authorization: 'Bearer test-token' } }),
      env,
      createExecutionContext(),
    );
    expect(got.status).toBe(200);
    expect(got.headers.get('access-control-allow-origin')).toBe('*');
  });

  it.each(['http://localhost:5173/', 'localhost:5173', 'https://app.example.com/path', ''])(
    'refuses the origin %j when the app is made, with a TypeError naming it',
    (origin) => {
      expect(() => createApp<Cloudflare.Env>({ runs: (e) => e.RUNS, cors: { origins: [origin] } })).toThrow(TypeError);
      expect(() => createApp<Cloudflare.Env>({ runs: (e) => e.RUNS, cors: { origins: [origin] } })).toThrow(
        JSON.stringify(origin),
      );
    },
  );
});
