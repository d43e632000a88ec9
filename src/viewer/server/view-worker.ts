/**
 * The run viewer over a PolyLoop Worker's HTTP API (docs/http.md): the same read API as over a
 * directory, each run's log fetched (`GET /runs/:id/log`) and read with `readRunLog` here, the
 * event stream and replies passed through. The bearer token stays in this process: the page
 * never sees it.
 * @module
 */
import { PolyLoopError } from '../../core/index.ts';
import type { ErrorBody, RunList, RunListItem, RunStatus } from '../../core/internal-entry.ts';
import { parentIdOf, replyRoute, treeOrder } from './run-tree.ts';
import { messagesPage } from './view-messages.ts';
import { readLogText, stepsPage, summarizeRun } from './view-model.ts';
import type { LogReading, ViewRunRow, ViewStatus } from './view-model.ts';
import type { ViewAnswer, ViewSource } from './view-source.ts';

/** Options of {@link workerSource}. */
export type WorkerSourceOptions = { readonly url: string; readonly token: string; readonly fetch?: typeof fetch };

/** What the viewer reads of a run's status; a Worker that sends no `error` shows none. */
type Status = Pick<RunStatus, 'status' | 'stopReason' | 'steps'> & { readonly error?: RunStatus['error'] };

/** What a Worker's error answer may hold: an error body, or less. */
type MaybeErrorBody = { readonly error?: Partial<ErrorBody['error']> } | null;

/** How long a fetched log is reused before it is fetched again (the page asks for several step pages at once). */
const LOG_REUSE_MS = 300;
/** The run list is read up to this many pages of 100 runs. */
const MAX_LIST_PAGES = 100;

/** Thrown when the Worker answers something unexpected; the message says what. Code `worker_unreachable`. */
export class WorkerUnreachableError extends PolyLoopError {
  override readonly name = 'WorkerUnreachableError';
  constructor(message?: string, options?: { cause?: unknown }) {
    super('worker_unreachable', message ?? '', options);
  }
}

/** A {@link ViewSource} over the Worker at `url`, authenticated with `token`. */
export function workerSource(opts: WorkerSourceOptions): ViewSource {
  const base = opts.url.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  const logs = new Map<string, { at: number; reading: Promise<LogReading | null> }>();
  const call = (path: string, init: RequestInit = {}): Promise<Response> =>
    doFetch(`${base}${path}`, {
      ...init,
      headers: { ...(init.headers as Record<string, string> | undefined), authorization: `Bearer ${opts.token}` },
    });
  const runPath = (runId: string, rest = ''): string => `/runs/${encodeURIComponent(runId)}${rest}`;

  async function json<T>(res: Response, what: string): Promise<T | null> {
    if (res.status === 404) return null;
    if (res.status === 401) throw new WorkerUnreachableError(`${what}: the Worker refused the token (401)`);
    if (!res.ok)
      throw new WorkerUnreachableError(
        `${what}: the Worker answered ${res.status} ${await res.text().catch(() => '')}`.slice(0, 500),
      );
    return (await res.json()) as T;
  }

  function readRun(runId: string): Promise<LogReading | null> {
    const hit = logs.get(runId);
    if (hit && Date.now() - hit.at < LOG_REUSE_MS) return hit.reading;
    const reading = call(runPath(runId, '/log')).then(async (res) => {
      if (res.status === 404) return null;
      // An unreadable log is a 500 with the reason: shown as a run that cannot be read.
      if (res.status === 500) {
        const body = await json<ErrorBody>(res, 'log').catch((e: unknown) => ({ error: { message: String(e) } }));
        return { ...readLogText('', base), error: body?.error.message ?? 'unreadable' };
      }
      if (!res.ok) await json(res, `run ${runId} log`);
      return readLogText(await res.text(), `${base}${runPath(runId)}`);
    });
    logs.set(runId, { at: Date.now(), reading });
    return reading;
  }

  const status = async (runId: string): Promise<Status | null> =>
    json<Status>(await call(runPath(runId)), `run ${runId}`).catch(() => null);
  const statuses = new Map<string, { readonly updatedAt: string; readonly status: Status | null }>();

  async function statusOfListed(r: RunListItem): Promise<Status | null> {
    const hit = statuses.get(r.runId);
    if (hit && hit.updatedAt === r.updatedAt && r.status !== 'running') return hit.status;
    const s = await status(r.runId);
    statuses.set(r.runId, { updatedAt: r.updatedAt, status: s });
    return s;
  }

  /** Every page of the Worker's run list (at most {@link MAX_LIST_PAGES} of 100). */
  async function listAll(): Promise<RunListItem[]> {
    const runs: RunListItem[] = [];
    const seen = new Set<string>();
    let cursor: string | null = null;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const res = await call(`/runs?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      // Without a run index the Worker lists nothing: say so rather than show an empty list.
      if (res.status === 404) {
        const why = ((await res.json().catch(() => null)) as MaybeErrorBody)?.error?.message ?? '404';
        throw new WorkerUnreachableError(`the Worker lists no runs: ${why} (open a run by its id: #/run/<id>)`);
      }
      const got = await json<RunList>(res, 'run list');
      runs.push(...(got?.runs ?? []));
      cursor = got?.nextCursor ?? null;
      if (cursor === null || seen.has(cursor)) break;
      seen.add(cursor);
    }
    return runs;
  }

  return {
    describe: { source: 'worker', where: base, answering: { enabled: true, why: null } },
    async list() {
      const runs = await listAll();
      const rows: ViewRunRow[] = [];
      // The list has no step counts: each run's status has, asked a few at a time — and again
      // only for a run that is running or whose listing changed (the page asks every 2 s).
      for (let i = 0; i < runs.length; i += 8) {
        const batch = runs.slice(i, i + 8);
        const statuses = await Promise.all(batch.map((r) => statusOfListed(r)));
        batch.forEach((r, j) => {
          const s = statuses[j];
          rows.push({
            runId: r.runId,
            status: (s?.status ?? r.status) as ViewStatus,
            stopReason: s?.stopReason ?? r.stopReason,
            steps: s?.steps ?? null,
            createdAt: r.createdAt,
            updatedAt: r.updatedAt,
            error: s?.error ?? null,
          });
        });
      }
      // A sub-agent's run right under its parent's, as the directory viewer lists them.
      return treeOrder(rows, (r) => r.runId).map((t) => ({ ...t.row, parentRunId: t.parentRunId }));
    },
    async summary(runId) {
      const [s, reading] = await Promise.all([status(runId), readRun(runId)]);
      if (s === null || reading === null) return null;
      // A sub-agent's run: its parent, and where a reply goes while the parent waits on it.
      const parent = parentIdOf(runId);
      const parentRunId = parent !== null && (await readRun(parent)) !== null ? parent : null;
      const openOf = async (id: string) => (await readRun(id))?.view.openRequests ?? null;
      const sum = summarizeRun(reading, {
        runId,
        status: s.status as ViewStatus,
        updatedAt: null,
        answering: { enabled: true, why: null },
        parentRunId,
        replyTo: parentRunId === null ? null : await replyRoute(runId, openOf),
      });
      return s.error === undefined ? sum : { ...sum, error: s.error };
    },
    async steps(runId, from, limit, full) {
      const reading = await readRun(runId);
      return reading ? stepsPage(reading, from, limit, full) : null;
    },
    async log(runId) {
      const res = await call(runPath(runId, '/log'));
      if (res.status === 404) return null;
      if (!res.ok) await json(res, `run ${runId} log`);
      return res.text();
    },
    async events(runId, afterSeq, signal) {
      const res = await call(runPath(runId, '/events'), {
        signal,
        headers: afterSeq < 0 ? {} : { 'last-event-id': String(afterSeq) },
      });
      if (res.status === 404) return null;
      return new Response(res.body, {
        status: res.status,
        headers: {
          'content-type': res.headers.get('content-type') ?? 'text/event-stream',
          'cache-control': 'no-cache',
        },
      });
    },
    async messages(runId, step, from, limit) {
      const reading = await readRun(runId);
      return reading ? (messagesPage(reading, step, from, limit) ?? 'no_call') : null;
    },
    answer: (runId, reply) => post(runId, '/input', reply, [202]),
    // The Worker checks the bodies itself (docs/http.md), as this viewer's directory source does.
    stop: (runId, body) => post(runId, '/stop', body, [200, 202]),
    fork: (runId, body) => post(runId, '/fork', body, [201]),
  };

  /** POST `body` to the Worker's route of the run: its answer as it gave it, or its refusal's words. */
  async function post(runId: string, rest: string, value: unknown, done: readonly number[]): Promise<ViewAnswer> {
    const res = await call(runPath(runId, rest), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(value),
    });
    logs.delete(runId);
    const body = (await res.json().catch(() => null)) as MaybeErrorBody;
    if (done.includes(res.status)) return { status: res.status, message: 'accepted', body };
    const message =
      res.status === 401
        ? 'the Worker refused the token'
        : (body?.error?.message ?? `the Worker answered ${res.status}`);
    return { status: [400, 404, 409, 413].includes(res.status) ? res.status : 500, message };
  }
}
