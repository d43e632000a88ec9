/**
 * The workload of the capacity figures (docs/capacity.md): the bench workload (bench/fixtures.ts:
 * an instant model calling a safe `noop` tool at every step, a final answer at the last), with
 * the tool's observation padded to `obsChars` characters, so the bytes a step stores can be split
 * into what the protocol adds and what grows with the observation.
 * @module
 */
import { defineAgent, ToolRegistry } from '../src/core/index.ts';
import type { AgentDefinition, ModelCaller, RunRequest, RunStore } from '../src/core/index.ts';
import { jsonActionInterpreter } from '../src/testing/index.ts';
import { benchAgent, benchRequest, instantModel, nullSink } from './fixtures.ts';

/** The tool of an `obsChars` workload: `ok <i>` padded with `x` to `obsChars` characters (none at 0). */
function paddedTools(obsChars: number): ToolRegistry {
  return ToolRegistry.of([
    {
      name: 'noop',
      description: 'Does nothing and says ok.',
      parameters: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
      replayPolicy: 'safe',
      completesRun: false,
      handler: (args) => {
        const ok = `ok ${String(args['i'])}`;
        return Promise.resolve(ok.length >= obsChars ? ok : ok + 'x'.repeat(obsChars - ok.length));
      },
    },
  ]);
}

/**
 * The agent of the capacity workload: the bench agent, or with `modelDelayMs` its model answering
 * after that long — a store that holds writes back for a while (IndexedDB) writes differently then.
 */
export function capacityAgent(store: RunStore, n: number, modelDelayMs = 0): AgentDefinition {
  if (modelDelayMs === 0) return benchAgent(store, n);
  const instant = instantModel(n);
  const model: ModelCaller = {
    params: instant.params,
    call: (call) => new Promise((done) => setTimeout(() => done(instant.call(call)), modelDelayMs)),
  };
  return defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store,
    events: nullSink,
    syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
  });
}

/** The request of an `n`-step run whose every observation is `obsChars` long (0: the bench's `ok <i>`). */
export function capacityRequest(runId: string, n: number, obsChars = 0): RunRequest {
  if (obsChars === 0) return benchRequest(runId, n);
  const tools = paddedTools(obsChars);
  return { ...benchRequest(runId, n), tools, executor: tools.executor() };
}
