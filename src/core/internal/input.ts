/**
 * Human input (docs/design/human-input.md), the pure part: which replies a request accepts, whether
 * a reply fits the open request, and whether an action needs a person before it runs.
 * @module
 */
import type { InputReply, InputRequest, InputRequestKind, ToolDescriptor } from '../types.ts';

type ReplyKind = InputReply['kind'];

/** What a request asks, as a request record holds it or `pending` shows it. */
type AskedShape = Pick<InputRequest, 'kind' | 'target' | 'child'>;

/**
 * The reply kinds a request accepts, in the order they are offered. A sub-agent's request (kind
 * `child`) accepts what the request it holds accepts: give the request itself.
 */
export function acceptedReplies(request: AskedShape): readonly ReplyKind[];
export function acceptedReplies(kind: InputRequestKind, target: 'action' | 'model_call'): readonly ReplyKind[];
export function acceptedReplies(
  kindOrRequest: InputRequestKind | AskedShape,
  target?: 'action' | 'model_call',
): readonly ReplyKind[] {
  if (typeof kindOrRequest === 'object') {
    const leaf = innermostRequest(kindOrRequest);
    return acceptedReplies(leaf.kind, leaf.target);
  }
  const kind = kindOrRequest;
  // A `child` kind without its request says nothing of what it accepts.
  if (kind === 'child') return [];
  if (kind === 'approval') return ['approve', 'deny', 'cancel'];
  if (kind === 'answer') return ['answer', 'deny', 'cancel'];
  return target === 'action' ? ['executed', 'retry', 'deny', 'cancel'] : ['retry', 'cancel'];
}

/**
 * Why `reply` does not answer one of the `open` requests (a sentence saying what was expected), or
 * null when it does. `reply` has the shape of an {@link InputReply} already.
 */
export function replyMismatch(reply: InputReply, open: readonly InputRequest[], ended: boolean): string | null {
  if (ended) return 'the run has ended; it awaits no input';
  const pending = open.find((r) => r.resultId === reply.resultId);
  if (open.length === 0) return 'the run awaits no input';
  if (!pending) {
    const ids = open.map((r) => JSON.stringify(r.resultId)).join(', ');
    const which = open.length === 1 ? `the open request is ${ids}` : `the open requests are ${ids}`;
    return `${which}, not ${JSON.stringify(reply.resultId)}`;
  }
  const accepted = acceptedReplies(pending);
  if (!accepted.includes(reply.kind)) {
    const leaf = innermostRequest(pending);
    const of = leaf.kind === 'settle' ? ` of ${leaf.target === 'action' ? 'an action' : 'a model call'}` : '';
    const inChild = leaf === pending ? '' : ` (of sub-agent run ${JSON.stringify(childRunOf(pending))})`;
    return `a ${leaf.kind} request${of}${inChild} accepts ${accepted.join(', ')}, not ${reply.kind}`;
  }
  return null;
}

/**
 * What is really asked: the request itself, or for a sub-agent's request (kind `child`) the
 * innermost request it holds, however deep the sub-agents nest.
 */
export function innermostRequest<R extends AskedShape>(request: R): R | InputRequest {
  let r: R | InputRequest = request;
  for (let depth = 0; r.kind === 'child' && r.child !== undefined && depth < MAX_CHILD_DEPTH; depth++)
    r = r.child.request;
  return r;
}

/** The run whose request is really asked: the innermost sub-agent's, or null for a run's own request. */
export function childRunOf(request: AskedShape): string | null {
  let r: AskedShape = request;
  let runId: string | null = null;
  for (let depth = 0; r.kind === 'child' && r.child !== undefined && depth < MAX_CHILD_DEPTH; depth++) {
    runId = r.child.runId;
    r = r.child.request;
  }
  return runId;
}

/** How deep sub-agent requests may nest in a log (a decoder refuses deeper ones: a loop guard, not a policy). */
export const MAX_CHILD_DEPTH = 64;

/**
 * What a person must do before a validated action runs: answer it (a tool answered by a
 * person), approve it (the tool or the executor says so), or nothing.
 */
export function gateOf(tool: ToolDescriptor | undefined, executorAsks: boolean): 'answer' | 'approval' | null {
  if (tool?.answeredBy === 'human') return 'answer';
  if (tool?.needsApproval === true || executorAsks) return 'approval';
  return null;
}
