/**
 * The runs of the section `control` (bench/control.ts): tools that keep a run busy until it is
 * stopped (one honouring its signal, one deaf to it), a tool a person approves, a model that calls
 * one of them once, and an InMemoryStore whose lease carries no `lost` signal (a floor).
 * @module
 */
import { nativeToolInterpreter } from '../src/adapters/tool-interpreter.ts';
import { defineAgent, InMemoryStore, ToolRegistry } from '../src/core/index.ts';
import type {
  AgentDefinition,
  ModelCall,
  ModelCaller,
  ModelReply,
  ReleaseLease,
  RunStore,
  ToolSpec,
} from '../src/core/index.ts';
import { nullSink } from './fixtures.ts';

const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;
/** The runs' `cancelGraceMs`. */
export const GRACE_MS = 1000;

/** Called by the slow tools once a run is inside them; the handlers that ignore their signal, parked. */
let onEnter: (() => void) | null = null;
const parked: (() => void)[] = [];

/** Resolves once the next run to call a slow tool is inside it. */
export function nextEntry(): Promise<void> {
  return new Promise<void>((entered) => {
    onEnter = () => {
      onEnter = null;
      entered();
    };
  });
}

/** Let every parked handler of the tool that ignores its signal answer (late: its run has settled). */
export function releaseParked(): void {
  for (const go of parked.splice(0)) go();
}

/** How long the slow tools would take if nothing ended them: their timer keeps the process alive, as real I/O would. */
const SLOW_MS = 60_000;

/** A tool that waits until its signal aborts, then rejects with the reason (it honours its signal). */
const WAIT: ToolSpec = {
  name: 'wait',
  description: 'Waits until told to stop.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  replayPolicy: 'safe',
  handler: (_args, ctx) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => resolve('waited'), SLOW_MS);
      ctx.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(ctx.signal.reason);
        },
        { once: true },
      );
      onEnter?.();
    }),
};
/** A tool that never looks at its signal: it answers only when the bench lets it go, after the sample. */
const STALL: ToolSpec = {
  ...WAIT,
  name: 'stall',
  description: 'Waits, deaf to any stop.',
  handler: () =>
    new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('late'), SLOW_MS);
      parked.push(() => {
        clearTimeout(timer);
        resolve('late');
      });
      onEnter?.();
    }),
};
/** A tool a person approves first, perhaps with other arguments. */
const NOTE: ToolSpec = {
  ...WAIT,
  name: 'note',
  description: 'Writes a note, once a person approves it.',
  replayPolicy: 'never',
  needsApproval: true,
  handler: (args) => Promise.resolve(`noted ${String(args['q'])}`),
};
const TOOLS = ToolRegistry.of([WAIT, STALL, NOTE]);

/** A stateless model: call 0 calls `tool` with `{ q: 'proposed' }`, every later call answers. */
function model(tool: string): ModelCaller {
  return {
    params: Object.freeze({ model: `bench-control-${tool}` }),
    call(call: ModelCall): Promise<ModelReply> {
      const seq = call.callSeq;
      const base = { callId: `m${seq}`, reasoning: null };
      if (seq > 0) return Promise.resolve({ ...base, text: 'done' });
      return Promise.resolve({
        ...base,
        text: '',
        toolCalls: [{ id: 'c0', name: tool, arguments: { q: 'proposed' } }],
      });
    },
  };
}

/** An agent whose model calls `tool` once, then answers; every tool on the bench's instant model. */
export function toolAgent(store: RunStore, tool: string): AgentDefinition {
  return defineAgent({
    model: model(tool),
    interpreter: nativeToolInterpreter('bench'),
    store,
    events: nullSink,
    syntheticObservations: SYNTHETIC,
    defaults: {
      tools: TOOLS,
      executor: TOOLS.executor(),
      budget: { maxSteps: 3, maxValidActions: 3, maxContextChars: Number.MAX_SAFE_INTEGER },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: 'safe',
      observationTemplate: '{observation}',
      toolRenderStyle: 'none',
      cancelGraceMs: GRACE_MS,
    },
  });
}

/** InMemoryStore whose lease carries no `lost` signal: nothing but the caller can abort a run (the floor). */
export class NoLostStore extends InMemoryStore {
  override async acquire(runId: string, opts?: { readonly signal?: AbortSignal }): Promise<ReleaseLease> {
    const release = await super.acquire(runId, opts);
    return () => release();
  }
}
