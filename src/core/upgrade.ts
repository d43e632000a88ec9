/**
 * Runs that outlive their code: the identity a run is under after its upgrades, the `upgrade`
 * record that moves it to a new one, and what an upgrade may not change under an interrupted
 * step. The rules are in docs/upgrades.md.
 * @module
 */
import { CorruptLogError, UpgradeRefusedError } from './errors.ts';
import { callDecision } from './internal/step-calls.ts';
import type { FindLine } from './internal/recovery.ts';
import type { RunRequest } from './request.ts';
import { canonicalJson } from './serialization.ts';
import { applyUpgrade, sha256Hex } from './snapshot.ts';
import { RECORD_VERSION } from './types.ts';
import type {
  ActionDecision,
  JsonObject,
  JsonValue,
  ParamSnapshot,
  RunLogView,
  RunStartedRecord,
  StoredRequest,
  UpgradeChange,
  UpgradeRecord,
} from './types.ts';

type Upgrades = readonly UpgradeRecord[];

/**
 * The request data a run keeps beyond its snapshot, as its last
 * upgrade (or `run_started`) left it; null for a log older than 1.2.
 */
export function storedRequestOf(started: RunStartedRecord, upgrades: Upgrades): StoredRequest | null {
  return upgrades.at(-1)?.request ?? started.request ?? null;
}

/**
 * Rejects with `CorruptLogError` naming the first `upgrade` record whose `snapshotHash` is not
 * the hash of the snapshot in force after it: the values it lays over the old identity are the
 * ones it was written with.
 */
export async function checkUpgradeHashes(
  started: RunStartedRecord,
  upgrades: Upgrades,
  findLine: FindLine,
  source: string,
): Promise<void> {
  const snapshot: Record<string, JsonValue> = { ...started.snapshot };
  for (const u of upgrades) {
    applyUpgrade(snapshot, u);
    if ((await sha256Hex(canonicalJson(snapshot))) !== u.snapshotHash) {
      throw new CorruptLogError(
        findLine((r) => r === u),
        `the upgrade of step ${u.stepIndex} holds a snapshotHash ` +
          'that is not the hash of the snapshot it leaves in force',
        { source },
      );
    }
  }
}

/** The top-level keys of the paths at which two snapshots differ (`diffSnapshots`): what an upgrade record lists. */
function changedKeys(differing: readonly string[]): string[] {
  const keys = differing.map((path) => path.split(/[.[]/)[0] as string);
  return [...new Set(keys)].sort();
}

/**
 * The `upgrade` record that moves a run from `inForce` to `current`: every changed top-level key
 * with hashes of both sides and its new value (absent when the key is gone). `differing` is
 * `diffSnapshots(inForce, current)`, which the caller has already computed to decide on the upgrade.
 */
export async function upgradeRecord(
  view: RunLogView,
  inForce: ParamSnapshot,
  current: ParamSnapshot,
  opts: {
    readonly differing: readonly string[];
    readonly reason: string;
    readonly request: StoredRequest;
    readonly at: string;
  },
): Promise<UpgradeRecord> {
  const changes: Record<string, UpgradeChange> = {};
  const hashOf = async (s: ParamSnapshot, key: string): Promise<string | null> =>
    Object.hasOwn(s, key) ? sha256Hex(canonicalJson(s[key])) : null;
  for (const key of changedKeys(opts.differing)) {
    const value = Object.hasOwn(current, key) ? current[key] : undefined;
    const change = { before: await hashOf(inForce, key), after: await hashOf(current, key) };
    changes[key] = value === undefined ? change : { ...change, value };
  }
  const stepIndex = view.inFlight?.stepIndex ?? view.steps;
  const snapshotHash = await sha256Hex(canonicalJson(current));
  return {
    kind: 'upgrade',
    v: RECORD_VERSION,
    stepIndex,
    reason: opts.reason,
    changes,
    snapshotHash,
    request: opts.request,
    at: opts.at,
  };
}

/**
 * `UpgradeRefusedError` when the new request would change what the interrupted step or the open
 * request stands on: the tool its recorded action names is gone, its `never` became `safe`
 * (resume could then run again an action that may have run), or — while a person is asked about
 * it — the way a person gates it changed (an approval of a tool a person now answers, or the
 * reverse, would be carried out as the other). Null when the upgrade may go on.
 */
export function upgradeRefusal(
  runId: string,
  view: RunLogView,
  inForce: ParamSnapshot,
  request: RunRequest,
): UpgradeRefusedError | null {
  const f = view.inFlight;
  if (f === null) return null;
  if (f.calls !== null) {
    // A step with several calls: each call is judged as a one-call step would be.
    for (const [j, c] of f.calls.calls.entries()) {
      // A call whose outcome is known (landed, skipped, denied, answered) names nothing at stake.
      const settled = c.gateReply !== null && c.gateReply.reply.kind !== 'approve';
      if (c.result !== null || f.calls.intent.calls[j]?.skip !== null || settled) continue;
      const decision = callDecision(f.calls.intent.decision, j);
      const inFlight = f.calls.mayHaveRun && c.result === null;
      const asked = c.gate !== null && c.gateReply === null;
      const what = `call ${f.calls.intent.calls[j]?.resultId} of step ${f.stepIndex}`;
      const refusal = toolRefusal(runId, decision, inForce, request, { inFlight, asked, what });
      if (refusal) return refusal;
    }
    return null;
  }
  const decision = f.actionIntent?.decision ?? f.request?.request.decision ?? view.pending?.decision ?? null;
  if (decision === null) return null;
  const what = f.actionIntent
    ? `the action in flight in step ${f.stepIndex}`
    : `the open request of step ${f.stepIndex}`;
  const asked = f.request?.request.kind === 'approval' || f.request?.request.kind === 'answer';
  return toolRefusal(runId, decision, inForce, request, { inFlight: f.actionIntent !== null, asked, what });
}

/** What an upgrade may not change of the tool an in-flight action or an open request names. */
function toolRefusal(
  runId: string,
  decision: ActionDecision,
  inForce: ParamSnapshot,
  request: RunRequest,
  at: { readonly inFlight: boolean; readonly asked: boolean; readonly what: string },
): UpgradeRefusedError | null {
  if (decision.action.kind !== 'tool_call') return null;
  const name = decision.action.name;
  const before = toolsOf(inForce).find((t) => t['name'] === name);
  const after = request.tools.get(name);
  const { what } = at;
  const refuse = (detail: string): UpgradeRefusedError => new UpgradeRefusedError(runId, name, detail);
  if (before !== undefined && after === undefined)
    return refuse(`it removes tool ${JSON.stringify(name)}, which ${what} names; finish or settle that step first`);
  if (before?.['replayPolicy'] === 'never' && after?.replayPolicy === 'safe') {
    const why = at.inFlight
      ? 'an action that may have run would run again'
      : 'a crash while the approved action runs would run it again';
    return refuse(`it makes tool ${JSON.stringify(name)} replay-safe while ${what} names it: ${why}`);
  }
  if (at.asked && after !== undefined && (before?.['answeredBy'] ?? null) !== after.answeredBy) {
    return refuse(
      `it changes whether a person answers tool ${JSON.stringify(name)} while ${what} asks about it; ` +
        'answer or cancel that request first',
    );
  }
  return null;
}

function toolsOf(snapshot: ParamSnapshot): readonly JsonObject[] {
  const tools = snapshot['tools'];
  return Array.isArray(tools)
    ? (tools.filter((t) => typeof t === 'object' && t !== null && !Array.isArray(t)) as JsonObject[])
    : [];
}
