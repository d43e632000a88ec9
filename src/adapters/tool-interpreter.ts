/**
 * The native-tool-call interpreter both adapters ship
 * (docs/design/conversation.md#native-tool-calls). Provider differences end in the adapter: by the
 * time a reply gets here it is `text` + `toolCalls` + `content`, the same shape for every provider.
 * An adapter that could not parse a call's arguments as JSON passes the raw string on as
 * `arguments`, so the interpreter can say exactly what was wrong.
 * @module
 */
import type {
  Action,
  ContentBlock,
  Decision,
  DecisionInterpreter,
  JsonValue,
  ModelReply,
  ToolCallRequest,
  ToolCatalog,
} from '../core/index.ts';
import { jsonProblem, MAX_JSON_DEPTH } from '../core/internal-entry.ts';

const RAW_PREVIEW_CHARS = 200;

function tryParse(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/**
 * Valid JSON text may parse to what a run cannot store: a number past the double range is Infinity,
 * and arguments sit two levels down in a reply (`toolCalls[i].arguments`), which may nest at most
 * MAX_JSON_DEPTH. Core would refuse the whole reply; kept raw, the one call is refused, with a reason.
 */
function storable(v: JsonValue): boolean {
  return jsonProblem(v, '', MAX_JSON_DEPTH - 2) === null;
}

/**
 * Parse a call's JSON `arguments`. `''` means no arguments; an object encoded twice (a JSON string
 * holding JSON, which some models emit) is unwrapped; unparsable text, and text that parses to what
 * a run cannot store ({@link storable}), is kept raw, as a string, so the interpreter can quote it.
 */
export function parseArguments(raw: string): JsonValue {
  if (raw.trim() === '') return {};
  const parsed = tryParse(raw);
  if (parsed === undefined || !storable(parsed)) return raw;
  if (typeof parsed === 'string') {
    const inner = tryParse(parsed);
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner) && storable(inner)) return inner;
  }
  return parsed;
}

/**
 * Arguments that arrive parsed (Anthropic's `tool_use.input`, read with the whole body) and hold
 * what a run cannot store ({@link storable}): as text, as {@link parseArguments} keeps such raw text,
 * so the interpreter refuses the one call instead of core refusing the whole reply. A non-finite
 * number is shown by its name, since the text it was parsed from is gone.
 */
export function storableArguments(v: JsonValue): JsonValue {
  if (storable(v)) return v;
  const text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? `\0${x}` : x));
  return text.replace(/"\\u0000(-?Infinity|NaN)"/g, '$1');
}

/** A `tool_call` action's one-line trajectory form: `name({"a":1})`. */
export function toolCallRepr(call: ToolCallRequest): string {
  return `${call.name}(${typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)})`;
}

/**
 * The assistant turn as history blocks: the provider's own `content` when the adapter gave it,
 * otherwise rebuilt from `reasoning`, `text` and `toolCalls` (for replies from other callers).
 */
function assistantContent(reply: ModelReply): readonly ContentBlock[] {
  if (reply.content) return reply.content;
  const blocks: ContentBlock[] = [];
  if (reply.reasoning) blocks.push({ type: 'reasoning', text: reply.reasoning });
  if (reply.text !== '') blocks.push({ type: 'text', text: reply.text });
  for (const c of reply.toolCalls ?? [])
    blocks.push({ type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments });
  return blocks;
}

function isObject(v: JsonValue): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function preview(v: JsonValue): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > RAW_PREVIEW_CHARS ? `${s.slice(0, RAW_PREVIEW_CHARS)}…` : s;
}

function argumentsProblem(call: ToolCallRequest): string | null {
  if (isObject(call.arguments)) return null;
  const received = preview(call.arguments);
  const kind = Array.isArray(call.arguments) ? 'an array' : call.arguments === null ? 'null' : typeof call.arguments;
  const what =
    typeof call.arguments === 'string'
      ? `are not a valid JSON object (received: ${received}); ` +
        'if they look cut off, the reply hit the output token limit'
      : `must be a JSON object, not ${kind} (received: ${received})`;
  return (
    `The arguments of your call to tool "${call.name}" ${what}. The tool did not run. ` +
    'Call it again with a single JSON object that matches its parameters schema.'
  );
}

/**
 * An unknown tool or arguments that break its schema: caught here rather than by the executor, so
 * the model reads why (the executor's own sentence would be replaced by the synthetic text).
 */
function catalogProblem(tools: ToolCatalog, action: Extract<Action, { kind: 'tool_call' }>): string | null {
  const valid = tools.validate(action);
  if (valid.ok) return null;
  return (
    `Your call to tool "${action.name}" was not run: ${valid.message.replace(/\.+$/, '')}. ` +
    'Call a listed tool with arguments that match its parameters schema.'
  );
}

/**
 * A reply cut off at the output token limit: its text may end mid-sentence and its
 * last call's arguments mid-value, so neither an answer nor a call is taken from it.
 */
function truncationExplanation(calls: readonly ToolCallRequest[]): string {
  const what = calls.length > 0 ? 'No tool ran.' : 'It was not taken as your final answer.';
  return (
    `Your reply was cut off at the output token limit before it ended. ${what} ` +
    'Reply again, shorter: make one tool call with complete arguments, or give your final answer briefly.'
  );
}

function interpretReply(reply: ModelReply, tools: ToolCatalog, parallelToolCalls: number): Decision {
  const calls = reply.toolCalls ?? [];
  const historyContent = assistantContent(reply);
  const historyText = [reply.text, ...calls.map(toolCallRepr)].filter((s) => s !== '').join('\n');
  if (reply.finishReason === 'length')
    return { kind: 'invalid', explanation: truncationExplanation(calls), historyText, historyContent };
  // Several calls, and the run takes them: every call runs (one that breaks its schema is not_executed).
  if (calls.length > 1 && parallelToolCalls > 1) {
    const actions = calls.map((c) => ({
      action: { kind: 'tool_call', id: c.id, name: c.name, arguments: c.arguments } as const,
      trajectoryRepr: toolCallRepr(c),
    }));
    return { kind: 'actions', calls: actions, historyText, historyContent };
  }
  if (calls.length > 1) {
    const names = calls.map((c) => `"${c.name}"`).join(', ');
    const explanation =
      `You called ${calls.length} tools at once (${names}), but exactly one tool call per turn is allowed. ` +
      'None of them ran. Call the one you need first; you will see its result before your next call.';
    return { kind: 'invalid', explanation, historyText, historyContent };
  }
  const [call] = calls;
  if (call) {
    const action = { kind: 'tool_call', id: call.id, name: call.name, arguments: call.arguments } as const;
    const problem = argumentsProblem(call) ?? catalogProblem(tools, action);
    if (problem) return { kind: 'invalid', explanation: problem, historyText, historyContent };
    return { kind: 'action', action, trajectoryRepr: toolCallRepr(call), historyText, historyContent };
  }
  if (reply.text.trim() !== '') return { kind: 'final', answer: reply.text, historyText, historyContent };
  const available = tools.names();
  const hint = available.length > 0 ? `call one of the tools (${available.join(', ')})` : 'give your answer as text';
  const explanation =
    `Your reply was empty: it had no text and no tool call. Either ${hint}, ` +
    'or reply with your final answer as text.';
  return { kind: 'invalid', explanation, historyText, historyContent };
}

/**
 * The interpreter for native tool calls: one tool call → an `action` carrying the call's id;
 * several → one `actions` decision, the calls in the provider's order, when `ctx.parallelToolCalls`
 * is above 1 (otherwise `invalid`); text only → `final`; a reply cut off at the token limit
 * (`finishReason: 'length'`), arguments that are not a JSON object, an unknown tool, arguments that
 * break the tool's schema, or an empty reply → `invalid`, with an explanation that tells the model
 * what to do instead. Every
 * decision carries `historyContent` (the assistant turn as the provider returned it), so each tool
 * call in it is answered in the next user message.
 */
export function nativeToolInterpreter(name: string): DecisionInterpreter {
  return {
    params: Object.freeze({ interpreter: name, version: 1 }),
    interpret: (reply, ctx) => interpretReply(reply, ctx.tools, ctx.parallelToolCalls ?? 1),
  };
}
