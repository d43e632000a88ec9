/**
 * What a chat POST asks for, read from an untrusted body: a new (or repeated) turn, a
 * continuation of a turn by its assistant message (approvals, tool outputs filled in), or a
 * reply to the latest turn's open request. Only the last message is read beyond its role: what
 * the client sends for earlier turns is never used.
 * @module
 */
import { InvalidRequestError } from '../core/index.ts';
import { inputReplyProblem } from '../core/internal-entry.ts';
import type { InputReply, Message, TextBlock } from '../core/index.ts';
import { checkChatId } from './turn-id.ts';

/** A stop asked for the chat's latest turn: `{ id, stop: { reason? }, runId? }`. */
export type ChatStopPost = { readonly chatId: string; readonly runId?: string; readonly reason?: string };

/** Most messages a POST may carry (a chat of 5,000 turns). */
export const MAX_MESSAGES = 10_000;

/** What a chat POST asks for. */
export type ChatPost =
  | { readonly kind: 'turn'; readonly chatId: string; readonly turn: number; readonly goal: Message }
  | { readonly kind: 'continue'; readonly chatId: string; readonly turn: number; readonly parts: readonly unknown[] }
  | { readonly kind: 'input'; readonly chatId: string; readonly runId: string; readonly input: InputReply };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const bad = (message: string): InvalidRequestError => new InvalidRequestError(message, { source: 'chat' });

/**
 * Read a POST body: `{ id, messages, trigger?, messageId? }` (the `DefaultChatTransport` body;
 * other keys a page adds are ignored) or `{ id, runId, input }`. Throws `InvalidRequestError`
 * naming what is wrong.
 */
export function parseChatPost(body: unknown): ChatPost {
  if (!isRecord(body)) throw bad('the body must be a JSON object');
  const chatId = checkChatId(body['id']);
  if (body['input'] !== undefined) {
    if (body['messages'] !== undefined) throw bad('give either `messages` or `input`, not both');
    const problem = inputReplyProblem(body['input']);
    if (problem !== null) throw bad(`input: ${problem}`);
    // A resultId (`s0.input`) repeats in every turn: only the turn's run id tells which request is answered.
    const runId = body['runId'];
    if (runId === undefined) throw bad('`runId` is required with `input`: the run id of the turn it answers');
    if (typeof runId !== 'string') throw bad('`runId` must be a string');
    return { kind: 'input', chatId, runId, input: body['input'] as InputReply };
  }
  const trigger = body['trigger'];
  if (trigger !== undefined && trigger !== 'submit-message' && trigger !== 'regenerate-message') {
    throw bad('`trigger` must be "submit-message" or "regenerate-message"');
  }
  const messageId = body['messageId'];
  const absent = messageId === undefined || messageId === null;
  if (!absent && typeof messageId !== 'string') throw bad('`messageId` must be a string');
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) throw bad('`messages` must be a non-empty array');
  if (messages.length > MAX_MESSAGES) throw bad(`\`messages\` holds more than ${MAX_MESSAGES} messages`);
  let turn = 0;
  for (const [i, m] of messages.entries()) {
    const role = isRecord(m) ? m['role'] : undefined;
    if (role !== 'user' && role !== 'assistant' && role !== 'system') {
      throw bad(`messages[${i}].role must be "user", "assistant" or "system"`);
    }
    if (role === 'user') turn++;
  }
  const last = messages[messages.length - 1] as Record<string, unknown>;
  const parts = last['parts'];
  if (!Array.isArray(parts)) throw bad('the last message must have a `parts` array');
  if (turn === 0) throw bad('`messages` holds no user message');
  if (last['role'] === 'user') return { kind: 'turn', chatId, turn, goal: userGoal(parts) };
  if (last['role'] === 'assistant') return { kind: 'continue', chatId, turn, parts };
  throw bad('the last message must be a user message (a new turn) or an assistant message (answers to its turn)');
}

/**
 * A body that asks to stop the chat's latest turn, `{ id, stop: {} | { reason }, runId? }`
 * (`runId`, when given, must name that turn), or null for a body without `stop`. Throws
 * `InvalidRequestError` for a malformed one, or one that also carries messages or an input.
 */
export function parseChatStop(body: unknown): ChatStopPost | null {
  if (!isRecord(body) || body['stop'] === undefined) return null;
  const chatId = checkChatId(body['id']);
  const stop = body['stop'];
  if (body['messages'] !== undefined || body['input'] !== undefined) {
    throw bad('`stop` goes alone: a body with `stop` carries no `messages` or `input`');
  }
  if (!isRecord(stop)) throw bad('`stop` must be an object: {} or { reason }');
  const unknown = Object.keys(stop).find((k) => k !== 'reason');
  if (unknown !== undefined) throw bad(`\`stop\` takes only \`reason\`, not ${JSON.stringify(unknown)}`);
  const { reason } = stop;
  if (reason !== undefined && typeof reason !== 'string') throw bad('`stop.reason` must be a string');
  const runId = body['runId'];
  if (runId !== undefined && typeof runId !== 'string') throw bad('`runId` must be a string');
  return { chatId, ...(runId === undefined ? {} : { runId }), ...(reason === undefined ? {} : { reason }) };
}

/** The user message as the turn's goal: its text parts, one text block each. Files cannot be carried. */
function userGoal(parts: readonly unknown[]): Message {
  const content: TextBlock[] = [];
  for (const [i, part] of parts.entries()) {
    if (!isRecord(part) || typeof part['type'] !== 'string') {
      throw bad(`parts[${i}] of the user message must be an object with a string type`);
    }
    if (part['type'] === 'text') {
      if (typeof part['text'] !== 'string') throw bad(`parts[${i}].text of the user message must be a string`);
      content.push({ type: 'text', text: part['text'] });
    } else if (part['type'] === 'file') {
      throw bad('the user message holds a file part; PolyLoop messages carry text only');
    }
    // Other parts (data-*, step-start, …) are the page's own: they do not reach the model.
  }
  if (content.every((b) => b.text === '')) throw bad('the user message has no text');
  return { role: 'user', content };
}
