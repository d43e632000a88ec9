/**
 * The workload every benchmark shares: an instant scripted model (a call to a trivial tool at
 * every step, a final answer at the last), the JSON action interpreter, one no-op tool, and a
 * sink that drops events. The same model and tool functions drive the floor loops.
 * @module
 */
import { defineAgent, ToolRegistry } from '../src/core/index.ts';
import type {
  AgentDefinition,
  EventSink,
  Message,
  ModelCall,
  ModelCaller,
  ModelReply,
  RunRequest,
  RunStore,
} from '../src/core/index.ts';
import { jsonActionInterpreter } from '../src/testing/index.ts';

/** The reply text of call `seq` in an `n`-step run: a tool call, or the final answer at the end. */
export function replyText(seq: number, n: number): string {
  return seq < n - 1 ? `{"tool":"noop","args":{"i":${seq}}}` : '{"final":"done"}';
}

/** The trivial tool both the kernel and the floors call. */
export function noopTool(args: { readonly i?: unknown }): Promise<string> {
  return Promise.resolve(`ok ${String(args.i)}`);
}

/** Called by the model at each call (before it replies); used to time resume and sample memory. */
export type CallHook = (call: ModelCall) => void;

/**
 * A model that replies at once, keeping nothing (unlike `scriptedModel`, which keeps every call
 * and so every assembled message array: O(N²) memory over a long run).
 */
export function instantModel(n: number, hook?: CallHook): ModelCaller {
  return {
    params: Object.freeze({ model: 'bench-instant' }),
    call(call: ModelCall): Promise<ModelReply> {
      if (hook) hook(call);
      return Promise.resolve({ callId: `c${call.callSeq}`, text: replyText(call.callSeq, n), reasoning: null });
    },
  };
}

/** An event sink that drops every event. */
export const nullSink: EventSink = { params: Object.freeze({ sink: 'null' }), deliver: () => undefined };

const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;

/** The agent definition of the benchmark workload. */
export function benchAgent(store: RunStore, n: number, hook?: CallHook, events: EventSink = nullSink): AgentDefinition {
  return defineAgent({
    model: instantModel(n, hook),
    interpreter: jsonActionInterpreter(),
    store,
    events,
    syntheticObservations: SYNTHETIC,
  });
}

const TOOLS = ToolRegistry.of([
  {
    name: 'noop',
    description: 'Does nothing and says ok.',
    parameters: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
    replayPolicy: 'safe',
    completesRun: false,
    handler: (args) => noopTool(args),
  },
]);
const EXECUTOR = TOOLS.executor();

/** The system and goal messages every run (kernel and floor) starts from. */
export const SYSTEM: Message = {
  role: 'system',
  content: [{ type: 'text', text: 'You call tools until you are done.' }],
};
export const GOAL: Message = { role: 'user', content: [{ type: 'text', text: 'Call noop until told to stop.' }] };
export const OBSERVATION_TEMPLATE = 'Observation:\n{observation}';

/** The request of an `n`-step run (budgets large enough never to stop it early). */
export function benchRequest(runId: string, n: number): RunRequest {
  return {
    runId,
    budget: { maxSteps: n + 1, maxValidActions: n + 1, maxContextChars: Number.MAX_SAFE_INTEGER },
    executor: EXECUTOR,
    tools: TOOLS,
    context: { run: [SYSTEM], goal: [GOAL] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: OBSERVATION_TEMPLATE,
    toolRenderStyle: 'json',
    cancelGraceMs: 1000,
  };
}
