/**
 * Human input through the AI SDK's own parts: a reply to a turn's open request, read from the
 * assistant message a page sends back — an approval response (`addToolApprovalResponse`), a tool
 * part the page filled (`addToolOutput`, for `answeredBy: 'human'`), or a settlement data part
 * carrying `data.reply`.
 * @module
 */
import { innermostRequest, InvalidRequestError } from '../core/index.ts';
import { inputReplyProblem } from '../core/internal-entry.ts';
import type { InputReply, InputRequest } from '../core/index.ts';
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
      if (approval['approved']) return { kind: 'approve', resultId };
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
