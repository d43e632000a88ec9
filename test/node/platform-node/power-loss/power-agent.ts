/**
 * The agent of the power-loss explorer, shared by the traced child (`power-child.ts`) and the
 * in-process resumes (`explore.ts`): the same definition and request on both sides, so a resume
 * passes the identity check. A pure scripted model; a `never`-replay tool (`record`) whose side
 * effect is a line appended to a "world" file outside the store; a `safe` tool (`add`).
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { defineAgent, ToolRegistry } from '../../../../src/core/index.ts';
import type { AgentDefinition, ModelCall, RunRequest, RunStore } from '../../../../src/core/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../../src/testing/index.ts';

/** The run id every explorer run uses. */
export const POWER_RUN_ID = 'power';

/** The run's `modelReplayPolicy`: with `never`, each model call is a world side effect too. */
export type PowerModelPolicy = 'safe' | 'never';

/** What the agent needs to know about one run. */
export type PowerAgentOptions = {
  readonly store: RunStore;
  /** The world file: `record` appends its line here (and, under policy `never`, each model call). */
  readonly world: string;
  /** Steps of the run, the last a final answer (at least 1). */
  readonly steps: number;
  readonly modelPolicy: PowerModelPolicy;
  /** Sees each model call's `callSeq` and the SHA-256 of its messages. */
  readonly onCall?: (callSeq: number, messagesHash: string) => void;
};

/**
 * The reply to call `k` of a run of `steps` steps: `record`, `add`, an invalid reply, in turn,
 * then a final answer. It reads the last observation, so history must be rebuilt exactly.
 */
function reply(call: ModelCall, steps: number): string {
  const k = call.callSeq;
  const last = call.messages.at(-1);
  const text = last?.content.map((b) => (b.type === 'text' ? b.text : '')).join('') ?? '';
  const n = Number(/(-?\d+)\s*$/.exec(text)?.[1] ?? '0');
  if (k >= steps - 1) return JSON.stringify({ final: `done after ${k} calls, last ${n}` });
  if (k % 3 === 0) return JSON.stringify({ tool: 'record', args: { line: `note ${k} saw ${n}` } });
  if (k % 3 === 1) return JSON.stringify({ tool: 'add', args: { a: k, b: n } });
  return `reply ${k} is not JSON`;
}

/** What `record` returns for `line` (a person settling it as `executed` gives the same). */
export function recordedObservation(line: string): string {
  return `recorded ${line.length}`;
}

function tools(world: string): ToolRegistry {
  return ToolRegistry.of([
    {
      name: 'add',
      description: 'Adds two integers.',
      parameters: {
        type: 'object',
        properties: { a: { type: 'integer' }, b: { type: 'integer' } },
        required: ['a', 'b'],
      },
      replayPolicy: 'safe',
      handler: async (args) => String(Number(args['a']) + Number(args['b'])),
    },
    {
      name: 'record',
      description: 'Appends a line to the world file. Not idempotent.',
      parameters: { type: 'object', properties: { line: { type: 'string' } }, required: ['line'] },
      replayPolicy: 'never',
      handler: async (args) => {
        // Synchronous, so the traced child shows the side effect at the moment it happened.
        appendFileSync(world, `tool ${String(args['line'])}\n`);
        return recordedObservation(String(args['line']));
      },
    },
  ]);
}

/** The agent definition and the run request of one explorer run. */
export function powerAgent(opts: PowerAgentOptions): { readonly agent: AgentDefinition; readonly request: RunRequest } {
  const model = scriptedModel(
    (call) => {
      opts.onCall?.(call.callSeq, createHash('sha256').update(JSON.stringify(call.messages)).digest('hex'));
      // Under `never` the model call is itself an effect the world saw; it must not happen twice.
      if (opts.modelPolicy === 'never') appendFileSync(opts.world, `call ${call.callSeq}\n`);
      return reply(call, opts.steps);
    },
    { model: 'power-agent' },
  );
  const agent = defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store: opts.store,
    events: { params: { sink: 'none' }, deliver: () => undefined },
    syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
  });
  const registry = tools(opts.world);
  const request: RunRequest = {
    runId: POWER_RUN_ID,
    budget: { maxSteps: opts.steps + 5, maxValidActions: opts.steps + 5, maxContextChars: 1_000_000 },
    executor: registry.executor(),
    tools: registry,
    context: {
      run: [
        { role: 'system', content: [{ type: 'text', text: 'You add numbers and record notes. Reply with JSON.' }] },
      ],
      goal: [{ role: 'user', content: [{ type: 'text', text: `Work for ${opts.steps} steps.` }] }],
    },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: opts.modelPolicy,
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'json',
    cancelGraceMs: 1000,
  };
  return { agent, request };
}
