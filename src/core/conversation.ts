/**
 * A run's conversation, read from its log: what a caller that chains runs (a chat: one run per
 * user message) hands the next run as its context. Pure.
 * @module
 */
import { stepHistory } from './internal/assembly.ts';
import type { SyntheticTexts } from './internal/assembly.ts';
import { readRunLog } from './run-log.ts';
import type { ContentBlock, JsonValue, LogRecord, Message, StepRecord } from './types.ts';

const isRecord = (v: unknown): v is Record<string, JsonValue> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The history a run ended with, without its system messages: its context messages (run
 * context, then goal context, as `run_started` recorded them), the turns every completed step
 * added to history (as the loop assembles it, see docs/api.md: the assistant's decision, then the
 * observation or the explanation), and, when the last step gave the final answer, that reply as an assistant
 * message. The tool section and injections are left out with the other system messages. A run
 * that awaits input or is still in flight gives what its completed steps hold. `[]` for an
 * empty log. Throws `CorruptLogError` as `readRunLog` does.
 *
 * @example
 * const context = conversationOf(await store.readLog('chat:k3vQ9:1')); // turn 2's context
 */
export function conversationOf(records: readonly LogRecord[]): Message[] {
  const view = readRunLog(records);
  if (view.started === null) return [];
  const { snapshot } = view.started;
  const context = isRecord(snapshot['context']) ? snapshot['context'] : {};
  const recorded = snapshot['observationTemplate'];
  const template = typeof recorded === 'string' ? recorded : '{observation}';
  const synthetic = syntheticTexts(snapshot['syntheticObservations']);
  const given = [...messagesOf(context['run']), ...messagesOf(context['goal'])];
  const messages: Message[] = given.filter((m) => m.role !== 'system');
  for (const step of view.trajectory) messages.push(...stepHistory(step, template, synthetic));
  const last = view.trajectory.at(-1);
  if (last?.decision === 'final') messages.push({ role: 'assistant', content: finalContent(last) });
  // Copies: the records are the store's, and the caller hands these messages on to a new run.
  return structuredClone(messages);
}

/** The final reply as history would hold it: the decision's content, else its text, else the answer. */
function finalContent(step: StepRecord): readonly ContentBlock[] {
  if (step.historyContent !== null && step.historyContent.length > 0) return step.historyContent;
  return [{ type: 'text', text: step.historyText ?? step.finalAnswer ?? '' }];
}

/** The messages of a recorded context list (a snapshot holds them as plain JSON). */
function messagesOf(value: JsonValue | undefined): Message[] {
  return Array.isArray(value) ? (value as unknown as Message[]) : [];
}

function syntheticTexts(value: JsonValue | undefined): SyntheticTexts {
  const v = isRecord(value) ? value : {};
  return {
    notExecuted: typeof v['notExecuted'] === 'string' ? v['notExecuted'] : '',
    envError: typeof v['envError'] === 'string' ? v['envError'] : '',
  };
}
