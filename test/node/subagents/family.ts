/** A parent agent whose `research` tool runs a child agent; the child's `note` tool needs approval and never replays. */
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import { agentTool, defineAgent, InMemoryStore, ToolRegistry } from '../../../src/core/index.ts';
import type { AgentDefinition, ModelReply, RunStore, ToolCallRequest, ToolSpec } from '../../../src/core/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import type { CollectingSink } from '../../../src/testing/index.ts';

export const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;

export type Family = {
  readonly parent: AgentDefinition;
  readonly child: AgentDefinition;
  readonly store: RunStore;
  /** Every `note` the child's tool wrote, in order (a side effect that must not repeat). */
  readonly notes: string[];
  /** The same notes as `<child run id>:<text>`. */
  readonly effects: string[];
  readonly parentSink: CollectingSink;
  readonly childSink: CollectingSink;
};

export type FamilyOptions = {
  readonly store?: RunStore;
  /** The child's script (by its callSeq); default: a note that needs approval, then a final answer. */
  readonly childScript?: readonly string[];
  /** The parent's script; default: research, then a final answer quoting the observation. */
  readonly parentScript?: readonly string[];
  readonly noteNeedsApproval?: boolean;
  /** The child's usage per model call. */
  readonly childUsage?: { readonly inputTokens: number; readonly outputTokens: number };
  /** Where the child's notes go (a restarted process shares its case's outside world); default a new array. */
  readonly notes?: string[];
  /** Where each note goes as `<child run id>:<text>`; default a new array. */
  readonly effects?: string[];
  /** A system prompt for the child (a new one is a new deploy of the child's code). */
  readonly childPrompt?: string;
  /** A parent that calls tools natively, several a step: its replies, and how many calls may run at once. */
  readonly native?: { readonly replies: readonly ModelReply[]; readonly parallelToolCalls: number };
};

/** A native reply calling `research` once per question, in order. */
export function researchCalls(...questions: string[]): ModelReply {
  const toolCalls: ToolCallRequest[] = questions.map((q, i) => ({
    id: `call-${i}`,
    name: 'research',
    arguments: { question: q },
  }));
  return { callId: null, text: '', reasoning: null, toolCalls };
}

export const CHILD_SCRIPT = ['{"tool":"note","args":{"text":"found it"}}', '{"final":"the answer is 42"}'];
export const PARENT_SCRIPT = ['{"tool":"research","args":{"question":"what is it?"}}', '{"final":"parent done"}'];

export function family(opts: FamilyOptions = {}): Family {
  const store = opts.store ?? new InMemoryStore();
  const notes: string[] = opts.notes ?? [];
  const effects: string[] = opts.effects ?? [];
  const note: ToolSpec = {
    name: 'note',
    description: 'Write a note (a side effect that must not repeat).',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    replayPolicy: 'never',
    needsApproval: opts.noteNeedsApproval ?? true,
    handler: async (args, ctx) => {
      notes.push(String(args['text']));
      effects.push(`${ctx.runId}:${String(args['text'])}`);
      return `noted ${String(args['text'])}`;
    },
  };
  const childScript = opts.childScript ?? CHILD_SCRIPT;
  const usage = opts.childUsage;
  const childModel = scriptedModel((call) => {
    const text = childScript[call.callSeq];
    if (text === undefined) throw new Error(`child script has no reply for call ${call.callSeq}`);
    return { callId: `child-${call.callSeq}`, text, reasoning: null, ...(usage ? { usage } : {}) };
  });
  const childTools = ToolRegistry.of([note]);
  const childSink = collectingSink();
  const child = defineAgent({
    model: childModel,
    interpreter: jsonActionInterpreter(),
    store,
    events: childSink,
    syntheticObservations: SYNTHETIC,
    defaults: {
      ...defaultsFor(childTools),
      ...(opts.childPrompt === undefined
        ? {}
        : {
            context: {
              run: [{ role: 'system' as const, content: [{ type: 'text' as const, text: opts.childPrompt }] }],
            },
          }),
    },
  });
  const research = researchTool(child);
  const parentTools = ToolRegistry.of([research]);
  const parentSink = collectingSink();
  const native = opts.native;
  const parent = defineAgent({
    model: scriptedModel(native ? native.replies : (opts.parentScript ?? PARENT_SCRIPT)),
    interpreter: native ? nativeToolInterpreter('test') : jsonActionInterpreter(),
    store,
    events: parentSink,
    syntheticObservations: SYNTHETIC,
    defaults: {
      ...defaultsFor(parentTools),
      ...(native ? { parallelToolCalls: native.parallelToolCalls } : {}),
    },
  });
  return { parent, child, store, notes, effects, parentSink, childSink };
}

/** The parent's `research` tool: runs `agent` as a child whose goal is the question asked. */
export function researchTool(agent: AgentDefinition): ToolSpec {
  return agentTool({
    name: 'research',
    description: 'Research a question with a sub-agent.',
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
    agent,
    request: (args) => ({ goal: String(args['question']) }),
  });
}

/** The request fields every agent of these tests shares, with `tools` and its executor; `extra` overrides. */
export function defaultsFor(tools: ToolRegistry, extra: Record<string, unknown> = {}) {
  return {
    tools,
    executor: tools.executor(),
    budget: { maxSteps: 10, maxValidActions: 20, maxContextChars: 100_000 },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe' as const,
    observationTemplate: '{observation}',
    toolRenderStyle: 'none' as const,
    cancelGraceMs: 2_000,
    ...extra,
  };
}
