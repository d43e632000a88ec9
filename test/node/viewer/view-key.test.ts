/**
 * Where the viewer's access key lives (decision 0048): in the printed URL's fragment, then in the
 * page's own storage, sent as `Authorization: Bearer` — never in a cookie. A browser sends a
 * 127.0.0.1 cookie to every port of 127.0.0.1, so a key kept in one reached any local server the
 * user opened in the same browser.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewer, ViewerRefusedError } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import agentFor from './agent.ts';
import { runIn } from './runs.ts';

let dir: string;
let pageDir: string;
let viewer: RunningViewer;

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-key-');
  pageDir = await dirs.make('polyloop-viewer-page-');
  await mkdir(join(pageDir, 'assets'));
  await writeFile(join(pageDir, 'index.html'), '<!doctype html><title>viewer</title>');
  await writeFile(join(pageDir, 'assets', 'index-abc.js'), 'console.log(1)');
  await runIn(dir, 'approve-1');
  viewer = await startViewer({
    source: await dirSource({ dir, agent: agentFor, pollMs: 20, log: () => undefined }),
    pageDir,
  });
}, 30_000);

afterAll(async () => {
  await viewer?.close();
});

const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
/** What the old viewer made a browser keep (and send to every port of 127.0.0.1). */
const oldCookie = (v: RunningViewer): Record<string, string> => ({
  cookie: `polyloop_view_${new URL(v.origin).port}=${v.key}; polyloop_view=${v.key}`,
});

/** Every route the viewer has, as [method, path, body]. */
const ROUTES: readonly (readonly [string, string, unknown?])[] = [
  ['GET', '/'],
  ['GET', `/?key=placeholder`],
  ['GET', '/assets/index-abc.js'],
  ['GET', '/viewer'],
  ['GET', '/runs'],
  ['GET', '/runs/approve-1'],
  ['GET', '/runs/approve-1/steps?from=0&limit=5'],
  ['GET', '/runs/approve-1/log'],
  ['GET', '/runs/approve-1/events'],
  ['POST', '/runs/approve-1/input', { kind: 'approve', resultId: 's9.input' }],
  ['GET', '/nowhere'],
];

async function call(
  v: RunningViewer,
  [method, path, body]: readonly [string, string, unknown?],
  headers: Record<string, string>,
): Promise<Response> {
  const ctrl = new AbortController();
  const res = await fetch(`${v.origin}${path.replace('placeholder', v.key)}`, {
    method,
    redirect: 'manual',
    signal: ctrl.signal,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // The event stream of a waiting run stays open: its headers are all this test needs.
  if (path.endsWith('/events')) ctrl.abort();
  else await res.arrayBuffer();
  return res;
}

describe('the access key is never in a cookie', () => {
  it('prints a URL that carries the key in its fragment, which a browser never sends to a server', () => {
    expect(viewer.url).toBe(`${viewer.origin}/#key=${viewer.key}`);
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#key=[\w-]{22}$/);
    expect(new URL(viewer.url).search).toBe('');
  });

  it('sets no cookie on any route, with the key, without it, or with the old ?key= URL', async () => {
    for (const headers of [{}, bearer(viewer.key), oldCookie(viewer)]) {
      for (const route of ROUTES) {
        const res = await call(viewer, route, headers);
        expect(res.headers.get('set-cookie'), `${route[0]} ${route[1]}`).toBeNull();
      }
    }
  });

  it('refuses every run route to a request that carries only the old cookie (401), and writes nothing', async () => {
    for (const route of ROUTES.filter(([, p]) => p === '/viewer' || p.startsWith('/runs'))) {
      const res = await call(viewer, route, oldCookie(viewer));
      expect(res.status, `${route[0]} ${route[1]}`).toBe(401);
    }
  });

  it('answers every run route to the key as a bearer token, and to nothing else', async () => {
    for (const route of ROUTES.filter(([, p]) => p === '/viewer' || p.startsWith('/runs'))) {
      const ok = await call(viewer, route, bearer(viewer.key));
      // The reply names another request on purpose: 409, past the key check, nothing written.
      expect(ok.status, `${route[0]} ${route[1]}`).toBe(route[0] === 'POST' ? 409 : 200);
      for (const wrong of [
        bearer(`${viewer.key}x`),
        bearer(viewer.key.slice(1)),
        { authorization: viewer.key },
        { authorization: `Basic ${viewer.key}` },
        { 'x-polyloop-key': viewer.key },
      ]) {
        expect((await call(viewer, route, wrong)).status, `${route[1]} with ${JSON.stringify(wrong)}`).toBe(401);
      }
    }
  });

  it('takes the key from no query parameter: the old URL opens the page but not the runs', async () => {
    expect((await fetch(`${viewer.origin}/runs?key=${viewer.key}`)).status).toBe(401);
    expect((await fetch(`${viewer.origin}/runs/approve-1/events?key=${viewer.key}`)).status).toBe(401);
    expect((await fetch(`${viewer.origin}/?key=${viewer.key}`, { redirect: 'manual' })).status).toBe(200);
  });

  it('serves the page and its assets without the key: they hold no run data', async () => {
    const page = await fetch(`${viewer.origin}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('<!doctype html><title>viewer</title>');
    expect((await fetch(`${viewer.origin}/assets/index-abc.js`)).status).toBe(200);
  });

  it("gives each of two viewers on one host its own key: one viewer's key opens nothing on the other", async () => {
    const other = await startViewer({ source: await dirSource({ dir }), pageDir });
    try {
      expect(other.key).not.toBe(viewer.key);
      expect((await fetch(`${other.origin}/runs`, { headers: bearer(viewer.key) })).status).toBe(401);
      expect((await fetch(`${other.origin}/runs`, { headers: bearer(other.key) })).status).toBe(200);
      expect((await fetch(`${viewer.origin}/runs`, { headers: bearer(viewer.key) })).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('refuses a chosen key that is short or that a header or fragment would mangle', async () => {
    for (const key of [
      'short',
      'a'.repeat(15),
      `${'a'.repeat(20)} b`,
      `${'a'.repeat(20)};x=y`,
      `${'a'.repeat(20)}\n`,
    ]) {
      await expect(
        startViewer({ source: await dirSource({ dir }), pageDir, key }),
        JSON.stringify(key),
      ).rejects.toBeInstanceOf(ViewerRefusedError);
    }
    const chosen = await startViewer({ source: await dirSource({ dir }), pageDir, key: 'a-chosen_key-0123456789' });
    try {
      expect(chosen.url).toBe(`${chosen.origin}/#key=a-chosen_key-0123456789`);
      expect((await fetch(`${chosen.origin}/runs`, { headers: bearer('a-chosen_key-0123456789') })).status).toBe(200);
    } finally {
      await chosen.close();
    }
  });
});
