/**
 * Which actions the library refuses before any executor sees them, the replay policy an action
 * intent records (docs/design/records-and-recovery.md#replay-policies, decision 0013), and whether a
 * person must approve or answer an action first (docs/design/human-input.md). Functions of the request
 * and decision.
 * @module
 */
import type { RunRequest } from './request.ts';
import { gateOf } from './internal/input.ts';
import { isThenable, plainOutcome } from './seam-values.ts';
import { RegistryExecutor } from './tools.ts';
import type { ActionDecision, ActionOutcome, ReplayPolicy, ToolDescriptor } from './types.ts';

/**
 * The outcome of an action the library refuses before any executor sees it: a custom
 * executor next to a non-empty `request.tools` gets only tool calls that validate.
 * The registry executor validates on its own, with the same sentence.
 */
export function refusalOf(
  req: RunRequest,
  decision: ActionDecision,
): { outcome: ActionOutcome; completedRun: false } | null {
  const { executor, tools } = req;
  if (executor instanceof RegistryExecutor || decision.action.kind !== 'tool_call' || tools.names().length === 0)
    return null;
  const valid = tools.validate(decision.action);
  if (valid.ok) return null;
  return { outcome: plainOutcome('not_executed', `Not executed: ${valid.message}.`, true), completedRun: false };
}

/**
 * The replay policy of an action: the named tool declares it, whatever the
 * executor; a custom executor's explicit `'never'` makes it stricter, never looser. An action
 * naming no known tool, or a code action, takes the executor's own policy (default `'never'`).
 */
export function replayPolicyOf(req: RunRequest, decision: ActionDecision): ReplayPolicy {
  const ex = req.executor;
  if (ex instanceof RegistryExecutor) return ex.replayPolicyFor(decision.action);
  const tool = toolOf(req, decision);
  if (tool) return ex.replayPolicy === 'never' ? 'never' : tool.replayPolicy;
  return ex.replayPolicy ?? 'never';
}

/** The tool an action names in `request.tools`, if any. */
export function toolOf(req: RunRequest, decision: ActionDecision): ToolDescriptor | undefined {
  return decision.action.kind === 'tool_call' ? req.tools.get(decision.action.name) : undefined;
}

/** Whether a person must answer or approve this action first (only for actions that validate). */
export function gateFor(req: RunRequest, decision: ActionDecision): 'answer' | 'approval' | null {
  const { tools, executor } = req;
  const { action } = decision;
  const tool = toolOf(req, decision);
  // Nothing can ask: no validation needed to know it (the common case costs no schema check here).
  if (tool?.answeredBy !== 'human' && tool?.needsApproval !== true && typeof executor.needsApproval !== 'function')
    return null;
  if (action.kind === 'tool_call' && tools.names().length > 0 && !tools.validate(action).ok) return null;
  let said: unknown;
  try {
    said = executor.needsApproval?.(action) ?? false;
  } catch {
    said = true; // a hook that cannot answer: ask the person rather than run unapproved
  }
  // Not a plain boolean (a promise, say): the hook did not answer either, so ask.
  if (isThenable(said)) Promise.resolve(said).catch(() => undefined);
  return gateOf(tool, said !== false);
}
