/**
 * The messages a run handed its model at one step, rebuilt from its log: the run context, the
 * tool section, the injections and the goal as the identity snapshot in force at that model call
 * keeps them, then the history of the steps before it (the last ones, under a history window), as
 * the loop assembles it (docs/design/conversation.md#assembly). What a viewer shows as "what the
 * model saw". Pure.
 * @module
 */
import { windowOf } from './history.ts';
import { renderInjections, renderToolSection, stepHistory } from './internal/assembly.ts';
import type { SyntheticTexts } from './internal/assembly.ts';
import { readRunLog } from './run-log.ts';
import { snapshotInForce } from './snapshot.ts';
import type {
  JsonObject,
  JsonValue,
  LogRecord,
  Message,
  ModelToolSchema,
  ParamSnapshot,
  RunLogView,
  SkillEntry,
  ToolRenderStyle,
  UpgradeRecord,
} from './types.ts';

/** Where a message of the assembled context comes from. */
export type MessagePart = 'context' | 'tools' | 'injection' | 'goal' | 'history';

/** One message handed to the model, with its part and, for history, the step that added it. */
export type AssembledMessage = {
  readonly part: MessagePart;
  /** The step whose turns these are (history only); null for the parts before history. */
  readonly step: number | null;
  readonly message: Message;
};

/** What a step's model call was handed, as far as the log can tell. */
export type StepMessages = {
  readonly stepIndex: number;
  /** The `messages` of the call, in order. */
  readonly messages: readonly AssembledMessage[];
  /** The `tools` of the call. */
  readonly tools: readonly ModelToolSchema[];
  /** The `binding` of the call (`modelBinding`). */
  readonly binding: Readonly<Record<string, string>>;
  /** What the log cannot give back about this call, in words for a person. */
  readonly limits: readonly string[];
};

const MODEL_CALLER =
  'These are the messages and tools the library handed the model caller; a model caller (an ' +
  "adapter) may turn them into its provider's format, add instructions of its own or leave out " +
  'what its provider does not take, and that is not in the log.';
const KEY_ORDER =
  "The tools' parameter schemas are shown with their keys in sorted order: the log keeps them as " +
  'canonical JSON, so the order each tool declared its keys in, which the model was handed, is lost.';
const NO_SYNTHETIC =
  'The log does not record the texts the library writes for actions that did not run: history ' + 'shows them empty.';

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The messages and tools step `stepIndex` handed its model, rebuilt from the run's `records`
 * (`view` is their reading, when the caller has it). Null for a step that made no model call in
 * this log: past its last step, the step after an ended run's last, or an empty log. Throws
 * `CorruptLogError` as `readRunLog` does.
 *
 * @example
 * const seen = stepMessages(await store.readLog('run-1'), 3);
 * for (const m of seen?.messages ?? []) console.log(m.part, m.message.role);
 */
export function stepMessages(
  records: readonly LogRecord[],
  stepIndex: number,
  view: RunLogView = readRunLog(records),
): StepMessages | null {
  if (!view.started || !Number.isSafeInteger(stepIndex) || stepIndex < 0) return null;
  const called = stepIndex < view.trajectory.length || view.inFlight?.stepIndex === stepIndex;
  if (!called) return null;
  const snapshot = snapshotInForce(view.started, upgradesBefore(records, stepIndex));
  const tools = toolsOf(snapshot['tools']);
  const style = renderStyleOf(snapshot['toolRenderStyle']);
  const messages: AssembledMessage[] = [];
  const add = (part: MessagePart, step: number | null, list: readonly Message[]): void => {
    for (const message of list) messages.push({ part, step, message });
  };
  const context = isObject(snapshot['context']) ? snapshot['context'] : {};
  add('context', null, messagesOf(context['run']));
  const section = renderToolSection(tools, style);
  if (section) add('tools', null, [section]);
  add('injection', null, renderInjections(injectionsOf(snapshot['injections'])));
  add('goal', null, messagesOf(context['goal']));
  const template = typeof snapshot['observationTemplate'] === 'string' ? snapshot['observationTemplate'] : '';
  const synthetic = syntheticOf(snapshot['syntheticObservations']);
  // Under a history window the call was handed the turns of the last steps only (decision 0084).
  const window = windowOf(snapshot);
  const from = window === null ? 0 : Math.max(0, stepIndex - window);
  for (const step of view.trajectory.slice(from, stepIndex))
    add('history', step.stepIndex, stepHistory(step, template, synthetic ?? { notExecuted: '', envError: '' }));
  const limits = [MODEL_CALLER];
  if (section !== null || tools.length > 0) limits.push(KEY_ORDER);
  if (snapshot['executor'] !== null && snapshot['executor'] !== undefined) limits.push(customExecutor(snapshot));
  if (synthetic === null) limits.push(NO_SYNTHETIC);
  const binding = stringsOf(snapshot['modelBinding']);
  // Copies: the records are the caller's store's, and whoever shows these may change them.
  return structuredClone({ stepIndex, messages, tools, binding, limits });
}

/**
 * The upgrades in force at step `stepIndex`'s model call: those written before the call's reply
 * (its `result`, or the step record of a failed call; the end of the log for a call in flight).
 * An upgrade names the step it was written in, which may be a step whose model was asked before
 * it (a step awaiting a person): the log's order, not the number, says which code asked.
 */
function upgradesBefore(records: readonly LogRecord[], stepIndex: number): UpgradeRecord[] {
  const upgrades: UpgradeRecord[] = [];
  for (const r of records) {
    if (r.kind === 'result' && r.stepIndex === stepIndex) break;
    if (r.kind === 'step' && r.step.stepIndex === stepIndex) break;
    if (r.kind === 'upgrade') upgrades.push(r);
  }
  return upgrades;
}

function customExecutor(snapshot: ParamSnapshot): string {
  return (
    `This run's actions went to a custom executor (${JSON.stringify(snapshot['executor'])}): the model ` +
    'was offered the tools shown and told what the context says; anything the executor lets it do ' +
    'beyond them, and how the model learned of it outside these messages, is not in the log.'
  );
}

/** The tools of a snapshot as the model is handed them: name, description and parameters, in order. */
function toolsOf(value: JsonValue | undefined): ModelToolSchema[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((t) => ({
    name: typeof t['name'] === 'string' ? t['name'] : '',
    description: typeof t['description'] === 'string' ? t['description'] : '',
    parameters: isObject(t['parameters']) ? t['parameters'] : {},
  }));
}

function renderStyleOf(value: JsonValue | undefined): ToolRenderStyle {
  return value === 'json' || value === 'markdown' ? value : 'none';
}

/** The messages of a recorded context list (a snapshot holds them as plain JSON). */
function messagesOf(value: JsonValue | undefined): Message[] {
  return Array.isArray(value) ? (value as unknown as Message[]) : [];
}

function injectionsOf(value: JsonValue | undefined): Record<string, readonly SkillEntry[]> {
  if (!isObject(value)) return {};
  const out: Record<string, readonly SkillEntry[]> = {};
  for (const [channel, entries] of Object.entries(value))
    if (Array.isArray(entries)) {
      // Defined, not assigned: a channel named `__proto__` in a log is data.
      Object.defineProperty(out, channel, { value: entries, enumerable: true, writable: true, configurable: true });
    }
  return out;
}

function syntheticOf(value: JsonValue | undefined): SyntheticTexts | null {
  if (!isObject(value)) return null;
  const { notExecuted, envError } = value;
  return typeof notExecuted === 'string' && typeof envError === 'string' ? { notExecuted, envError } : null;
}

function stringsOf(value: JsonValue | undefined): Record<string, string> {
  if (!isObject(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
