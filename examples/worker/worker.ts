// A PolyLoop Worker to copy (see README.md): one Durable Object per run, an OpenAI model with one tool.
import { ToolRegistry } from 'polyloop';
import { openAIModel, openAIToolInterpreter } from 'polyloop/adapters/openai';
import { createApp, createRunObject, RunIndex } from 'polyloop/workers';
import type { RunIndexNamespace, RunObjectBase } from 'polyloop/workers';

type Env = {
  RUNS: DurableObjectNamespace<RunObjectBase<Env>>; // wrangler.toml: one object per run
  RUN_INDEX: RunIndexNamespace; // wrangler.toml: the list behind GET /runs
  POLYLOOP_TOKEN: string; // secret: every request needs `Authorization: Bearer <it>`
  OPENAI_API_KEY: string; // secret
  OPENAI_MODEL: string; // var
  OPENAI_BASE_URL?: string; // var: another OpenAI-compatible server (default: api.openai.com)
};

const add = { name: 'add', description: 'Add two numbers.', replayPolicy: 'safe' as const, parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } };
const tools = ToolRegistry.of([{ ...add, handler: async ({ a, b }) => String(Number(a) + Number(b)) }]);
const text = (role: 'system' | 'user', t: string) => ({ role, content: [{ type: 'text' as const, text: t }] });

export { RunIndex };
export class RunObject extends createRunObject<Env>({
  index: (env) => env.RUN_INDEX,
  // Called when a run starts (a throw is a 400) and again on every resume, with the same input.
  setup: ({ env, input }) => {
    const goal = (input as { goal?: unknown } | null)?.goal;
    if (typeof goal !== 'string' || goal.trim() === '') throw new Error('input must be { "goal": "<a task>" }');
    return {
      model: openAIModel({ model: env.OPENAI_MODEL, apiKey: env.OPENAI_API_KEY, ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}) }),
      interpreter: openAIToolInterpreter(),
      syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
      request: {
        budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 100_000 },
        tools,
        executor: tools.executor(),
        context: { run: [text('system', 'Use the add tool for arithmetic, then answer in one sentence.')], goal: [text('user', goal)] },
        injections: {},
        modelBinding: {},
        modelReplayPolicy: 'safe',
        observationTemplate: '{observation}',
        toolRenderStyle: 'none',
        cancelGraceMs: 5_000,
      },
    };
  },
}) {}

export default createApp<Env>({ runs: (env) => env.RUNS, index: (env) => env.RUN_INDEX });
