/**
 * Human input over HTTP (docs/http.md#post-runsidinput): the shape check of a
 * `POST /runs/:id/input` body, and whether a reply fits the run's open request — pure functions of
 * the body and of `readRunLog`'s view.
 * @module
 */
import { acceptedReplies, innermostRequest, RunIdentityMismatchError } from '../core/index.ts';
import { INPUT_REPLY_TEXT_FIELD, inputReplyProblem } from '../core/internal-entry.ts';
import type { InputReply, RunLogView } from '../core/index.ts';

/**
 * The outcome of {@link RunObjectBase.input}: the reply landed (durably),
 * or why not — a value, since errors lose their class over RPC.
 */
export type InputOutcome =
  | { readonly ok: true; readonly resultId: string }
  | { readonly ok: false; readonly code: 'not_found' | 'conflict' | 'bad_request'; readonly message: string };

/**
 * The outcome of {@link RunObjectBase.cancel}: the cancel is under way,
 * or why not (`conflict`: the run has ended; `not_found`: no run).
 */
export type CancelOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: 'not_found' | 'conflict'; readonly message: string };

/**
 * The outcome of {@link RunObjectBase.upgrade}: the run goes on under this deployment's agent
 * (`upgraded`: an `upgrade` record was written; false when nothing differed), or why not.
 */
export type UpgradeOutcome =
  | { readonly ok: true; readonly upgraded: boolean }
  | { readonly ok: false; readonly code: 'not_found' | 'conflict'; readonly message: string };

/** Why a parsed `POST /runs/:id/upgrade` body is not `{ "reason": <non-empty string> }`, or null. */
export function upgradeBodyProblem(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'body: expected { "reason": "…" }';
  const unknown = Object.keys(raw).filter((k) => k !== 'reason');
  if (unknown.length > 0) return `unknown field(s): ${unknown.join(', ')}`;
  const { reason } = raw as { reason?: unknown };
  if (typeof reason === 'string' && reason.trim() !== '') return null;
  return 'reason: must be a non-empty string (why the run goes on under the new agent)';
}

/** For a run whose identity changed (and has not ended): how to upgrade it over HTTP, after its message; else ''. */
export function upgradeHint(e: unknown, runId: string): string {
  if (!(e instanceof RunIdentityMismatchError) || e.ended) return '';
  return `; over HTTP: POST /runs/${runId}/upgrade with { "reason": "…" }`;
}

/**
 * Why a parsed body is not an {@link InputReply} (a known `kind`, a string `resultId`, the kind's
 * text field a string, no other field), or null.
 */
export function replyShapeProblem(raw: unknown): string | null {
  const problem = inputReplyProblem(raw);
  if (problem !== null) return problem;
  const reply = raw as InputReply;
  const allowed = new Set(['kind', 'resultId', INPUT_REPLY_TEXT_FIELD[reply.kind]]);
  if (reply.kind === 'approve') allowed.add('arguments');
  const unknown = Object.keys(reply).filter((k) => !allowed.has(k));
  return unknown.length > 0 ? `unknown field(s) for a ${reply.kind} reply: ${unknown.join(', ')}` : null;
}

/**
 * Why `reply` does not answer one of the run's open requests, as the HTTP surface reports it, or
 * null: `conflict` when the run awaits no input (not waiting, or ended) or no open request has the
 * reply's resultId (the message names every open one); `bad_request` when the request it answers
 * does not accept the reply's kind.
 */
export function replyRefusal(
  runId: string,
  view: RunLogView,
  reply: InputReply,
): Extract<InputOutcome, { ok: false }> | null {
  const run = `run ${JSON.stringify(runId.slice(0, 200))}`;
  if (view.ended)
    return { ok: false, code: 'conflict', message: `${run} has ended (${view.ended.stopReason}); it awaits no input` };
  const open = view.openRequests;
  if (open.length === 0) return { ok: false, code: 'conflict', message: `${run} awaits no input` };
  const request = open.find((r) => r.resultId === reply.resultId);
  if (request === undefined) {
    return {
      ok: false,
      code: 'conflict',
      message:
        `${run} awaits input for ${open.map((r) => JSON.stringify(r.resultId)).join(', ')}, ` +
        `not ${JSON.stringify(reply.resultId.slice(0, 200))}`,
    };
  }
  const accepted = acceptedReplies(request);
  if (!accepted.includes(reply.kind)) {
    // A sub-agent's request is answered as what its innermost request asks.
    const leaf = innermostRequest(request);
    const asked =
      leaf.kind === 'settle'
        ? `a settle request of ${leaf.target === 'action' ? 'an action' : 'a model call'}`
        : `${leaf.kind === 'approval' || leaf.kind === 'answer' ? 'an' : 'a'} ${leaf.kind} request`;
    const what = leaf === request ? asked : `${asked} of a sub-agent run`;
    return {
      ok: false,
      code: 'bad_request',
      message: `${JSON.stringify(request.resultId)} is ${what}; it accepts ${accepted.join(', ')}, not ${reply.kind}`,
    };
  }
  return null;
}

/**
 * The reply a cancel of an awaiting run writes: the run ends `cancelled`, the cancel recorded as the person's reply.
 */
export function cancelReply(resultId: string): InputReply {
  return { kind: 'cancel', resultId };
}
