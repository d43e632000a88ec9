/**
 * Edit on approval (docs/human-input.md#edit-on-approval): a person approves a tool call with
 * other arguments. They are checked against the tool's schema before anything is written, stored
 * with the reply, and are what the action intent, the handler and the step record see; the
 * assistant's tool call in history keeps what the model proposed, and the observation opens with
 * one fixed sentence saying what the person changed.
 * @module
 */
import { InvalidInputError } from './errors.ts';
import type { RunRequest } from './request.ts';
import { canonicalJson } from './serialization.ts';
import type { InputReply, JsonObject, RunLogView } from './types.ts';

/** The arguments a reply approves with, when the person changed them; null otherwise. */
export function editedArguments(reply: InputReply | null | undefined): JsonObject | null {
  return reply?.kind === 'approve' && reply.arguments !== undefined ? reply.arguments : null;
}

/** The observation of an action a person approved with other arguments: the fixed sentence, then the outcome's. */
export function editedObservation(observation: string, args: JsonObject): string {
  return `A person changed the arguments of this call before it ran, to ${canonicalJson(args)}.\n${observation}`;
}

/**
 * Check a reply's edited arguments against the request it answers: an approval of a call of one
 * of the run's own tools, and arguments its schema accepts. Throws `InvalidInputError` listing
 * every problem; nothing has been written.
 */
export function checkEdit(runId: string, reply: InputReply, view: RunLogView, request: RunRequest): void {
  const args = editedArguments(reply);
  if (args === null) return;
  const open = view.openRequests.find((q) => q.resultId === reply.resultId);
  if (!open || open.kind !== 'approval')
    throw new InvalidInputError(
      runId,
      open?.kind === 'child'
        ? `${reply.resultId} is a sub-agent's approval: it is approved as proposed ` +
            '(arguments cannot be edited through a parent)'
        : `${reply.resultId} is not an approval: only an approval takes edited arguments`,
    );
  const action = open.decision?.action;
  const tool = action?.kind === 'tool_call' ? request.tools.get(action.name) : undefined;
  if (!action || action.kind !== 'tool_call' || !tool)
    throw new InvalidInputError(
      runId,
      `${reply.resultId} approves an action that is no call of the run's tools: its arguments cannot be edited`,
    );
  const valid = request.tools.validate({ ...action, arguments: args }, Number.POSITIVE_INFINITY);
  if (!valid.ok)
    throw new InvalidInputError(runId, `the edited arguments are refused: ${valid.message}`, { field: 'arguments' });
}
