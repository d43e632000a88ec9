/**
 * The bodies of PolyLoop's HTTP API (docs/http.md), written once for the two programs that speak
 * it: the Worker's app serves them, and the run viewer's server serves them to its page and reads
 * them from a Worker. Types, the error body, and when an event stream is refused before it starts.
 * @module
 */
import type { ChildRunRef } from './run-log.ts';
import type { InputRequest, StepRecord, StopReason, StopRequest } from './types.ts';

/** Every error body: `{ error: { code, message } }` (each server has its own codes). */
export type ErrorBody<Code extends string = string> = {
  readonly error: { readonly code: Code; readonly message: string };
};

/** The error body of `code` and `message`. */
export function errorBody<Code extends string>(code: Code, message: string): ErrorBody<Code> {
  return { error: { code, message } };
}

/**
 * `GET /runs/:id` body (docs/http.md#get-runsid). Before its first record a run is `running` with
 * `steps: 0`. `awaiting_input`: the run waits for a person; `pending` is the (first) open request
 * (null otherwise), `openRequests` all of them, each answered with `POST /runs/:id/input`.
 * `halted`: the run object gave up driving the run (its log is unreadable, or the library refused
 * to resume it).
 */
export type RunStatus = {
  readonly runId: string;
  readonly status: 'running' | 'awaiting_input' | 'ended' | 'halted';
  /**
   * Why the run failed: for an `ended` run what `RunResult.error` says (the failure text of the
   * step that ended a `model_error`, `interpreter_error` or `env_error` run), for a `halted` one
   * why the object gave up; null otherwise.
   */
  readonly error: string | null;
  readonly stopReason: StopReason | null;
  readonly finalAnswer: string | null;
  readonly steps: number;
  readonly validActions: number;
  readonly pending: InputRequest | null;
  /**
   * Every open request of an `awaiting_input` run, in call order (`pending` is the first; several
   * only while a step with several calls waits for them), each answered on its own; empty otherwise.
   */
  readonly openRequests: readonly InputRequest[];
  /**
   * The sub-agent runs the run's log names (`childRunsOf`), in step order: each its own run,
   * `GET /runs/<runId>`; empty for a run that started none.
   */
  readonly children: readonly ChildRunRef[];
};

/** `GET /runs/:id/trajectory` body (docs/http.md#get-runsidtrajectory-and-get-runsidlog). */
export type RunTrajectory = { readonly runId: string; readonly steps: readonly StepRecord[] };

/**
 * One run of `GET /runs`: its status as its run object last reported it (it may lag
 * `GET /runs/:id` for the moment between a log write and the report), and when it was listed
 * first and last updated (ISO 8601).
 */
export type RunListItem = {
  readonly runId: string;
  readonly status: RunStatus['status'];
  readonly stopReason: StopReason | null;
  readonly createdAt: string;
  readonly updatedAt: string;
};

/** `GET /runs` body: a page of runs, newest first; `nextCursor` fetches the next page (null on the last). */
export type RunPage<Item> = { readonly runs: readonly Item[]; readonly nextCursor: string | null };

/** `GET /runs` body of a Worker. */
export type RunList = RunPage<RunListItem>;

/** `POST /runs` 201 body: the run's id (the one given, or the one the server made up). */
export type RunCreated = { readonly runId: string };

/** `POST /runs/:id/input` 202 body: the reply to `resultId` is durable. */
export type InputAccepted = { readonly runId: string; readonly resultId: string };

/** `POST /runs/:id/upgrade` 202 body: whether an `upgrade` record was written (and the reply sent with it). */
export type UpgradeAccepted = { readonly runId: string; readonly upgraded: boolean; readonly resultId?: string };

/**
 * Whether an event stream asked to start after record `afterSeq` (its `Last-Event-ID`; -1: none)
 * is answered before it starts: 400 for an id beyond the log's last record `lastSeq` (a sequence
 * number exists only once written, so no client saw one), 204 when everything up to `run_ended`
 * was seen (an EventSource stops reconnecting); null: stream. `ended` is asked only then.
 */
export function eventsRefusal(
  afterSeq: number,
  lastSeq: number,
  ended: () => boolean,
): { readonly status: 400; readonly message: string } | { readonly status: 204 } | null {
  const beyond = `Last-Event-ID ${afterSeq} is beyond the run's last record (${lastSeq})`;
  if (afterSeq > lastSeq) return { status: 400, message: beyond };
  return afterSeq === lastSeq && ended() ? { status: 204 } : null;
}

/** The body of `POST /runs/:id/stop` (docs/http.md): an optional reason, nothing else. */
export type StopBody = { readonly reason?: string };

/** The body of `POST /runs/:id/fork`: the first step the fork runs itself, and its run id. */
export type ForkBody = { readonly atStep: number; readonly newRunId: string };

/**
 * What `POST /runs/:id/stop` answers: 202 the stop is kept (the viewer says in words who ends the
 * run, and when), 200 the run had ended and nothing was done.
 */
export type StopAnswer =
  | { readonly runId: string; readonly requested: true; readonly stopRequest: StopRequest; readonly message?: string }
  | { readonly runId: string; readonly requested: false; readonly stopReason: StopReason; readonly message: string };

/** What `POST /runs/:id/fork` answers (201): the new run, its URL, and where it came from. */
export type ForkCreated = {
  readonly runId: string;
  readonly url: string;
  readonly forkedFrom: { readonly runId: string; readonly atStep: number };
};
