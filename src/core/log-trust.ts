/**
 * A log is not a capability. A log can come from anywhere (an import, a copied file, a store an
 * attacker can write), so what it says is checked before anything runs on its word: its
 * snapshot matches its hash, its records nest no deeper than any runtime can store, and an
 * interrupted action runs again only when the run's own tools allow it — never on the replay
 * policy or the approval a log merely claims. See docs/recovery.md ("What a log cannot decide").
 * @module
 */
import { CorruptLogError } from './errors.ts';
import { jsonProblem, MAX_JSON_DEPTH } from './internal/values.ts';
import { gateFor, refusalOf, replayPolicyOf } from './action-policy.ts';
import { callDecision } from './internal/step-calls.ts';
import type { FindLine } from './internal/recovery.ts';
import type { RunRequest } from './request.ts';
import { canonicalJson } from './serialization.ts';
import { sha256Hex } from './snapshot.ts';
import { RegistryExecutor } from './tools.ts';
import type { ActionDecision, InFlightStep, LogRecord, RunLogView, RunStartedRecord } from './types.ts';

/**
 * The deepest nesting a record may have: the values inside it (arguments, provider metadata,
 * tool schemas) nest at most {@link MAX_JSON_DEPTH} levels, and the record adds a few of its own.
 * One limit for every import path, so a log one runtime accepts moves to every other.
 */
export const MAX_RECORD_DEPTH = MAX_JSON_DEPTH + 10;

/** Rejects with `CorruptLogError` (record 1) when `run_started.snapshotHash` is not the SHA-256 of its snapshot. */
export async function checkSnapshotHash(started: RunStartedRecord, source: string): Promise<void> {
  const hash = await sha256Hex(canonicalJson(started.snapshot));
  if (hash !== started.snapshotHash)
    throw new CorruptLogError(1, 'run_started.snapshotHash is not the hash of its snapshot', { source });
}

/** Throws `CorruptLogError` naming the first record nested deeper than {@link MAX_RECORD_DEPTH} levels. */
export function checkRecordDepth(records: readonly LogRecord[], source: string): void {
  records.forEach((rec, i) => {
    // Decoded JSON: depth is the only problem it can have.
    if (jsonProblem(rec, 'record', MAX_RECORD_DEPTH) !== null) {
      throw new CorruptLogError(
        i + 1,
        `the record is nested more than ${MAX_RECORD_DEPTH} levels deep (too deep to store in every runtime)`,
        { source },
      );
    }
  });
}

/**
 * The view with the interrupted step's resolution as the run's own request allows it. A model
 * call or an action is re-issued only when the current policy is `safe` too (the stricter of the
 * log's word and the tools' wins), and an action of a tool that needs a person runs only behind
 * an `approve` record of its step. Otherwise a person settles it: asked, never run.
 */
export function trustInFlight(view: RunLogView, req: RunRequest, findLine: FindLine): RunLogView {
  const f = view.inFlight;
  if (f === null) return view;
  checkGateKind(f, req, findLine);
  checkChildRequests(f, req, findLine);
  if (f.resolution === 'reissue_model' && req.modelReplayPolicy === 'never') return settled(view, f);
  if (f.resolution !== 'replay_action' || f.actionIntent === null) return view;
  const { decision } = f.actionIntent;
  // An action the library refuses runs nothing when replayed: no person is needed.
  if (refusalOf(req, decision) !== null) return view;
  const approved = f.approval?.reply.kind === 'approve';
  if (replayPolicyOf(req, decision) === 'never' || (gateFor(req, decision) !== null && !approved))
    return settled(view, f);
  return view;
}

/**
 * The gate a step's records show must be the one the run's tools set (a tool's `answeredBy` is part
 * of its identity): an approval of a tool a person answers would hand the executor an action that
 * no executor may run, and an answer to any other tool would record a person's text as its result.
 */
function checkGateKind(f: InFlightStep, req: RunRequest, findLine: FindLine): void {
  const asked = f.request?.request.kind;
  const shown = f.request !== null && (asked === 'approval' || asked === 'answer') ? f.request.request : null;
  const kind = shown?.kind ?? (f.approval?.reply.kind === 'approve' ? 'approval' : null);
  const decision = shown?.decision ?? f.actionIntent?.decision ?? null;
  if (kind === null || decision === null || (kind === 'answer') === (gateFor(req, decision) === 'answer')) return;
  const resultId = `s${f.stepIndex}.input`;
  const line = findLine((r) => r.kind === 'input_request' && r.resultId === resultId);
  const tool = decision.action.kind === 'tool_call' ? `tool ${JSON.stringify(decision.action.name)}` : 'a code action';
  const says = kind === 'answer' ? 'an answer request for' : 'an approval of';
  throw new CorruptLogError(
    line,
    `${resultId} is ${says} ${tool}, which ${kind === 'answer' ? 'no person answers' : 'a person answers'}`,
    { source: 'run log' },
  );
}

/**
 * A sub-agent's request in flight must name an action that runs a sub-agent under the run's own
 * tools: a reply to it runs that action again, as the way to reach the child. A log that claims a
 * child where the tool is a plain one would run it again on a person's approval of something
 * else — a `never` action too, unsettled.
 */
function checkChildRequests(f: InFlightStep, req: RunRequest, findLine: FindLine): void {
  const asked: { resultId: string; decision: ActionDecision }[] = [];
  const one = f.request?.request.kind === 'child' ? f.request : null;
  if (one !== null && f.actionIntent !== null)
    asked.push({ resultId: one.resultId, decision: f.actionIntent.decision });
  for (const [j, c] of f.calls?.calls.entries() ?? []) {
    if (c.child !== null && c.result === null && f.calls)
      asked.push({ resultId: c.child.resultId, decision: callDecision(f.calls.intent.decision, j) });
  }
  const ex = req.executor;
  for (const { resultId, decision } of asked) {
    if (ex instanceof RegistryExecutor && ex.runsChild(decision.action)) continue;
    const line = findLine((r) => r.kind === 'input_request' && r.resultId === resultId);
    const what =
      decision.action.kind === 'tool_call' ? `tool ${JSON.stringify(decision.action.name)}` : 'a code action';
    throw new CorruptLogError(line, `${resultId} is a sub-agent's request, but ${what} runs no sub-agent`, {
      source: 'run log',
    });
  }
}

function settled(view: RunLogView, f: InFlightStep): RunLogView {
  return { ...view, inFlight: { ...f, resolution: 'settle' } };
}
