/**
 * Context assembly (pure, sync): segment order, tool section, injection slots, history messages
 * of a completed step, and the size metric (docs/design/conversation.md#assembly,
 * docs/design/conversation.md#native-tool-calls).
 * The session keeps the prefix and the history as it grows and adds sizes incrementally, so
 * nothing here is ever called over the whole history per step.
 * @module
 */
import type {
  CallRecord,
  ContentBlock,
  Message,
  ModelToolSchema,
  SkillEntry,
  StepRecord,
  ToolRenderStyle,
} from '../types.ts';

/** The texts the library puts into history for actions that did not (properly) run. */
export type SyntheticTexts = { readonly notExecuted: string; readonly envError: string };

/** Size of one block (docs/design/conversation.md#the-size-metric-and-the-context-limit). */
export function blockSize(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
    case 'tool_result':
    case 'reasoning':
      return block.text.length;
    case 'tool_call':
      return block.name.length + (JSON.stringify(block.arguments) ?? '').length;
    case 'opaque':
      return (JSON.stringify(block.data) ?? '').length;
  }
}

/** Size of messages: the sum of their blocks' sizes. */
export function messagesSize(messages: readonly Message[]): number {
  let total = 0;
  // Indexed, not for…of: a run sizes each step's turns, and the iterators were allocated every step.
  for (let i = 0; i < messages.length; i++) {
    const { content } = messages[i] as Message;
    for (let j = 0; j < content.length; j++) total += blockSize(content[j] as Message['content'][number]);
  }
  return total;
}

/** What the model-call `tools` field adds to the context size: its JSON length, 0 when empty. */
export function toolsSize(tools: readonly ModelToolSchema[]): number {
  return tools.length === 0 ? 0 : JSON.stringify(tools).length;
}

const system = (text: string): Message => ({ role: 'system', content: [{ type: 'text', text }] });

/** The tool section: one system message, or null for style `none` or no tools. */
export function renderToolSection(tools: readonly ModelToolSchema[], style: ToolRenderStyle): Message | null {
  if (style === 'none' || tools.length === 0) return null;
  if (style === 'json') return system(JSON.stringify(tools));
  const parts = tools.map(
    (t) => `### ${t.name}\n${t.description}\n\n\`\`\`json\n${JSON.stringify(t.parameters, null, 2)}\n\`\`\``,
  );
  return system(`## Tools\n\n${parts.join('\n\n')}`);
}

/** One system message per non-empty channel, channels in sorted key order, entries in given order. */
export function renderInjections(injections: Readonly<Record<string, readonly SkillEntry[]>>): Message[] {
  const out: Message[] = [];
  for (const channel of Object.keys(injections).sort()) {
    const entries = injections[channel] ?? [];
    if (entries.length === 0) continue;
    out.push(system(entries.map((e) => `${e.name}\n${e.text}`).join('\n\n')));
  }
  return out;
}

/** Everything before history: run context → tool section → injection slots → goal context. */
export function assemblePrefix(input: {
  readonly runContext: readonly Message[];
  readonly tools: readonly ModelToolSchema[];
  readonly toolRenderStyle: ToolRenderStyle;
  readonly injections: Readonly<Record<string, readonly SkillEntry[]>>;
  readonly goalContext: readonly Message[];
}): Message[] {
  const toolSection = renderToolSection(input.tools, input.toolRenderStyle);
  return [
    ...input.runContext,
    ...(toolSection ? [toolSection] : []),
    ...renderInjections(input.injections),
    ...input.goalContext,
  ];
}

const SLOT = '{observation}';

/**
 * The last one-slot template cut at its slot. A run wraps every step's observation in one template:
 * its text before the slot is cut once and shared by every observation a run keeps (a cut made each
 * step was one more string a step, held as long as the run). What a call returns depends on its
 * arguments only.
 */
let cut: { readonly template: string; readonly before: string; readonly after: string } | null = null;

/**
 * Replace every `{observation}` in the template, the observation taken as it is (no `$` patterns).
 * A template with one slot, the usual, is cut at it: no closure and no replace a step.
 */
export function wrapObservation(template: string, observation: string): string {
  if (cut?.template === template) return cut.before + observation + cut.after;
  const at = template.indexOf(SLOT);
  if (at === -1) return template;
  if (template.indexOf(SLOT, at + SLOT.length) === -1) {
    cut = { template, before: template.slice(0, at), after: template.slice(at + SLOT.length) };
    return cut.before + observation + cut.after;
  }
  return template.replaceAll(SLOT, () => observation);
}

/** The observation text history shows for a step's action: synthetic for not_executed / env_error. */
export function historyObservation(step: StepRecord, synthetic: SyntheticTexts): string {
  if (step.actionStatus === 'not_executed') return synthetic.notExecuted;
  if (step.actionStatus === 'env_error') return synthetic.envError;
  return step.observation ?? '';
}

/** What history shows for one call of a step with several: as for a step's action. */
function callObservation(call: CallRecord, synthetic: SyntheticTexts): string {
  if (call.status === 'not_executed') return synthetic.notExecuted;
  if (call.status === 'env_error') return synthetic.envError;
  return call.observation;
}

/**
 * A step with several calls: the assistant turn, then each tool call answered, in order, by its own
 * call's observation; calls without a provider id (code actions) answer in one text, in call order.
 */
function callsHistory(
  calls: readonly CallRecord[],
  assistantContent: readonly ContentBlock[],
  template: string,
  synthetic: SyntheticTexts,
): Message[] {
  const answer = (c: CallRecord): string => wrapObservation(template, callObservation(c, synthetic));
  const byId = new Map<string, CallRecord>();
  for (const c of calls) if (c.toolCallId !== null) byId.set(c.toolCallId, c);
  const userContent: ContentBlock[] = [];
  for (const b of assistantContent) {
    if (b.type !== 'tool_call') continue;
    const call = byId.get(b.id);
    userContent.push({ type: 'tool_result', toolCallId: b.id, text: call ? answer(call) : synthetic.notExecuted });
  }
  const unmatched = calls.filter(
    (c) => c.toolCallId === null || !userContent.some((b) => b.type === 'tool_result' && b.toolCallId === c.toolCallId),
  );
  if (unmatched.length > 0) userContent.push({ type: 'text', text: unmatched.map(answer).join('\n\n') });
  return [
    { role: 'assistant', content: assistantContent },
    { role: 'user', content: userContent },
  ];
}

type ToolCallBlock = Extract<ContentBlock, { type: 'tool_call' }>;
const isToolCall = (b: ContentBlock): b is ToolCallBlock => b.type === 'tool_call';
const NO_CALLS: readonly ToolCallBlock[] = Object.freeze([]);

/**
 * The messages a completed step adds to history: the assistant turn, then the user turn with the
 * wrapped observation (action) or the explanation verbatim (invalid). Native tool calls in the
 * assistant turn are each answered, in order, by a `tool_result`. Steps that end a run
 * (final answer, model or interpreter error) add nothing: no model call ever follows them.
 */
export function stepHistory(step: StepRecord, template: string, synthetic: SyntheticTexts): Message[] {
  if (step.decision !== 'action' && step.decision !== 'invalid') return [];
  const assistantContent: readonly ContentBlock[] = step.historyContent ?? [
    { type: 'text', text: step.historyText ?? '' },
  ];
  if (step.calls !== undefined) return callsHistory(step.calls, assistantContent, template, synthetic);
  const answer =
    step.decision === 'action'
      ? wrapObservation(template, historyObservation(step, synthetic))
      : (step.explanation ?? '');
  // Most turns hold no native tool call: then no list of them is built.
  const calls = assistantContent.some(isToolCall) ? assistantContent.filter(isToolCall) : NO_CALLS;
  let userContent: ContentBlock[];
  if (calls.length === 0) {
    userContent = [{ type: 'text', text: answer }];
  } else if (step.decision === 'invalid') {
    userContent = calls.map((c) => ({ type: 'tool_result', toolCallId: c.id, text: answer }));
  } else {
    const ran = step.toolCallId ?? (calls.length === 1 ? calls[0]?.id : undefined);
    userContent = calls.map((c) => ({
      type: 'tool_result',
      toolCallId: c.id,
      text: c.id === ran ? answer : synthetic.notExecuted,
    }));
  }
  return [
    { role: 'assistant', content: assistantContent },
    { role: 'user', content: userContent },
  ];
}
