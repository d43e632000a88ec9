/**
 * The run viewer's one read API, whatever holds the runs: a FileStore directory
 * (`view-dir.ts`) or a PolyLoop Worker over HTTP (`view-worker.ts`). The page talks to the
 * routes of `view-app.ts`, which call a source; the source reads each run with `readRunLog`.
 * @module
 */
import { encodeRecord, PolyLoopError } from '../../core/index.ts';
import { errorBody, eventsRefusal } from '../../core/internal-entry.ts';
import type { LogRecord } from '../../core/index.ts';
import type { ErrorBody } from '../../core/internal-entry.ts';
import type { MessagesPage } from './view-messages.ts';
import type { ViewRunRow, RunSummary, ViewStepRow } from './view-model.ts';

/**
 * The answer to a reply or an upgrade: its HTTP status, a message, the success body, and for a
 * refusal the page acts on, the code its error body carries (`run_identity_mismatch`: offer an upgrade).
 */
export type ViewAnswer = {
  readonly status: number;
  readonly message: string;
  readonly body?: unknown;
  readonly code?: ErrorBody['error']['code'];
};

/** What the page is told about the viewer itself. */
export type SourceDescription = {
  readonly source: 'dir' | 'worker';
  /** The directory, or the Worker's URL (never its token). */
  readonly where: string;
  readonly answering: RunSummary['answering'];
};

/** Where runs come from. Each method resolves null for a run that does not exist. */
export type ViewSource = {
  readonly describe: SourceDescription;
  /** Every run, most recently active first. */
  list(): Promise<readonly ViewRunRow[]>;
  summary(runId: string): Promise<RunSummary | null>;
  steps(runId: string, from: number, limit: number, full: boolean): Promise<readonly ViewStepRow[] | null>;
  /**
   * The messages step `step` handed its model, `limit` from `from`: null for no such run, `'no_call'`
   * for a step that made no model call in the log.
   */
  messages(runId: string, step: number, from: number, limit: number): Promise<MessagesPage | 'no_call' | null>;
  /** The run's log as NDJSON (the readable part of a corrupt one). */
  log(runId: string): Promise<string | null>;
  /** Server-sent events, one per record after `afterSeq` (-1: all), as the Worker's `GET /runs/:id/events`. */
  events(runId: string, afterSeq: number, signal: AbortSignal): Promise<Response | null>;
  /** Carry out a reply to the run's open request (docs/human-input.md). */
  answer(runId: string, reply: unknown): Promise<ViewAnswer>;
  /**
   * Move a run waiting for a person onto the agent's current code: `{ reason, input? }`, as
   * `resume(agent, runId, { upgrade: { reason }, input })`. Absent: this source cannot.
   */
  upgrade?(runId: string, body: unknown): Promise<ViewAnswer>;
  /** Ask the run to stop, `{ reason? }`, as `requestStop` (docs/viewer.md): 202, or 200 for a run that had ended. */
  stop(runId: string, body: unknown): Promise<ViewAnswer>;
  /** Start a new run from a step of the run, `{ atStep, newRunId }`, as `forkRun`: 201 with the new run's URL. */
  fork(runId: string, body: unknown): Promise<ViewAnswer>;
  /** Stop what the source keeps running (followers, timers). */
  close?(): Promise<void>;
};

/**
 * Thrown for a viewer the options forbid: a non-loopback address without `allowRemote`, no page
 * it can serve, an agent module it cannot load. Code `viewer_refused`.
 */
export class ViewerRefusedError extends PolyLoopError {
  override readonly name = 'ViewerRefusedError';
  constructor(message?: string, options?: { cause?: unknown }) {
    super('viewer_refused', message ?? '', options);
  }
}

/**
 * The answer to an event-stream request before any stream, as the Worker gives it: 400 for a
 * `Last-Event-ID` beyond the log (a sequence number exists only once written, so no client saw
 * one), 204 when everything up to `run_ended` was seen (an EventSource stops reconnecting), else
 * null: stream. `lastSeq` is the log's last record (-1: none).
 */
export function eventsAnswer(afterSeq: number, lastSeq: number, ended: boolean): Response | null {
  const refused = eventsRefusal(afterSeq, lastSeq, () => ended);
  if (refused === null) return null;
  if (refused.status === 204) return new Response(null, { status: 204 });
  return Response.json(errorBody('bad_request', refused.message), { status: 400 });
}

/** Options of {@link recordEventStream}. */
export type RecordStreamOptions = {
  readonly signal: AbortSignal;
  readonly pollMs: number;
  readonly keepAliveMs?: number;
};

const encoder = new TextEncoder();

/**
 * SSE of a run's records as they land, looked for every `pollMs`: `id:` the record's sequence
 * number, `event:` its kind, `data:` the record, as the Worker sends them; the stream closes
 * after `run_ended` or when `signal` aborts (the page went away).
 */
export function recordEventStream(
  poll: () => Promise<readonly LogRecord[]>,
  afterSeq: number,
  opts: RecordStreamOptions,
): Response {
  let last = afterSeq;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let idle = 0;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const stop = (): void => {
        if (timer !== null) clearTimeout(timer);
        timer = null;
        try {
          controller.close();
        } catch {
          // already closed or errored: the reader went away first
        }
      };
      opts.signal.addEventListener('abort', stop, { once: true });
      const tick = async (): Promise<void> => {
        timer = null;
        if (opts.signal.aborted) return;
        const records = await poll().catch(() => [] as readonly LogRecord[]);
        let text = '';
        for (let seq = last + 1; seq < records.length; seq++) {
          const rec = records[seq] as LogRecord;
          text += `id: ${seq}\nevent: ${rec.kind}\ndata: ${encodeRecord(rec)}\n\n`;
          last = seq;
        }
        idle = text === '' ? idle + opts.pollMs : 0;
        if (idle >= (opts.keepAliveMs ?? 15_000)) {
          text = ': keep-alive\n\n';
          idle = 0;
        }
        try {
          if (text !== '') controller.enqueue(encoder.encode(text));
        } catch {
          return stop();
        }
        if (records.at(-1)?.kind === 'run_ended' && last === records.length - 1) return stop();
        timer = setTimeout(() => void tick(), opts.pollMs);
      };
      void tick();
    },
    cancel() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  });
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
  });
}
