/**
 * Which actions the library refuses before any executor sees them, and the replay policy an
 * action intent records (SPEC §7, decision 0013). Pure functions of the request and decision.
 * @module
 */
import type { RunRequest } from './request.ts';
import { freezeOutcome } from './seam-values.ts';
import { RegistryExecutor } from './tools.ts';
import type { ActionDecision, ActionOutcome, ReplayPolicy } from './types.ts';

/**
 * The outcome of an action the library refuses before any executor sees it: a custom
 * executor next to a non-empty `request.tools` gets only tool calls that validate (SPEC §7).
 * The registry executor validates on its own, with the same sentence.
 */
export function refusalOf(req: RunRequest, decision: ActionDecision): { outcome: ActionOutcome; completedRun: false } | null {
  const { executor, tools } = req;
  if (executor instanceof RegistryExecutor || decision.action.kind !== 'tool_call' || tools.names().length === 0) return null;
  const valid = tools.validate(decision.action);
  if (valid.ok) return null;
  return { outcome: freezeOutcome({ status: 'not_executed', observation: `Not executed: ${valid.message}.`, observationIsSynthetic: true, envReportedCompletion: false, observationTruncatedChars: 0 }), completedRun: false };
}

/**
 * The replay policy of an action (SPEC §7): the named tool declares it, whatever the
 * executor; a custom executor's explicit `'never'` makes it stricter, never looser. An action
 * naming no known tool, or a code action, takes the executor's own policy (default `'never'`).
 */
export function replayPolicyOf(req: RunRequest, decision: ActionDecision): ReplayPolicy {
  const ex = req.executor;
  if (ex instanceof RegistryExecutor) return ex.replayPolicyFor(decision.action);
  const tool = decision.action.kind === 'tool_call' ? req.tools.get(decision.action.name) : undefined;
  if (tool) return ex.replayPolicy === 'never' ? 'never' : tool.replayPolicy;
  return ex.replayPolicy ?? 'never';
}
