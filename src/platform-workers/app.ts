/**
 * The HTTP surface of docs/http.md, as a `hono` app that routes each run to its own Durable Object.
 * @module
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import { cors } from 'hono/cors';
import * as z from 'zod/mini';
import { checkOptionKeys, errorBody, jsonProblem } from '../core/internal-entry.ts';
import { drainBody, exceedsBytes, MAX_BODY_BYTES, MAX_IMPORT_BODY_BYTES, readBody, readJsonBody } from './body.ts';
import type { InputReply } from '../core/index.ts';
import type { InputAccepted, OptionKeys, RunCreated, UpgradeAccepted } from '../core/internal-entry.ts';
import { chatRoutes } from './chat-routes.ts';
import { type ControlRpc, controlRoutes } from './control-routes.ts';
import type { ChatNamespaceOf } from './chat-routes.ts';
import { RUN_ID_PATTERN } from './run-id.ts';
import type { RunObjectBase } from './run-object.ts';
import { replyShapeProblem, upgradeBodyProblem } from './run-input.ts';
import type { CancelOutcome, InputOutcome, UpgradeOutcome } from './run-input.ts';
import { listQuery } from './run-list.ts';
import { runIndexStub } from './run-report.ts';
import type { RunIndexNamespace } from './run-report.ts';
import type { StartOutcome } from './run-setup.ts';
import type { RunStatus, RunTrajectory, UnreadableLog } from './run-status.ts';

/** Error codes of the HTTP surface; every error body is `{ error: { code, message } }`. */
export type HttpErrorCode =
  | 'unauthorized'
  | 'payload_too_large'
  | 'bad_request'
  | 'not_found'
  | 'conflict'
  | 'unreadable_log'
  | 'internal';

/** Options of {@link createApp}. */
export type AppOptions<Env> = {
  /** The Durable Object namespace whose class came from `createRunObject`. */
  readonly runs: (env: Env) => DurableObjectNamespace<RunObjectBase<Env>>;
  /** The bearer token (default: `env.POLYLOOP_TOKEN`). Missing or empty: every request is refused. */
  readonly token?: (env: Env) => string | undefined;
  /**
   * The run index binding (`RunIndex`), which `GET /runs` reads; give the same to
   * `createRunObject`, whose objects keep it up to date. Without it `GET /runs` is a 404.
   */
  readonly index?: (env: Env) => RunIndexNamespace;
  /** Cross-origin access for browser pages (default: none, so a browser refuses every cross-origin call). */
  readonly cors?: CorsOptions;
  /**
   * The chat turn objects' namespace (a class from `createChatTurnObject`): adds `POST /chat`,
   * `GET /chat/:chatId/stream` and `GET /chat/:chatId/messages` for `useChat` (docs/http.md).
   */
  readonly chat?: ChatNamespaceOf<Env>;
};

/**
 * CORS of {@link createApp}: a preflight (`OPTIONS`) is answered `204` before the token is
 * checked; every other answer to an allowed origin carries `Access-Control-Allow-Origin`.
 * Requests still need the bearer token (no cookies are involved, so no credentials mode).
 */
export type CorsOptions = {
  /** Exact origins (`https://app.example.com`, `http://localhost:5173`), or `['*']` for any origin. */
  readonly origins: readonly string[];
  /** How long a browser may cache a preflight answer (default 600 s). */
  readonly maxAgeSeconds?: number;
};

const APP_OPTIONS: OptionKeys<AppOptions<unknown>> = { runs: true, token: true, index: true, cors: true, chat: true };
const CORS_OPTIONS: OptionKeys<CorsOptions> = { origins: true, maxAgeSeconds: true };

const StartBody = z.strictObject({
  runId: z.optional(
    z.string().check(
      z.regex(RUN_ID_PATTERN, 'must be 1-200 characters of [A-Za-z0-9._:-]'),
      // Matches the rule, but URL normalisation turns /runs/. and /runs/..
      // into other paths: such a run could never be read or cancelled.
      z.refine((id) => id !== '.' && id !== '..', 'must not be "." or ".." (a URL path cannot carry them)'),
    ),
  ),
  input: z.unknown(),
  /** An exported run log (NDJSON) to import and resume (docs/design/run-log.md#export-and-import). */
  log: z.optional(z.string()),
});

/** A checked `POST /runs` body. */
type StartRequest = { readonly runId: string | undefined; readonly input: unknown; readonly log: string | undefined };

/**
 * The run object's RPC methods as the app calls them (spelled
 * out: the inferred RPC types of a stream are too deep for tsc).
 */
type RunObjectRpc = ControlRpc & {
  start(runId: string, input: unknown): Promise<StartOutcome>;
  status(): Promise<RunStatus | null>;
  trajectory(): Promise<RunTrajectory | UnreadableLog | null>;
  log(): Promise<string | UnreadableLog | null>;
  cancel(): Promise<CancelOutcome>;
  input(reply: InputReply): Promise<InputOutcome>;
  upgrade(reason: string): Promise<UpgradeOutcome>;
  fetch(request: Request): Promise<Response>;
};

function fail(c: Context, status: 400 | 401 | 404 | 409 | 413 | 500, code: HttpErrorCode, message: string): Response {
  const headers: Record<string, string> = status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {};
  return c.json(errorBody(code, message), status, headers);
}

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

/** Compare two secrets in time independent of where they differ (both hashed first). */
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** Our own wording of schema issues (zod/mini ships no messages, and we set no global locale). */
function schemaMessage(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((i) => {
      const where = i.path.length > 0 ? i.path.map(String).join('.') : 'body';
      if (i.code === 'unrecognized_keys') return `unknown field(s): ${i.keys.join(', ')}`;
      if (i.code === 'invalid_type') return `${where}: expected ${i.expected}`;
      return `${where}: ${i.message}`;
    })
    .join('; ');
}

/** The one 401 message: what the caller must send, nothing about the token the server expects or whether it has one. */
const UNAUTHORIZED = 'unauthorized: send Authorization: Bearer <token>';

/** Auth, the first check: null when the bearer token matches, else the 401 response. */
async function checkBearer(c: Context, expected: string | undefined, onUnset: () => void): Promise<Response | null> {
  // One body for every refusal: a caller without the token learns nothing about the server's configuration.
  if (typeof expected !== 'string' || expected === '') {
    onUnset();
    return fail(c, 401, 'unauthorized', UNAUTHORIZED);
  }
  const match = /^Bearer +([^\s]+)$/i.exec((c.req.header('authorization') ?? '').trim());
  if (!match || !(await sameSecret(match[1] ?? '', expected))) return fail(c, 401, 'unauthorized', UNAUTHORIZED);
  return null;
}

/** True for a parsed body of the import form (`{ …, log }`), the only one allowed past 1 MiB. */
function isImportForm(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && Object.hasOwn(raw, 'log');
}

/**
 * Size, parse and schema checks of `POST /runs`, in that order: the body, or the error response.
 * Any body may be 16 MiB on the wire, but only the import form may exceed 1 MiB; which form a
 * body is shows only once parsed, so a bigger body that is not JSON or not that form is a 413.
 */
async function readStartBody(c: Context): Promise<Response | StartRequest> {
  const tooLarge = (max: number): Response => fail(c, 413, 'payload_too_large', `request body exceeds ${max} bytes`);
  let text: string | null;
  try {
    text = await readBody(c.req.raw, MAX_IMPORT_BODY_BYTES);
  } catch {
    return fail(c, 400, 'bad_request', 'request body is not valid UTF-8');
  }
  if (text === null) return tooLarge(MAX_IMPORT_BODY_BYTES);
  const large = exceedsBytes(text, MAX_BODY_BYTES);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return large ? tooLarge(MAX_BODY_BYTES) : fail(c, 400, 'bad_request', 'request body is not valid JSON');
  }
  if (large && !isImportForm(raw)) return tooLarge(MAX_BODY_BYTES);
  const parsed = StartBody.safeParse(raw);
  if (!parsed.success) return fail(c, 400, 'bad_request', schemaMessage(parsed.error.issues));
  // z.unknown() also accepts a missing key, but `input` is required (null is a value).
  if (!Object.hasOwn(raw as object, 'input')) return fail(c, 400, 'bad_request', 'input: required');
  // A log belongs to one run: the server cannot make up its id.
  if (parsed.data.log !== undefined && parsed.data.runId === undefined)
    return fail(c, 400, 'bad_request', 'runId: required with log (the log names its run)');
  // JSON.parse takes any depth, but the run object's RPC (structured clone) and JSON.stringify overflow the stack on
  // deep values; the core's storable-value limit keeps the answer the same in every runtime.
  const problem = jsonProblem(parsed.data.input, 'input');
  if (problem !== null) return fail(c, 400, 'bad_request', problem);
  // Only the log may use the import form's 16 MiB: the input is stored in one row (the platform's 2 MB per row),
  // and a plain start's body holds at most 1 MiB of it.
  if (large && exceedsBytes(JSON.stringify(parsed.data.input ?? null), MAX_BODY_BYTES))
    return fail(c, 413, 'payload_too_large', `input exceeds ${MAX_BODY_BYTES} bytes (only the log may be larger)`);
  return { runId: parsed.data.runId, input: parsed.data.input, log: parsed.data.log };
}

/**
 * Size, parse and shape checks of a small JSON body (`POST /runs/:id/input`, `/upgrade`), in that
 * order: the body, or the error response.
 */
async function readSmallBody<T>(c: Context, problemOf: (raw: unknown) => string | null): Promise<Response | T> {
  const body = await readJsonBody(c.req.raw);
  if ('status' in body) return fail(c, body.status, body.code, body.message);
  const problem = problemOf(body.raw);
  return problem === null ? (body.raw as T) : fail(c, 400, 'bad_request', problem);
}

/**
 * The PolyLoop HTTP app: `POST /runs` (with `{ runId, input, log }`: import an exported run and
 * resume it), `GET /runs/:id`, `GET /runs/:id/trajectory`, `GET /runs/:id/log`
 * (NDJSON, as `exportRun` gives it), `GET /runs/:id/events` (SSE, `id:` = record sequence,
 * honours `Last-Event-ID`: 204 once `run_ended` was seen, 400 for an id beyond the log),
 * `POST /runs/:id/cancel`, `POST /runs/:id/input` (an `InputReply` answering one of the run's open
 * requests: `202` once it is durable; `409` when the run awaits no input or none for its
 * resultId, `400` for a kind the request does not accept), `POST /runs/:id/upgrade` (`{ reason }`:
 * a run whose agent changed goes on under this deployment's, `202 { runId, upgraded }`; `409` for
 * an ended or running run or an upgrade the library refuses), `POST /runs/:id/stop` and `/fork` (control-routes.ts);
 * with `chat` also `POST /chat`, `GET /chat/:chatId/stream`, `GET /chat/:chatId/messages` (decision 0057).
 * Checks run in this order: auth, size, parse, schema (an `input` nested
 * deeper than the core's `MAX_JSON_DEPTH` is a 400). Errors never carry a stack trace; every 401
 * says the same: that a bearer token is expected (a missing token configuration is logged, not
 * told to the caller).
 *
 * @example
 * export class RunObject extends createRunObject<Env>({ setup }) {}
 * export default createApp<Env>({ runs: (env) => env.RUNS });
 */
export function createApp<Env extends object>(options: AppOptions<Env>): Hono<{ Bindings: Env }> {
  checkOptionKeys(options, APP_OPTIONS, 'createApp');
  if (options.cors !== undefined) checkOptionKeys(options.cors, CORS_OPTIONS, 'createApp cors');
  const app = new Hono<{ Bindings: Env }>();
  const tokenOf =
    options.token ?? ((env: Env) => (env as { POLYLOOP_TOKEN?: unknown }).POLYLOOP_TOKEN as string | undefined);
  const stubFor = (c: Context<{ Bindings: Env }>, runId: string): RunObjectRpc => {
    const ns = options.runs(c.env);
    return ns.get(ns.idFromName(runId)) as unknown as RunObjectRpc;
  };

  // Outermost: whatever the answer (401, 413, a route that ignores its body, an error), the
  // unread rest of the body is drained before it goes out, so workerd keeps the connection.
  app.use('*', async (c, next) => {
    await next();
    await drainBody(c.req.raw);
  });

  let warned = false;
  const onUnset = (): void => {
    if (warned) return;
    warned = true;
    console.error('polyloop: no POLYLOOP_TOKEN is configured, so every request is refused (401)');
  };

  // Before auth: a browser's preflight carries no Authorization header.
  if (options.cors !== undefined) app.use('*', corsMiddleware(options.cors));

  app.use('*', async (c, next) => {
    const refused = await checkBearer(c, tokenOf(c.env), onUnset);
    if (refused !== null) return refused;
    await next();
  });

  app.post('/runs', async (c) => {
    const body = await readStartBody(c);
    if (body instanceof Response) return body;
    const runId = body.runId ?? crypto.randomUUID();
    const stub = stubFor(c, runId);
    const outcome =
      body.log === undefined ? await stub.start(runId, body.input) : await stub.adopt(runId, body.input, body.log);
    if (outcome.ok) return c.json<RunCreated>({ runId }, 201);
    return outcome.code === 'conflict'
      ? fail(c, 409, 'conflict', outcome.message)
      : fail(c, 400, 'bad_request', outcome.message);
  });

  app.get('/runs', async (c) => {
    const index = options.index?.(c.env);
    if (index === undefined)
      return fail(
        c,
        404,
        'not_found',
        'runs are not listed: no run index is configured (the index option of createApp)',
      );
    const query = listQuery(new URL(c.req.url).searchParams);
    if (typeof query === 'string') return fail(c, 400, 'bad_request', query);
    return c.json(await runIndexStub(index).list(query));
  });

  app.get('/runs/:id', async (c) => {
    const runId = c.req.param('id');
    const status = RUN_ID_PATTERN.test(runId) ? await stubFor(c, runId).status() : null;
    return status === null ? unknownRun(c, runId) : c.json(status);
  });

  app.get('/runs/:id/trajectory', async (c) => {
    const runId = c.req.param('id');
    const trajectory = RUN_ID_PATTERN.test(runId) ? await stubFor(c, runId).trajectory() : null;
    if (trajectory === null) return unknownRun(c, runId);
    if ('unreadable' in trajectory) return unreadableLog(c, runId, trajectory);
    return c.json(trajectory);
  });

  app.get('/runs/:id/log', async (c) => {
    const runId = c.req.param('id');
    const log = RUN_ID_PATTERN.test(runId) ? await stubFor(c, runId).log() : null;
    if (log === null) return unknownRun(c, runId);
    if (typeof log !== 'string') return unreadableLog(c, runId, log);
    return c.body(log, 200, { 'content-type': 'application/x-ndjson' });
  });

  app.get('/runs/:id/events', async (c) => {
    const runId = c.req.param('id');
    const last = c.req.header('last-event-id');
    if (last !== undefined && !/^\d{1,15}$/.test(last.trim()))
      return fail(c, 400, 'bad_request', 'Last-Event-ID must be a record sequence number');
    if (!RUN_ID_PATTERN.test(runId)) return unknownRun(c, runId);
    const headers: Record<string, string> = last === undefined ? {} : { 'last-event-id': last.trim() };
    const res = await stubFor(c, runId).fetch(
      new Request('https://run-object/events', { headers, signal: c.req.raw.signal }),
    );
    if (res.status === 404) return unknownRun(c, runId);
    if (res.status === 400) return fail(c, 400, 'bad_request', await res.text());
    return res;
  });

  app.post('/runs/:id/cancel', async (c) => {
    const runId = c.req.param('id');
    const outcome = RUN_ID_PATTERN.test(runId) ? await stubFor(c, runId).cancel() : null;
    if (outcome === null || (!outcome.ok && outcome.code === 'not_found')) return unknownRun(c, runId);
    return outcome.ok ? c.json({ runId }, 202) : fail(c, 409, 'conflict', outcome.message);
  });

  app.post('/runs/:id/input', async (c) => {
    const runId = c.req.param('id');
    const reply = await readSmallBody<InputReply>(c, replyShapeProblem);
    if (reply instanceof Response) return reply;
    const outcome = RUN_ID_PATTERN.test(runId) ? await stubFor(c, runId).input(reply) : null;
    if (outcome === null || (!outcome.ok && outcome.code === 'not_found')) return unknownRun(c, runId);
    if (outcome.ok) return c.json<InputAccepted>({ runId, resultId: outcome.resultId }, 202);
    return outcome.code === 'conflict'
      ? fail(c, 409, 'conflict', outcome.message)
      : fail(c, 400, 'bad_request', outcome.message);
  });

  app.post('/runs/:id/upgrade', async (c) => {
    const runId = c.req.param('id');
    const body = await readSmallBody<{ reason: string }>(c, upgradeBodyProblem);
    if (body instanceof Response) return body;
    const outcome = RUN_ID_PATTERN.test(runId) ? await stubFor(c, runId).upgrade(body.reason) : null;
    if (outcome === null || (!outcome.ok && outcome.code === 'not_found')) return unknownRun(c, runId);
    if (!outcome.ok) return fail(c, 409, 'conflict', outcome.message);
    return c.json<UpgradeAccepted>({ runId, upgraded: outcome.upgraded }, 202);
  });

  controlRoutes(app, { stubFor, fail, unknownRun });
  if (options.chat !== undefined) chatRoutes(app, options.chat, fail);

  app.notFound((c) => fail(c, 404, 'not_found', `no route ${c.req.method} ${new URL(c.req.url).pathname}`));
  app.onError((err, c) => {
    console.error('polyloop: request failed:', err);
    return fail(c, 500, 'internal', 'internal error');
  });
  return app;
}

/**
 * The CORS middleware for `options`; throws a TypeError for an origin
 * that is not `*` or a bare origin (no path, no trailing slash).
 */
function corsMiddleware(options: CorsOptions): ReturnType<typeof cors> {
  for (const origin of options.origins) {
    let bare = false;
    try {
      bare = new URL(origin).origin === origin;
    } catch {
      // not a URL: refused below
    }
    if (origin !== '*' && !bare)
      throw new TypeError(
        'createApp: cors.origins must hold origins such as "https://app.example.com" ' +
          `(scheme, host, port; no path or trailing slash) or "*", got ${JSON.stringify(origin)}`,
      );
  }
  return cors({
    origin: options.origins.includes('*') ? '*' : [...options.origins],
    allowMethods: ['GET', 'POST', 'OPTIONS'],
    allowHeaders: ['authorization', 'content-type', 'last-event-id'],
    exposeHeaders: ['www-authenticate'],
    maxAge: options.maxAgeSeconds ?? 600,
  });
}

function unreadableLog(c: Context, runId: string, log: UnreadableLog): Response {
  return fail(
    c,
    500,
    'unreadable_log',
    `run ${JSON.stringify(runId)} has an unreadable log, so it is halted: ${log.unreadable}`,
  );
}

function unknownRun(c: Context, runId: string): Response {
  return fail(c, 404, 'not_found', `no run ${JSON.stringify(runId.slice(0, 200))}`);
}
