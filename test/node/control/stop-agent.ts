/**
 * The agent of the end-to-end stop tests, on a FileStore under `<root>/runs`, for the driving
 * process and the test alike. Its outside world is files under `<root>`, so a test reads it across
 * processes: `model-calls.txt` (a line per model call), `tool-saw.txt` (what the slow tool's signal
 * aborted with), `paid.txt` (a line per payment actually made).
 *
 * Scenarios (the goal says which; the script follows it):
 * - `model`: the model call waits until its signal aborts (printing `MODEL WAITING`), then answers.
 * - `tool`: the `slow` tool waits until its signal aborts (printing `TOOL WAITING`).
 * - `approval`: `pay` needs a person's approval.
 */
import { appendFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { defineAgent, ToolRegistry } from '../../../src/core/index.ts';
import type { AgentDefinition, ModelCall, ToolSpec } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { defaultsFor, SYNTHETIC } from '../subagents/family.ts';

export const SCENARIOS = ['model', 'tool', 'approval'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** The runs' directory and the outside world's files under `root`. */
export const pathsOf = (root: string) => ({
  dir: join(root, 'runs'),
  modelCalls: join(root, 'model-calls.txt'),
  toolSaw: join(root, 'tool-saw.txt'),
  paid: join(root, 'paid.txt'),
});

const say = (line: string): void => void writeSync(1, `${line}\n`);

/**
 * Resolves with the signal's reason once it aborts (at once if it has). Meanwhile a timer keeps
 * the process alive, as a real call's socket would: the lease's own timer is unref'd.
 */
function aborted(signal: AbortSignal): Promise<unknown> {
  const busy = setInterval(() => undefined, 60_000);
  return new Promise<unknown>((done) => {
    if (signal.aborted) done(signal.reason);
    signal.addEventListener('abort', () => done(signal.reason), { once: true });
  }).finally(() => clearInterval(busy));
}

const SCRIPTS: Record<Scenario, readonly string[]> = {
  model: ['{"final":"answered"}'],
  tool: ['{"tool":"slow","args":{}}', '{"final":"done"}'],
  approval: ['{"tool":"pay","args":{"eur":40}}', '{"final":"paid"}'],
};

export function stopAgent(root: string): AgentDefinition {
  const paths = pathsOf(root);
  const slow: ToolSpec = {
    name: 'slow',
    description: 'Takes its time.',
    parameters: { type: 'object', properties: {} },
    replayPolicy: 'never',
    handler: async (_args, ctx) => {
      say('TOOL WAITING');
      const why = (await aborted(ctx.signal)) as { name?: string; code?: string; stop?: unknown };
      appendFileSync(paths.toolSaw, `${JSON.stringify({ name: why.name, code: why.code, stop: why.stop })}\n`);
      throw why;
    },
  };
  const pay: ToolSpec = {
    name: 'pay',
    description: 'Pay an amount (a person approves it first).',
    parameters: { type: 'object', properties: { eur: { type: 'number' } }, required: ['eur'] },
    replayPolicy: 'never',
    needsApproval: true,
    handler: (args) => {
      appendFileSync(paths.paid, `${String(args['eur'])}\n`);
      return Promise.resolve('paid');
    },
  };
  const tools = ToolRegistry.of([slow, pay]);
  const model = scriptedModel(async (call: ModelCall) => {
    appendFileSync(paths.modelCalls, `${call.callSeq}\n`);
    const scenario = scenarioOf(call);
    if (scenario === 'model' && call.callSeq === 0) {
      say('MODEL WAITING');
      throw await aborted(call.signal);
    }
    const text = SCRIPTS[scenario][call.callSeq];
    if (text === undefined) throw new Error(`no reply for call ${call.callSeq} of ${scenario}`);
    return text;
  });
  return defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store: new FileStore({ dir: paths.dir, onWarning: () => undefined }),
    events: { params: { sink: 'none' }, deliver: () => undefined },
    syntheticObservations: SYNTHETIC,
    defaults: defaultsFor(tools, { cancelGraceMs: 2_000 }),
  });
}

/** The scenario a run is in: its goal names it. */
function scenarioOf(call: ModelCall): Scenario {
  const text = call.messages.flatMap((m) => m.content.map((b) => (b.type === 'text' ? b.text : ''))).join('\n');
  const found = SCENARIOS.find((s) => text.includes(`scenario ${s}`));
  if (found === undefined) throw new Error('the goal names no scenario');
  return found;
}

/** The goal of a run in `scenario`. */
export const goalOf = (scenario: Scenario): string => `Play the stop test, scenario ${scenario}.`;
