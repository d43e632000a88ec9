/**
 * Human input (docs/design/human-input.md), the pure part: which replies a request accepts, whether
 * a reply fits the open request, and whether an action needs a person before it runs.
 * @module
 */
import type { InputReply, InputRequest, InputRequestKind, ToolDescriptor } from '../types.ts';

type ReplyKind = InputReply['kind'];

/** The reply kinds a request accepts, in the order they are offered. */
export function acceptedReplies(kind: InputRequestKind, target: 'action' | 'model_call'): readonly ReplyKind[] {
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
  const accepted = acceptedReplies(pending.kind, pending.target);
  if (!accepted.includes(reply.kind)) {
    const of = pending.kind === 'settle' ? ` of ${pending.target === 'action' ? 'an action' : 'a model call'}` : '';
    return `a ${pending.kind} request${of} accepts ${accepted.join(', ')}, not ${reply.kind}`;
  }
  return null;
}

/**
 * What a person must do before a validated action runs: answer it (a tool answered by a
 * person), approve it (the tool or the executor says so), or nothing.
 */
export function gateOf(tool: ToolDescriptor | undefined, executorAsks: boolean): 'answer' | 'approval' | null {
  if (tool?.answeredBy === 'human') return 'answer';
  if (tool?.needsApproval === true || executorAsks) return 'approval';
  return null;
}
