/**
 * A tiny JSON text protocol interpreter, for models without native tool calls: local and
 * scripted models, tests, demos.
 * @module
 */
import { jsonProblem, MAX_JSON_DEPTH } from './internal/values.ts';
import type { DecisionInterpreter } from './ports.ts';
import type { Decision, JsonValue, ModelReply } from './types.ts';

/**
 * An interpreter for a tiny text protocol, for models without native tool calls (a local or
 * scripted model; tell the model the protocol in its system message): the reply text is JSON,
 * `{"tool": name, "args": {…}}` for an action or `{"final": "answer"}` for a final answer.
 * Anything else is `invalid`, with an explanation the model can act on; so is a reply that made
 * several native tool calls (one action per step), and one cut off at the token limit
 * (`finishReason: 'length'`). Its params are `{ interpreter: 'json-action', version: 1 }`.
 *
 * @example
 * const agent = defineAgent({ model, interpreter: jsonActionInterpreter(), store, events, syntheticObservations });
 */
export function jsonActionInterpreter(): DecisionInterpreter {
  return {
    params: Object.freeze({ interpreter: 'json-action', version: 1 }),
    interpret(reply: ModelReply): Decision {
      const historyText = reply.text;
      // One action per step: a reply that also made several native tool calls is not
      // read as one of them, nor as its text, but refused as a whole.
      // A reply cut off at the token limit is never read as an answer or an action: its text may end mid-sentence.
      if (reply.finishReason === 'length') {
        return {
          kind: 'invalid',
          explanation:
            'Your reply was cut off at the token limit before it ended. Reply again, shorter: one JSON object.',
          historyText,
        };
      }
      const calls = reply.toolCalls?.length ?? 0;
      if (calls > 1) {
        return {
          kind: 'invalid',
          explanation:
            `Your reply made ${calls} tool calls at once; ` +
            'reply with one JSON object, {"tool": name, "args": {...}} or {"final": "answer"}.',
          historyText,
        };
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(reply.text);
      } catch {
        return {
          kind: 'invalid',
          explanation:
            'Your reply was not valid JSON. Reply with {"tool": name, "args": {...}} or {"final": "answer"}.',
          historyText,
        };
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        return {
          kind: 'invalid',
          explanation: 'Your reply must be a JSON object with "tool" or "final".',
          historyText,
        };
      }
      const obj = parsed as Record<string, unknown>;
      if (typeof obj['final'] === 'string') return { kind: 'final', answer: obj['final'], historyText };
      if (typeof obj['tool'] === 'string') {
        const args = (obj['args'] ?? {}) as JsonValue;
        // Valid JSON text may still parse to what a run cannot store (1e400 is Infinity; nesting past
        // the limit, two levels of which the decision itself takes): the model can correct that.
        const problem = jsonProblem(args, 'args', MAX_JSON_DEPTH - 2);
        if (problem) return { kind: 'invalid', explanation: `Your reply's ${problem}.`, historyText };
        return {
          kind: 'action',
          action: { kind: 'tool_call', name: obj['tool'], arguments: args },
          trajectoryRepr: `${obj['tool']}(${JSON.stringify(args)})`,
          historyText,
        };
      }
      return {
        kind: 'invalid',
        explanation: 'Your reply had neither a "tool" string nor a "final" string.',
        historyText,
      };
    },
  };
}
