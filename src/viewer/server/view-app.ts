/**
 * The run viewer's HTTP app (hono): the built page, and the read API it talks to over a
 * {@link ViewSource}. Guarded for a server on a developer's machine: a `Host` header other than
 * the viewer's own is refused (DNS rebinding), every request but the page's files needs the
 * access key the viewer printed as `Authorization: Bearer <key>` (the page keeps it in its own
 * storage, never in a cookie: a browser sends a host's cookies to every port of that host), and a
 * reply must be JSON from the page's own origin.
 * @module
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { errorBody } from '../../core/internal-entry.ts';
import type { RunPage } from '../../core/internal-entry.ts';
import type { ViewRunRow } from './view-model.ts';
import type { ViewSource } from './view-source.ts';

/** Options of {@link createViewApp}. */
export type ViewAppOptions = {
  readonly source: ViewSource;
  /** The built page (`index.html` and `assets/`). */
  readonly pageDir: string;
  /** The access key every run route needs, as `Authorization: Bearer <key>`. */
  readonly key: string;
  /** The `host[:port]` values this server answers to (checked case-insensitively); null: any. */
  readonly hosts: () => readonly string[] | null;
};

/** A fresh access key: 128 random bits, URL-safe. */
export function newAccessKey(): string {
  return randomBytes(16).toString('base64url');
}

const MAX_STEPS_PAGE = 500;
const MAX_MESSAGES_PAGE = 500;
const MAX_REPLY_BYTES = 1024 * 1024;
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // The page's own files only: a log that smuggled markup into the DOM still could not run a script.
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};
const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  html: 'text/html; charset=utf-8',
};

/** The key of an `Authorization: Bearer <key>` header; a cookie or a query parameter is never read. */
function bearerKey(header: string | undefined): string | undefined {
  return /^Bearer ([\w-]{1,200})$/i.exec(header?.trim() ?? '')?.[1];
}

function sameKey(given: string | undefined, key: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
}

type FailStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 500;
type DoneStatus = 200 | 201 | 202;

function fail(c: Context, status: FailStatus, message: string, code?: string): Response {
  const byStatus: Partial<Record<FailStatus, string>> = { 404: 'not_found', 409: 'conflict', 401: 'unauthorized' };
  const named = code ?? byStatus[status] ?? 'bad_request';
  return c.json(errorBody(named, message), status);
}

/** A POSTed JSON body from the page's own origin, or the refusal to send. */
async function jsonBody(c: Context, what: string): Promise<{ value: unknown } | Response> {
  const origin = c.req.header('origin');
  if (origin !== undefined && new URL(c.req.url).origin !== origin) {
    return fail(c, 403, `${what} must come from the viewer page`);
  }
  if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
    return fail(c, 415, `${what} is JSON (content-type: application/json)`);
  }
  const text = await c.req.text();
  if (Buffer.byteLength(text) > MAX_REPLY_BYTES) return fail(c, 413, `${what} is at most ${MAX_REPLY_BYTES} bytes`);
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return fail(c, 400, `${what} is not valid JSON`);
  }
}

/** An integer query parameter within [min, max], the default when absent, or null when malformed. */
function intParam(value: string | undefined, fallback: number, min: number, max: number): number | null {
  if (value === undefined) return fallback;
  if (!/^\d{1,9}$/.test(value)) return null;
  return Math.min(max, Math.max(min, Number(value)));
}

/**
 * The viewer's app: `GET /` (the page), `GET /assets/*`, `GET /viewer` (what the page is looking
 * at), `GET /runs`, `GET /runs/:id`, `GET /runs/:id/steps?from=&limit=&full=1`, `GET
 * /runs/:id/log`, `GET /runs/:id/events` (SSE, `Last-Event-ID`), `GET /runs/:id/steps/:step/messages?from=&limit=`,
 * `POST /runs/:id/input`, `POST /runs/:id/upgrade` (`{ reason, input? }`), `POST /runs/:id/stop` (`{ reason? }`),
 * `POST /runs/:id/fork` (`{ atStep, newRunId }`).
 */
export function createViewApp(opts: ViewAppOptions): Hono {
  const app = new Hono();
  const { source } = opts;

  app.use('*', async (c, next) => {
    const host = (c.req.header('host') ?? '').toLowerCase();
    const hosts = opts.hosts();
    if (hosts !== null && !hosts.some((h) => h.toLowerCase() === host)) return c.text('unknown host', 403);
    await next();
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(k, v);
  });

  app.get('/assets/:file', async (c) => {
    const file = c.req.param('file');
    const ext = /^[\w.-]+\.(js|css|svg)$/.exec(file)?.[1];
    if (!ext || file.includes('..')) return fail(c, 404, 'no such file');
    const body = await readFile(join(opts.pageDir, 'assets', file)).catch(() => null);
    return body === null ? fail(c, 404, 'no such file') : c.body(body, 200, { 'content-type': TYPES[ext] as string });
  });

  // The page holds no run data, so it is served to anyone who can reach the viewer; it reads the
  // key from the URL's fragment (`#key=…`), which the browser never sends here.
  app.get('/', async (c) => {
    const html = await readFile(join(opts.pageDir, 'index.html')).catch(() => null);
    return html === null
      ? c.text('the viewer page is not built: run npm run build', 500)
      : c.body(html, 200, { 'content-type': TYPES['html'] as string });
  });

  // Everything below reads or changes runs: the key is needed, in the Authorization header only.
  // A cross-origin page cannot send that header here without a CORS preflight this server never
  // grants, and no other local server ever receives it.
  app.use('*', async (c, next) => {
    if (!sameKey(bearerKey(c.req.header('authorization')), opts.key)) {
      c.header('www-authenticate', 'Bearer realm="polyloop view"');
      return fail(c, 401, 'no access key: open the URL polyloop view printed');
    }
    await next();
  });

  app.get('/viewer', (c) => c.json(source.describe));
  app.get('/runs', async (c) => c.json<RunPage<ViewRunRow>>({ runs: await source.list(), nextCursor: null }));

  app.get('/runs/:id', async (c) => {
    const summary = await source.summary(c.req.param('id'));
    return summary === null ? fail(c, 404, `no run ${JSON.stringify(c.req.param('id'))}`) : c.json(summary);
  });

  app.get('/runs/:id/steps', async (c) => {
    const from = intParam(c.req.query('from'), 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(c.req.query('limit'), 100, 1, MAX_STEPS_PAGE);
    if (from === null || limit === null) return fail(c, 400, 'from and limit must be non-negative integers');
    const steps = await source.steps(c.req.param('id'), from, limit, c.req.query('full') === '1');
    return steps === null ? fail(c, 404, `no run ${JSON.stringify(c.req.param('id'))}`) : c.json({ from, steps });
  });

  app.get('/runs/:id/steps/:step/messages', async (c) => {
    const step = intParam(c.req.param('step'), 0, 0, Number.MAX_SAFE_INTEGER);
    const from = intParam(c.req.query('from'), 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(c.req.query('limit'), 200, 1, MAX_MESSAGES_PAGE);
    if (step === null || from === null || limit === null)
      return fail(c, 400, 'the step, from and limit must be non-negative integers');
    const page = await source.messages(c.req.param('id'), step, from, limit);
    if (page === null) return fail(c, 404, `no run ${JSON.stringify(c.req.param('id'))}`);
    if (page === 'no_call') return fail(c, 404, `step ${step} made no model call in this run's log`);
    return c.json(page);
  });

  app.get('/runs/:id/log', async (c) => {
    const log = await source.log(c.req.param('id'));
    return log === null
      ? fail(c, 404, `no run ${JSON.stringify(c.req.param('id'))}`)
      : c.body(log, 200, { 'content-type': 'application/x-ndjson; charset=utf-8' });
  });

  app.get('/runs/:id/events', async (c) => {
    const last = c.req.header('last-event-id')?.trim();
    if (last !== undefined && !/^\d{1,15}$/.test(last))
      return fail(c, 400, 'Last-Event-ID must be a record sequence number');
    const res = await source.events(c.req.param('id'), last === undefined ? -1 : Number(last), c.req.raw.signal);
    return res ?? fail(c, 404, `no run ${JSON.stringify(c.req.param('id'))}`);
  });

  app.post('/runs/:id/input', async (c) => {
    const body = await jsonBody(c, 'a reply');
    if (body instanceof Response) return body;
    const answer = await source.answer(c.req.param('id'), body.value);
    if (answer.status === 202) return c.json(answer.body ?? {}, 202);
    return fail(c, answer.status as FailStatus, answer.message, answer.code);
  });

  app.post('/runs/:id/upgrade', async (c) => {
    const body = await jsonBody(c, 'an upgrade');
    if (body instanceof Response) return body;
    if (!source.upgrade) {
      const why = source.describe.source === 'worker' ? "a Worker's runs go on with its own agent" : 'it has no agent';
      return fail(c, 409, `this viewer cannot upgrade runs: ${why}`);
    }
    const answer = await source.upgrade(c.req.param('id'), body.value);
    if (answer.status === 202) return c.json(answer.body ?? {}, 202);
    return fail(c, answer.status as FailStatus, answer.message, answer.code);
  });

  // A person in control: the body's checks, then the source's answer (the Worker's, over a Worker).
  for (const [route, what] of [
    ['stop', 'a stop'],
    ['fork', 'a fork'],
  ] as const) {
    app.post(`/runs/:id/${route}`, async (c) => {
      const body = await jsonBody(c, what);
      if (body instanceof Response) return body;
      const answer = await source[route](c.req.param('id'), body.value);
      if (answer.status >= 200 && answer.status < 300) {
        const url = route === 'fork' ? (answer.body as { url?: unknown } | undefined)?.url : undefined;
        return c.json(answer.body ?? {}, answer.status as DoneStatus, typeof url === 'string' ? { location: url } : {});
      }
      return fail(c, answer.status as FailStatus, answer.message, answer.code);
    });
  }

  app.notFound((c) => fail(c, 404, `no route ${c.req.method} ${new URL(c.req.url).pathname}`));
  app.onError((err, c) => {
    // The Worker behind a worker source answered something unexpected: its words (never the token) help the reader.
    if (err.name === 'WorkerUnreachableError') return c.json(errorBody('bad_gateway', err.message), 502);
    console.error('polyloop view: request failed:', err);
    return c.json(errorBody('internal', "internal error (see the viewer's terminal)"), 500);
  });
  return app;
}
