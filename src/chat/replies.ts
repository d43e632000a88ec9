/**
 * Human input through the AI SDK's own parts: a reply to a turn's open request, read from the
 * assistant message a page sends back — an approval response (`addToolApprovalResponse`, with
 * the arguments of a `data-polyloop-edit` part of the same id when the person changed them), a
 * tool part the page filled (`addToolOutput`, for `answeredBy: 'human'`), or a settlement data
 * part carrying `data.reply`.
 * @module
 */
import {
  acceptedReplies,
  innermostRequest,
  InvalidInputError,
  InvalidRequestError,
  readRunLog,
} from '../core/index.ts';
import { inputReplyProblem } from '../core/internal-entry.ts';
import type { InputReply, InputRequest, LogRecord } from '../core/index.ts';
import { approvalIdOf, settleIdOf } from './part-ids.ts';

/** The reason a denial carries when the person gave none (it is what the model reads). */
export const DEFAULT_DENIAL = 'The user denied this tool call.';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isToolPart = (p: Record<string, unknown>): boolean =>
  typeof p['type'] === 'string' && (p['type'].startsWith('tool-') || p['type'] === 'dynamic-tool');

/**
 * The reply the message's parts give to `pending`, or null when they give none. `toolCallId`
 * is the id of the tool part the request is about (for an answer). A sub-agent's request is
 * answered as what it really asks, on the parent's parts: the reply goes to the parent's request.
 */
export function replyOfParts(
  parts: readonly unknown[],
  runId: string,
  pending: InputRequest,
  toolCallId: string | null,
): InputReply | null {
  const { resultId } = pending;
  const { kind } = innermostRequest(pending);
  for (const p of parts) {
    if (!isRecord(p)) continue;
    if (kind === 'approval' && isToolPart(p)) {
      const approval = p['approval'];
      if (!isRecord(approval) || approval['id'] !== approvalIdOf(runId, resultId)) continue;
      if (typeof approval['approved'] !== 'boolean') continue;
      const edit = editOf(parts, runId, resultId);
      if (approval['approved']) return edit === undefined ? { kind: 'approve', resultId } : edit;
      if (edit !== undefined) {
        const why =
          'is denied in the message, and a data-polyloop-edit part gives it arguments: an edit goes with an approval';
        throw new InvalidInputError(runId, `${resultId} ${why}`);
      }
      return { kind: 'deny', resultId, reason: reasonOf(approval['reason']) };
    }
    if (kind === 'answer' && isToolPart(p) && toolCallId !== null && p['toolCallId'] === toolCallId) {
      if (p['state'] === 'output-available') return { kind: 'answer', resultId, text: answerText(p['output']) };
      if (p['state'] === 'output-error') return { kind: 'deny', resultId, reason: reasonOf(p['errorText']) };
    }
    if (kind === 'settle' && p['type'] === 'data-polyloop-settle' && p['id'] === settleIdOf(runId, resultId)) {
      const reply = isRecord(p['data']) ? p['data']['reply'] : undefined;
      const candidate = isRecord(reply) ? { ...reply, resultId } : undefined;
      if (candidate !== undefined && inputReplyProblem(candidate) === null) return candidate as InputReply;
    }
  }
  return null;
}

/**
 * The requests the message's parts answered, by resultId — whatever the turn's state now: where
 * a repeated POST of the same answers starts its stream.
 */
export function answeredIds(
  parts: readonly unknown[],
  runId: string,
  resultIdOfTool: (toolCallId: string) => string | null,
): string[] {
  const ids: string[] = [];
  const prefix = `${runId}:`;
  for (const p of parts) {
    if (!isRecord(p)) continue;
    const approval = isRecord(p['approval']) ? p['approval'] : {};
    const approvalId = typeof approval['approved'] === 'boolean' ? approval['id'] : undefined;
    const filled = p['state'] === 'output-available' || p['state'] === 'output-error';
    if (isToolPart(p) && typeof approvalId === 'string' && approvalId.startsWith(prefix)) {
      ids.push(approvalId.slice(prefix.length));
    } else if (isToolPart(p) && filled && typeof p['toolCallId'] === 'string') {
      const id = resultIdOfTool(p['toolCallId']);
      if (id !== null) ids.push(id);
    } else if (p['type'] === 'data-polyloop-settle' && typeof p['id'] === 'string' && p['id'].startsWith(prefix)) {
      ids.push(p['id'].slice(prefix.length));
    }
  }
  return ids;
}

/**
 * The approval with other arguments a `data-polyloop-edit` part (`id` = the approval id) gives
 * the request, or undefined when the message has no such part. A part without `data.arguments`
 * as a JSON object is `InvalidRequestError`; the arguments' check against the tool's schema is
 * the run's (the engine makes it before anything is written).
 */
function editOf(parts: readonly unknown[], runId: string, resultId: string): InputReply | undefined {
  const id = approvalIdOf(runId, resultId);
  const part = parts.find((p) => isRecord(p) && p['type'] === 'data-polyloop-edit' && p['id'] === id);
  if (!isRecord(part)) return undefined;
  const args = isRecord(part['data']) ? part['data']['arguments'] : undefined;
  const reply = { kind: 'approve', resultId, arguments: args };
  const problem = args === undefined ? 'arguments: required' : inputReplyProblem(reply);
  if (problem !== null) {
    const what = `the data-polyloop-edit part ${JSON.stringify(id)} must carry data.arguments, a JSON object`;
    throw new InvalidRequestError(`${what} (${problem})`, { source: 'chat' });
  }
  return reply as InputReply;
}

function reasonOf(value: unknown): string {
  return typeof value === 'string' && value.trim() !== '' ? value : DEFAULT_DENIAL;
}

/** What the model reads as a person's answer: a string as is, anything else as JSON. */
function answerText(output: unknown): string {
  if (typeof output === 'string') return output;
  try {
    return JSON.stringify(output) ?? '';
  } catch {
    // Nested past what JSON.stringify can walk: the client's doing, so a 400, not a server failure.
    throw new InvalidRequestError('the tool output is nested too deeply to be written as text', { source: 'chat' });
  }
}

/** A reply that fits none of the open requests is refused before anything is written or streamed. */
export function checkFits(runId: string, records: readonly LogRecord[], input: InputReply): void {
  const open = readRunLog(records).openRequests;
  if (open.length === 0) return;
  const pending = open.find((r) => r.resultId === input.resultId);
  if (pending === undefined) {
    const awaited = open.map((r) => r.resultId).join(', ');
    throw new InvalidInputError(runId, `the turn awaits ${awaited}, not ${input.resultId}`);
  }
  const accepted = acceptedReplies(pending);
  if (!accepted.includes(input.kind)) {
    const { kind } = innermostRequest(pending);
    throw new InvalidInputError(runId, `a ${kind} request accepts ${accepted.join(', ')}, not ${input.kind}`);
  }
}
