/**
 * `loadChat`: a chat's whole conversation as UI messages, rebuilt from its turns' logs.
 * @module
 */
import { readRunLog } from '../core/index.ts';
import type { JsonValue, LogRecord, Message, RunStore } from '../core/index.ts';
import type { UIMessage } from 'ai';
import { assembleMessage } from './assemble.ts';
import { endingOfLog } from './live-turn.ts';
import { TurnChunks } from './turn-chunks.ts';
import type { UIMessageChunk } from 'ai';
import { assistantMessageId, chatRunId, checkChatId, userMessageId } from './turn-id.ts';

const isRecord = (v: unknown): v is Record<string, JsonValue> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every turn of the chat as UI messages — per turn the user's message and the assistant's (text,
 * reasoning, tool parts with their states, approvals) — read from the turns' logs, so a page
 * reload needs no second message store. Turns are read from 1 up to the first that does not
 * exist. `[]` for an unknown chat; `InvalidRequestError` for a malformed chat id.
 *
 * @example
 * const chat = useChat({ id, messages: await loadChat(store, id), resume: true });
 */
export async function loadChat(store: RunStore, chatId: string): Promise<UIMessage[]> {
  checkChatId(chatId);
  const messages: UIMessage[] = [];
  for (let turn = 1; ; turn++) {
    const runId = chatRunId(chatId, turn);
    const records = await store.readLog(runId);
    if (records.length === 0) return messages;
    messages.push(...turnMessages(runId, records));
  }
}

/** One turn's user and assistant messages (the assistant's only once it has a part). */
export function turnMessages(runId: string, records: readonly LogRecord[]): UIMessage[] {
  const user = userMessageOf(records);
  const out: UIMessage[] = [];
  if (user !== null) {
    const parts = user.content.flatMap((b) => (b.type === 'text' ? [{ type: 'text' as const, text: b.text }] : []));
    out.push({ id: userMessageId(runId), role: 'user', parts });
  }
  const assistant = assembleMessage(assistantMessageId(runId), replayChunks(runId, records));
  if (assistant.parts.length > 0) out.push(assistant);
  return out;
}

/** A turn's chunks from its log, ending as the log ends (nothing at the end of a log still in flight). */
export function replayChunks(runId: string, records: readonly LogRecord[]): UIMessageChunk[] {
  const chunks: UIMessageChunk[] = [];
  const turn = new TurnChunks(runId, (c) => chunks.push(c));
  for (const rec of records) turn.record(rec);
  // A turn that waits for a person ends its stream there, whichever record came last (a step with
  // several calls may have had some of its requests answered).
  const view = readRunLog(records);
  if (view.ended !== null || view.state === 'awaiting_input') turn.end(endingOfLog(records));
  return chunks;
}

/**
 * The turn's user message: the last user message of the goal context its run started with
 * (the chat's `request` keeps it there), or null for a log without one.
 */
export function userMessageOf(records: readonly LogRecord[]): Message | null {
  const first = records[0];
  if (first?.kind !== 'run_started') return null;
  const context = first.snapshot['context'];
  const goal = isRecord(context) ? context['goal'] : undefined;
  if (!Array.isArray(goal)) return null;
  for (let i = goal.length - 1; i >= 0; i--) {
    const m = goal[i];
    if (isRecord(m) && m['role'] === 'user' && Array.isArray(m['content'])) return m as unknown as Message;
  }
  return null;
}
