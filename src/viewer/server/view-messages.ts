/**
 * A step's messages as the model saw them, for the viewer's page: core's `stepMessages` (the
 * context, tool section, injections and goal of the code in force at that model call, then the
 * history before it), a page at a time and each long text clipped, as the page of steps clips
 * observations. Pure.
 * @module
 */
import { stepMessages } from '../../core/internal-entry.ts';
import type { AssembledMessage, StepMessages } from '../../core/internal-entry.ts';
import type { ContentBlock, Message } from '../../core/index.ts';
import { OBSERVATION_PAGE_CHARS } from './view-model.ts';
import type { LogReading } from './view-model.ts';

/** One message of a page: its part, the step that added it (history), and the characters left out of it. */
export type ViewMessage = AssembledMessage & { readonly clippedChars: number };

/** A page of a step's messages, with everything else of the call and what the log cannot give back. */
export type MessagesPage = Omit<StepMessages, 'messages'> & {
  /** How many messages the call was handed in all. */
  readonly total: number;
  readonly from: number;
  readonly messages: readonly ViewMessage[];
};

/**
 * Messages `from` … `from + limit - 1` handed to step `stepIndex`'s model; null when that step
 * made no model call in the log (or the log cannot be read that far).
 */
export function messagesPage(reading: LogReading, stepIndex: number, from: number, limit: number): MessagesPage | null {
  const seen = stepMessages(reading.records, stepIndex, reading.view);
  if (seen === null) return null;
  const { messages, ...call } = seen;
  return {
    ...call,
    total: messages.length,
    from,
    messages: messages.slice(from, from + limit).map(clipped),
  };
}

/** A message whose long texts are cut to {@link OBSERVATION_PAGE_CHARS} each, and how much was cut. */
function clipped(m: AssembledMessage): ViewMessage {
  let cut = 0;
  const content = m.message.content.map((b): ContentBlock => {
    const over = textOf(b).length - OBSERVATION_PAGE_CHARS;
    if (over <= 0) return b;
    cut += over;
    if (b.type === 'text' || b.type === 'tool_result' || b.type === 'reasoning')
      return { ...b, text: b.text.slice(0, OBSERVATION_PAGE_CHARS) };
    return b;
  });
  const message = cut === 0 ? m.message : ({ ...m.message, content } as Message);
  return { ...m, message, clippedChars: cut };
}

function textOf(b: ContentBlock): string {
  return b.type === 'text' || b.type === 'tool_result' || b.type === 'reasoning' ? b.text : '';
}
