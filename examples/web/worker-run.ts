/**
 * A run hosted by the PolyLoop Worker, seen from this page over HTTP: start one (`POST /runs`),
 * follow its log (`GET /runs/:id/events`, server-sent events read with `fetch` — `EventSource`
 * cannot send the bearer token), and answer what it asks (`POST /runs/:id/input`). The records
 * that arrive are read with `readRunLog`, the same reader the tab and the CLI use.
 */
import { decodeRecord, readRunLog } from '../../src/core/index.ts';
import type { InputReply, LogRecord, RunLogView } from '../../src/core/index.ts';
import { parseSSE } from '../../src/adapters/sse.ts';
import type { SSEEvent } from '../../src/adapters/sse.ts';

/** Where the Worker is and how to get in. `baseURL` may be a path on this origin (`/worker`, the dev proxy). */
export type WorkerTarget = { readonly baseURL: string; readonly token: string };

/** A refusal or failure of the Worker, with its HTTP status and its `{ error: { code, message } }`. */
export class WorkerHttpError extends Error {
  override readonly name = 'WorkerHttpError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function url(target: WorkerTarget, path: string): string {
  return `${target.baseURL.replace(/\/+$/, '')}${path}`;
}

function headers(target: WorkerTarget, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${target.token}`, ...extra };
}

/** The Worker's error body as one sentence. */
async function failure(res: Response, what: string): Promise<WorkerHttpError> {
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  const why = res.status === 401 ? 'the Worker refused the token' : (body?.error?.message ?? res.statusText);
  return new WorkerHttpError(res.status, `${what}: HTTP ${res.status}, ${why}`);
}

/** Start a run on the Worker with `input` (the demo Worker takes a goal, or `{ goal, pauseMs, approve }`); resolves with its id. */
export async function startWorkerRun(target: WorkerTarget, input: unknown, runId?: string): Promise<string> {
  const res = await fetch(url(target, '/runs'), {
    method: 'POST',
    headers: headers(target, { 'content-type': 'application/json' }),
    body: JSON.stringify(runId ? { runId, input } : { input }),
  });
  if (res.status !== 201) throw await failure(res, 'start');
  return ((await res.json()) as { runId: string }).runId;
}

/** Answer the run's open request; resolves once the Worker has stored the reply (202). */
export async function answerWorkerRun(target: WorkerTarget, runId: string, reply: InputReply): Promise<void> {
  const res = await fetch(url(target, `/runs/${encodeURIComponent(runId)}/input`), {
    method: 'POST',
    headers: headers(target, { 'content-type': 'application/json' }),
    body: JSON.stringify(reply),
  });
  if (res.status !== 202) throw await failure(res, 'reply');
}

/** Options of {@link followWorkerRun}. */
export type FollowOptions = {
  /** Called with the log's view after every record (and once before the first). */
  readonly onView: (view: RunLogView) => void;
  /** Stops following; the promise then rejects with `signal.reason`. */
  readonly signal: AbortSignal;
  /** Wait before reconnecting after a stream that ended early (default 1000 ms). */
  readonly retryMs?: number;
};

/**
 * Follow the run's log until it ends; resolves with the ended view. The stream is read from the
 * first record and, when it breaks off before `run_ended`, reopened after the last record seen
 * (`Last-Event-ID`): no record is missed or counted twice.
 */
export async function followWorkerRun(target: WorkerTarget, runId: string, opts: FollowOptions): Promise<RunLogView> {
  const records: LogRecord[] = [];
  let lastId: string | null = null;
  const status = await fetch(url(target, `/runs/${encodeURIComponent(runId)}`), {
    headers: headers(target),
    signal: opts.signal,
  });
  if (status.status !== 200) throw await failure(status, `run ${JSON.stringify(runId)}`);
  opts.onView(readRunLog(records));
  for (;;) {
    const res: Response = await fetch(url(target, `/runs/${encodeURIComponent(runId)}/events`), {
      headers: headers(target, lastId === null ? {} : { 'last-event-id': lastId }),
      signal: opts.signal,
    });
    // 204: every record was seen and the run has ended.
    if (res.status === 204) return readRunLog(records);
    if (res.status !== 200 || !res.body) throw await failure(res, 'events');
    const events: AsyncGenerator<SSEEvent> = parseSSE(res.body, opts.signal);
    for await (const e of events) {
      if (e.id === null) continue;
      records.push(decodeRecord(e.data));
      lastId = e.id;
      const view = readRunLog(records);
      opts.onView(view);
      if (view.state === 'ended') return view;
    }
    await new Promise((ok) => setTimeout(ok, opts.retryMs ?? 1000));
    opts.signal.throwIfAborted();
  }
}
