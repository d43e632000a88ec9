/** Shared builders for core tests: a small multi-step agent on a scripted model. */
import { defineAgent, InMemoryStore, ToolRegistry } from '../../../src/core/index.ts';
import type { AgentDefinition, Message, RunRequest, RunStore, StepRecord, ToolSpec } from '../../../src/core/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import type { CollectingSink, Script, ScriptedModel } from '../../../src/testing/index.ts';

export const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;

export const text = (role: Message['role'], t: string): Message => ({ role, content: [{ type: 'text', text: t }] });

/** Tools: add (safe), note (never; side effects counted), submit (completesRun), broken (env error). */
export function makeTools(calls: string[] = []): ToolSpec[] {
  return [
    {
      name: 'add',
      description: 'Add two integers.',
      parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'], additionalProperties: false },
      replayPolicy: 'safe',
      handler: async (args) => {
        calls.push(`add:${JSON.stringify(args)}`);
        return String((args['a'] as number) + (args['b'] as number));
      },
    },
    {
      name: 'note',
      description: 'Write a note (a side effect that must not repeat).',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      replayPolicy: 'never',
      handler: async (args) => {
        calls.push(`note:${String(args['text'])}`);
        return `noted ${String(args['text'])}`;
      },
    },
    {
      name: 'submit',
      description: 'Submit the result and finish.',
      parameters: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
      replayPolicy: 'safe',
      completesRun: true,
      handler: async (args) => {
        calls.push(`submit:${String(args['value'])}`);
        if (args['value'] === 'bad') throw new RangeError('bad value');
        return 'submitted';
      },
    },
  ];
}

/** The standard script: tool calls, an invalid reply, an unknown tool, then a final answer. */
export const STANDARD_SCRIPT = [
  '{"tool":"add","args":{"a":1,"b":2}}',
  'this is not json',
  '{"tool":"note","args":{"text":"three"}}',
  '{"tool":"nope","args":{}}',
  '{"tool":"add","args":{"a":3,"b":4}}',
  '{"final":"7"}',
];

export type Harness = { agent: AgentDefinition; model: ScriptedModel; sink: CollectingSink; request: RunRequest; calls: string[]; store: RunStore };

export function harness(opts: { script?: Script; store?: RunStore; runId?: string; request?: Partial<RunRequest>; calls?: string[]; tools?: ToolSpec[] } = {}): Harness {
  const calls = opts.calls ?? [];
  const model = scriptedModel(opts.script ?? STANDARD_SCRIPT);
  const sink = collectingSink();
  const store = opts.store ?? new InMemoryStore();
  const agent = defineAgent({ model, interpreter: jsonActionInterpreter(), store, events: sink, syntheticObservations: SYNTHETIC });
  const tools = ToolRegistry.of(opts.tools ?? makeTools(calls));
  const request: RunRequest = {
    runId: opts.runId ?? 'run-1',
    budget: { maxSteps: 20, maxValidActions: 10, maxContextChars: 100_000 },
    executor: tools.executor(),
    tools,
    context: { run: [text('system', 'You are a careful calculator.')], goal: [text('user', 'Add 1 and 2, note it, then add 3 and 4.')] },
    injections: {},
    modelBinding: { user: 'tester' },
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'markdown',
    cancelGraceMs: 1000,
    ...opts.request,
  };
  return { agent, model, sink, request, calls, store };
}

/** A step record without its timestamps, for equality across runs. */
export function timeless(steps: readonly StepRecord[]): Omit<StepRecord, 'startedAt' | 'endedAt'>[] {
  return steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);
}
