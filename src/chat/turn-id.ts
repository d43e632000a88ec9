/**
 * Chat ids and turn run ids. A turn's run id is a function of the chat id and the turn number,
 * so a repeated POST of a turn finds its run instead of starting a second one (decision 0055).
 * @module
 */
import { InvalidRequestError } from '../core/index.ts';

/** 1–128 characters, letters, digits, `_` and `-`: safe in a URL path segment and in every store's run ids. */
const CHAT_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Why `chatId` is not a chat id, or null when it is one. */
export function chatIdProblem(chatId: unknown): string | null {
  if (typeof chatId !== 'string') return 'the chat id must be a string';
  if (!CHAT_ID.test(chatId)) return 'the chat id must be 1–128 characters of A–Z, a–z, 0–9, "_" and "-"';
  return null;
}

/** `chatId`, checked: `InvalidRequestError` for anything else. */
export function checkChatId(chatId: unknown): string {
  const problem = chatIdProblem(chatId);
  if (problem !== null) throw new InvalidRequestError(problem, { source: 'chat' });
  return chatId as string;
}

/**
 * The run id of a chat's turn: `chat:<chatId>:<turn>` (turn 1 is the chat's first user message).
 * Within the run-id rule of every host (`[A-Za-z0-9._:-]{1,200}`). Throws `InvalidRequestError`
 * for a malformed chat id or turn number.
 *
 * @example
 * chatRunId('k3vQ9', 2) // 'chat:k3vQ9:2'
 */
export function chatRunId(chatId: string, turn: number): string {
  checkChatId(chatId);
  if (!Number.isSafeInteger(turn) || turn < 1) {
    throw new InvalidRequestError('the turn number must be a positive integer', { source: 'chat' });
  }
  return `chat:${chatId}:${turn}`;
}

/** The id of a turn's assistant message: the same on every stream of the turn and in `loadChat`. */
export function assistantMessageId(runId: string): string {
  return `${runId}:assistant`;
}

/** The id of a turn's user message in `loadChat`. */
export function userMessageId(runId: string): string {
  return `${runId}:user`;
}
