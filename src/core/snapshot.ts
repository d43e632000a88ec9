/**
 * The parameter snapshot a run's identity is made of
 * (docs/design/records-and-recovery.md#identity-snapshot), its hash, and the comparison with the
 * snapshot a run started with.
 * @module
 */
import { RunIdentityMismatchError } from './errors.ts';
import { diffSnapshots } from './internal/json-compare.ts';
import type { AgentDefinition, RunRequest } from './request.ts';
import { canonicalJson } from './serialization.ts';
import type { JsonValue, ParamSnapshot, RunStartedRecord, ToolDescriptor, UpgradeRecord } from './types.ts';

/** The snapshot of `agent` and `request` in stored form (canonical JSON, parsed back): what `run_started` records. */
export function identitySnapshot(agent: AgentDefinition, request: RunRequest): ParamSnapshot {
  return JSON.parse(snapshotText(agent, request)) as ParamSnapshot;
}

/**
 * The canonical text {@link identitySnapshot} parses: `canonicalJson` of the snapshot gives it
 * back (sorting sorted keys changes nothing), so a fresh run hashes it without a second walk.
 */
export function snapshotText(agent: AgentDefinition, request: RunRequest): string {
  return canonicalJson(buildSnapshot(agent, request));
}

/**
 * `RunIdentityMismatchError` (for `runId`) naming the keys at which `current` (see
 * {@link identitySnapshot}) differs from the snapshot the run is under (the one it `started` with, after its
 * `upgrades`), or null when it is the same run. What
 * `resume` checks first; a host can ask it before storing anything.
 *
 * @example
 * const mismatch = identityMismatch(request.runId, started, identitySnapshot(agent, request));
 * if (mismatch) return badRequest(mismatch.message);
 */
export function identityMismatch(
  runId: string,
  started: RunStartedRecord,
  current: ParamSnapshot,
  upgrades: readonly UpgradeRecord[] = [],
): RunIdentityMismatchError | null {
  const differing = diffSnapshots(snapshotInForce(started, upgrades), current);
  return differing.length > 0 ? new RunIdentityMismatchError(runId, differing) : null;
}

/** The snapshot a run is under: the one it started with, each upgrade's new values laid over it in order. */
export function snapshotInForce(started: RunStartedRecord, upgrades: readonly UpgradeRecord[]): ParamSnapshot {
  if (upgrades.length === 0) return started.snapshot;
  const out: Record<string, JsonValue> = { ...started.snapshot };
  for (const u of upgrades) applyUpgrade(out, u);
  return out;
}

/** Lay an upgrade's new values over `snapshot` (a key without a value is gone). */
export function applyUpgrade(snapshot: Record<string, JsonValue>, u: UpgradeRecord): void {
  for (const [key, change] of Object.entries(u.changes)) {
    if (change.value === undefined) delete snapshot[key];
    // Defined, not assigned: a key named `__proto__` in a log is data, never the object's prototype.
    else
      Object.defineProperty(snapshot, key, {
        value: change.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
}

/**
 * The parameter snapshot: model, interpreter and executor params (and the executor's
 * replay policy when it declares one), synthetic texts, and
 * the request's budget, tools, context, injections, binding, replay policy, template and render
 * style, `parallelToolCalls` above 1 and `historyWindow` when given. Not in it: runId,
 * cancelGraceMs, the store, the event sink.
 */
export function buildSnapshot(agent: AgentDefinition, req: RunRequest): Record<string, unknown> {
  // The copies `defineAgent` froze, not the seams' live params: changing a seam's params after
  // defineAgent must not change the identity of the runs of that definition.
  const executorReplayPolicy = req.executor.replayPolicy;
  return {
    model: agent.params.model,
    interpreter: agent.params.interpreter,
    executor: req.executor.params ?? null,
    // Only when the executor declares one: a stored snapshot without it is not compared on it.
    ...(executorReplayPolicy === undefined ? {} : { executorReplayPolicy }),
    syntheticObservations: agent.syntheticObservations,
    budget: {
      maxSteps: req.budget.maxSteps,
      maxValidActions: req.budget.maxValidActions,
      maxContextChars: req.budget.maxContextChars,
      // Only when set: a run without a token limit keeps the identity it had before the key existed.
      ...(req.budget.maxTotalTokens === undefined ? {} : { maxTotalTokens: req.budget.maxTotalTokens }),
    },
    tools: req.tools.names().map((name) => toolIdentity(req.tools.get(name) as ToolDescriptor)),
    context: req.context,
    injections: req.injections,
    modelBinding: req.modelBinding,
    modelReplayPolicy: req.modelReplayPolicy,
    observationTemplate: req.observationTemplate,
    toolRenderStyle: req.toolRenderStyle,
    // Only above 1: a run of one call a turn keeps the identity it had before the key existed.
    ...((req.parallelToolCalls ?? 1) > 1 ? { parallelToolCalls: req.parallelToolCalls } : {}),
    // Only when given: what the model is handed changes with it, and a run without one keeps its identity.
    ...(req.historyWindow === undefined ? {} : { historyWindow: { steps: req.historyWindow.steps } }),
  };
}

/**
 * The last text hashed and its hash. A process runs many runs of one agent and request shape, whose
 * snapshots are the same text: `crypto.subtle` costs some 50–100 µs a hash in Node, most of a short
 * run's fixed cost (a microsecond a step at N = 100).
 */
let lastHashed: { readonly text: string; readonly hash: string } | null = null;

/** Hex SHA-256 of a string, via `crypto.subtle`. */
export async function sha256Hex(text: string): Promise<string> {
  if (lastHashed?.text === text) return lastHashed.hash;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  const hash = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
  lastHashed = { text, hash };
  return hash;
}

/**
 * A tool's part of the identity. The human-input keys (`needsApproval`, `answeredBy`) appear
 * only when they differ from their default, so a snapshot written before they existed still
 * equals the snapshot of the same tool today.
 */
function toolIdentity(d: ToolDescriptor): JsonValue {
  const { needsApproval, answeredBy, ...v1 } = d;
  return {
    ...v1,
    ...(needsApproval ? { needsApproval } : {}),
    ...(answeredBy ? { answeredBy } : {}),
  } as unknown as JsonValue;
}
