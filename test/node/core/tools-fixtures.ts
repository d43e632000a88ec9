/** Builders the tool tests share: a handler context, a tool call, a tool spec, the add tool's schema. */
import type { Action, JsonObject, ToolHandler, ToolSpec } from '../../../src/core/index.ts';

export const ctx = (signal: AbortSignal = new AbortController().signal) => ({
  runId: 'r',
  stepIndex: 0,
  resultId: 's0.action',
  signal,
});
export const call = (name: string, args: unknown): Action => ({
  kind: 'tool_call',
  name,
  arguments: args as JsonObject,
});

export const ADD_SCHEMA: JsonObject = {
  type: 'object',
  properties: { a: { type: 'integer' }, b: { type: 'integer' } },
  required: ['a', 'b'],
  additionalProperties: false,
};

export function spec(name: string, handler: ToolHandler, extra: Partial<ToolSpec> = {}): ToolSpec {
  return { name, description: `The ${name} tool.`, parameters: { type: 'object' }, handler, ...extra };
}
