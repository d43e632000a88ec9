/**
 * What a sub-agent asks, as a chat shows it: a turn whose tool runs a child run (`agentTool`) pauses
 * on a request of kind `child`, and the page sees what is really asked — the innermost request —
 * on the tool part of the parent's call, with the child's action named beside it (decision 0071).
 * @module
 */
import { acceptedReplies, innermostRequest } from '../core/index.ts';
import type { Action, InputRequest, JsonValue } from '../core/index.ts';

/** A request as a record or an event holds it. */
export type AskedRequest = Pick<InputRequest, 'kind' | 'target' | 'decision' | 'child'>;

/**
 * What a sub-agent asks: `approval.descriptor` of the parent's tool part (an approval) and the
 * `data-polyloop-child` part's data (every kind).
 */
export type ChildAsk = {
  /** The run the parent's call runs. */
  readonly childRunId: string;
  /** The run whose request it is: `childRunId`, or a sub-agent of it when they nest. */
  readonly askingRunId: string;
  readonly kind: 'approval' | 'answer' | 'settle';
  readonly target: 'action' | 'model_call';
  /** The action the sub-agent asks about; null for a model call it asks to settle. */
  readonly action: Action | null;
};

/** What a `child` request really asks, or null for a run's own request. */
export function childAskOf(request: AskedRequest): ChildAsk | null {
  if (request.kind !== 'child' || request.child === undefined) return null;
  const leaf = innermostRequest(request);
  if (leaf.kind === 'child') return null;
  let asking = request.child;
  while (asking.request.kind === 'child' && asking.request.child !== undefined) asking = asking.request.child;
  const action = leaf.decision?.action ?? null;
  return { childRunId: request.child.runId, askingRunId: asking.runId, kind: leaf.kind, target: leaf.target, action };
}

/** The request's reason on the approval (`approval.requestReason`): which run asks to run what. */
export function askReason(ask: ChildAsk): string {
  const what = ask.action === null ? 'a model call' : ask.action.kind === 'tool_call' ? ask.action.name : 'code';
  return `The sub-agent run ${ask.askingRunId} asks to run ${what}.`;
}

/** The data of a sub-agent's `data-polyloop-child` part: where the request is, and what it asks and accepts. */
export function childAskData(
  where: { readonly runId: string; readonly resultId: string; readonly stepIndex: number },
  toolCallId: string | null,
  ask: ChildAsk,
  request: AskedRequest,
): Record<string, JsonValue> {
  const accepts = [...acceptedReplies(request)];
  return { ...where, toolCallId, ...(ask as unknown as Record<string, JsonValue>), accepts };
}
