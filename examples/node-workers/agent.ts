/**
 * The agent every worker process runs, defined once per process the same way in each (so any
 * worker can resume any run): a stand-in model that looks up the weather of the city its goal
 * names, notifies a team once (a `never` tool: it must not repeat) and answers; the notification
 * goes to a table, the "outside world", which also answers the question a resumed run asks when a
 * notification was in flight at a crash.
 *
 * Everything a run needs besides its id and goal is in the agent's `defaults` (tools, executor,
 * budget, …): `run(agent, { runId, goal })` starts a run, and `resume(agent, runId)` goes on with
 * it from its log alone, so no worker keeps anything per run.
 */
import {
  defineAgent,
  jsonActionInterpreter,
  silentSink,
  STANDARD_SYNTHETIC_OBSERVATIONS,
  ToolRegistry,
} from '../../src/core/index.ts';
import type {
  AgentDefinition,
  InputReply,
  InputRequest,
  Message,
  ModelCaller,
  RunStore,
} from '../../src/core/index.ts';
import type { PgPoolLike } from '../../src/platform-postgres/index.ts';

/** The pg-boss queue runs are sent to. */
export const QUEUE = 'polyloop-runs';

/**
 * What a job carries: the run's id, and the goal it starts with. Only a run's first attempt reads
 * the goal; once the run has started, its log holds its request.
 */
export type RunJob = { readonly runId: string; readonly goal: string };

/** The goal the example's clients send: the stand-in model understands this one sentence. */
export const weatherGoal = (city: string): string => `What is the weather in ${city}? Tell ops.`;

const WEATHER: Record<string, string> = { Paris: 'sunny', Oslo: 'snowy', Lima: 'cloudy', Cairo: 'hot' };

/** The world's table: one row per notification really sent (never deduplicated: a repeat would show). */
export async function migrateWorld(pool: PgPoolLike): Promise<void> {
  await pool.query({
    text: 'CREATE TABLE IF NOT EXISTS notifications (id bigserial PRIMARY KEY, run_id text NOT NULL, text text NOT NULL, sent_at timestamptz NOT NULL DEFAULT now())',
  });
}

const textOf = (m: Message | undefined): string =>
  m?.content.map((b) => (b.type === 'text' ? b.text : '')).join('') ?? '';

/**
 * A stand-in model: lookup, notify, answer — slow enough (`delayMs`) that a kill can land mid-run.
 * The city comes from the run's goal (its first user message): one model serves every run.
 */
function model(delayMs: number): ModelCaller {
  return {
    params: { model: 'weather-policy' },
    async call({ callSeq, runId, messages, signal }) {
      await new Promise((r) => setTimeout(r, delayMs));
      signal.throwIfAborted();
      const goal = textOf(messages.find((m) => m.role === 'user'));
      const city = /weather in ([^?]+)\?/.exec(goal)?.[1] ?? 'nowhere';
      const weather = WEATHER[city] ?? 'unknown';
      const replies = [
        { tool: 'lookup', args: { city } },
        { tool: 'notify', args: { to: 'ops', text: `${runId}: ${city} is ${weather}` } },
        { final: `${city} is ${weather}; ops was told.` },
      ];
      const text = JSON.stringify(replies[Math.min(callSeq, replies.length - 1)]);
      return { callId: `policy-${callSeq}`, text, reasoning: null };
    },
  };
}

/** The tools: `lookup` (safe), `notify` (never) writing to the world's table. */
function tools(world: PgPoolLike, delayMs: number): ToolRegistry {
  return ToolRegistry.of([
    {
      name: 'lookup',
      description: 'Look up the weather of a city.',
      replayPolicy: 'safe',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      handler: async ({ city }) => WEATHER[String(city)] ?? 'unknown',
    },
    {
      name: 'notify',
      description: 'Tell a team something (must not repeat).',
      replayPolicy: 'never',
      parameters: {
        type: 'object',
        properties: { to: { type: 'string' }, text: { type: 'string' } },
        required: ['to', 'text'],
      },
      handler: async ({ text }, { runId }) => {
        const insert = 'INSERT INTO notifications (run_id, text) VALUES ($1, $2)';
        await world.query({ text: insert, values: [runId, String(text)] });
        // Time between the effect and the step record: a kill here leaves the notify in doubt.
        await new Promise((r) => setTimeout(r, delayMs));
        return 'sent';
      },
    },
  ]);
}

/** Options of {@link weatherAgent}: `delayMs`, the stand-in model's (and notify's) latency, default 20. */
export type WeatherAgentOptions = { readonly delayMs?: number };

/** The agent of every run on `store`; the same in every worker, whichever run it starts or resumes. */
export function weatherAgent(store: RunStore, world: PgPoolLike, opts: WeatherAgentOptions = {}): AgentDefinition {
  const delayMs = opts.delayMs ?? 20;
  const registry = tools(world, delayMs);
  return defineAgent({
    model: model(delayMs),
    interpreter: jsonActionInterpreter(),
    store,
    events: silentSink(),
    syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
    defaults: {
      tools: registry,
      executor: registry.executor(),
      toolRenderStyle: 'none',
      cancelGraceMs: 2_000,
      budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: 'safe',
      observationTemplate: '{observation}',
    },
  });
}

/**
 * The world's answer to a resumed run's question: a notification in flight at a crash is
 * `executed` when its row is in the table, `retry` when it is not (the crashed worker is gone,
 * and its lease with it, so nothing is still sending it).
 */
export async function settleFromWorld(world: PgPoolLike, runId: string, pending: InputRequest): Promise<InputReply> {
  if (pending.kind !== 'settle')
    throw new Error(`run ${runId} asks for ${pending.kind}; this agent never asks a person`);
  const sent = await world.query({ text: 'SELECT 1 FROM notifications WHERE run_id = $1', values: [runId] });
  return sent.rows.length > 0
    ? { kind: 'executed', resultId: pending.resultId, observation: 'sent' }
    : { kind: 'retry', resultId: pending.resultId };
}
