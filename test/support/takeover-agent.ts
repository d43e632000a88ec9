/**
 * Child process of the driver takeover fixture (./takeovers.ts): a five-step run on a FileStore
 * that kills itself with a real SIGKILL where `TAKEOVER_KILL` says, so the next process that
 * resumes the run takes it over from its log.
 *
 *   node --import tsx takeover-agent.ts <dir> <runId>
 *
 * Steps: #0 `add`, #1 `work` (at 1), #2 `work` (at 2), #3 `add`, #4 the final answer. A process
 * starts the run when its log is empty and resumes it otherwise. `TAKEOVER_KILL`: `action:<n>` —
 * killed inside the `work` action at step n (in flight: the next driver replays it); `step:<n>` —
 * killed once step n's record landed (at a step boundary); unset — the run goes to its end, and the
 * process prints `RESULT <stopReason>`.
 */
import { writeSync } from 'node:fs';
import {
  defineAgent,
  resume,
  run,
  silentSink,
  STANDARD_SYNTHETIC_OBSERVATIONS,
  ToolRegistry,
} from '../../src/core/index.ts';
import type { ModelCall, RunRequest, StepWriteRecord } from '../../src/core/index.ts';
import { FileStore } from '../../src/platform-node/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../src/testing/index.ts';

const [dir, runId] = process.argv.slice(2);
if (!dir || !runId) throw new Error('usage: takeover-agent.ts <dir> <runId>');
const [killWhere, killAt] = (process.env['TAKEOVER_KILL'] ?? '').split(':');
const die = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

/** A FileStore whose process dies right after the chosen step's record landed. */
class KillingStore extends FileStore {
  override async step(id: string, rec: StepWriteRecord): Promise<void> {
    await super.step(id, rec);
    if (killWhere === 'step' && rec.step.stepIndex === Number(killAt)) die();
  }
}

const tools = ToolRegistry.of([
  {
    name: 'add',
    description: 'Adds two integers.',
    replayPolicy: 'safe',
    parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } },
    handler: async ({ a, b }) => String(Number(a) + Number(b)),
  },
  {
    name: 'work',
    description: 'Works on part n.',
    replayPolicy: 'safe',
    parameters: { type: 'object', properties: { at: { type: 'integer' } } },
    handler: async ({ at }) => (killWhere === 'action' && Number(at) === Number(killAt) ? die() : `part ${at} done`),
  },
]);

const SCRIPT: Record<number, unknown> = {
  0: { tool: 'add', args: { a: 2, b: 3 } },
  1: { tool: 'work', args: { at: 1 } },
  2: { tool: 'work', args: { at: 2 } },
  3: { tool: 'add', args: { a: 5, b: 8 } },
};
const reply = (call: ModelCall): string => JSON.stringify(SCRIPT[call.callSeq] ?? { final: 'all parts done' });

const store = new KillingStore({ dir });
const agent = defineAgent({
  model: scriptedModel(reply, { model: 'takeover-agent' }),
  interpreter: jsonActionInterpreter(),
  store,
  events: silentSink(),
  syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
});
const request: RunRequest = {
  runId,
  budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
  executor: tools.executor(),
  tools,
  context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Do every part.' }] }] },
  injections: {},
  modelBinding: {},
  modelReplayPolicy: 'safe',
  observationTemplate: 'Observation:\n{observation}',
  toolRenderStyle: 'json',
  cancelGraceMs: 1000,
};

const started = (await store.readLog(runId)).length > 0;
const result = started ? await resume(agent, request) : await run(agent, request);
writeSync(1, `RESULT ${result.stopReason}\n`);
