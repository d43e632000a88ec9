/**
 * The agent every worker process runs, built the same way in each (so any worker can resume any
 * run): a stand-in model that looks up a city's weather, notifies a team once (a `never` tool:
 * it must not repeat) and answers; the notification goes to a table, the "outside world", which
 * also answers the question a resumed run asks when a notification was in flight at a crash.
 */
import { defineAgent, jsonActionInterpreter, silentSink, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from '../../src/core/index.ts';
import type { AgentDefinition, InputReply, InputRequest, ModelCaller, RunRequest, RunStore } from '../../src/core/index.ts';
import type { PgPoolLike } from '../../src/platform-postgres/index.ts';

/** The pg-boss queue runs are sent to. */
export const QUEUE = 'polyloop-runs';

/** What a job carries: everything the request is built from, so a resume builds the same one. */
export type RunJob = { readonly runId: string; readonly city: string };

const WEATHER: Record<string, string> = { Paris: 'sunny', Oslo: 'snowy', Lima: 'cloudy', Cairo: 'hot' };

/** The world's table: one row per notification really sent (never deduplicated: a repeat would show). */
export async function migrateWorld(pool: PgPoolLike): Promise<void> {
  await pool.query({ text: 'CREATE TABLE IF NOT EXISTS notifications (id bigserial PRIMARY KEY, run_id text NOT NULL, text text NOT NULL, sent_at timestamptz NOT NULL DEFAULT now())' });
}

/** A stand-in model: lookup, notify, answer — slow enough (`delayMs`) that a kill can land mid-run. */
function model(job: RunJob, delayMs: number): ModelCaller {
  const replies = [
    { tool: 'lookup', args: { city: job.city } },
    { tool: 'notify', args: { to: 'ops', text: `${job.runId}: ${job.city} is ${WEATHER[job.city] ?? 'unknown'}` } },
    { final: `${job.city} is ${WEATHER[job.city] ?? 'unknown'}; ops was told.` },
  ];
  return {
    params: { model: 'weather-policy' },
    async call({ callSeq, signal }) {
      await new Promise((r) => setTimeout(r, delayMs));
      signal.throwIfAborted();
      return { callId: `policy-${callSeq}`, text: JSON.stringify(replies[Math.min(callSeq, replies.length - 1)]), reasoning: null };
    },
  };
}

/** The tools: `lookup` (safe), `notify` (never) writing to the world's table. */
function tools(world: PgPoolLike, job: RunJob, delayMs: number): ToolRegistry {
  return ToolRegistry.of([
    {
      name: 'lookup', description: 'Look up the weather of a city.', replayPolicy: 'safe',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      handler: async ({ city }) => WEATHER[String(city)] ?? 'unknown',
    },
    {
      name: 'notify', description: 'Tell a team something (must not repeat).', replayPolicy: 'never',
      parameters: { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string' } }, required: ['to', 'text'] },
      handler: async ({ text }) => {
        await world.query({ text: 'INSERT INTO notifications (run_id, text) VALUES ($1, $2)', values: [job.runId, String(text)] });
        // Time between the effect and the step record: a kill here leaves the notify in doubt.
        await new Promise((r) => setTimeout(r, delayMs));
        return 'sent';
      },
    },
  ]);
}

/** The agent and request of one job on `store`; the same for every worker and every attempt. */
export function agentFor(store: RunStore, world: PgPoolLike, job: RunJob, delayMs = 20): { agent: AgentDefinition; request: RunRequest } {
  const registry = tools(world, job, delayMs);
  const agent = defineAgent({ model: model(job, delayMs), interpreter: jsonActionInterpreter(), store, events: silentSink(), syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS });
  const request: RunRequest = {
    runId: job.runId, tools: registry, executor: registry.executor(), toolRenderStyle: 'none', cancelGraceMs: 2_000,
    budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: `What is the weather in ${job.city}? Tell ops.` }] }] },
    injections: {}, modelBinding: {}, modelReplayPolicy: 'safe', observationTemplate: '{observation}',
  };
  return { agent, request };
}

/**
 * The world's answer to a resumed run's question: a notification in flight at a crash is
 * `executed` when its row is in the table, `retry` when it is not (the crashed worker is gone,
 * and its lease with it, so nothing is still sending it).
 */
export async function settleFromWorld(world: PgPoolLike, runId: string, pending: InputRequest): Promise<InputReply> {
  if (pending.kind !== 'settle') throw new Error(`run ${runId} asks for ${pending.kind}; this agent never asks a person`);
  const sent = await world.query({ text: 'SELECT 1 FROM notifications WHERE run_id = $1', values: [runId] });
  return sent.rows.length > 0 ? { kind: 'executed', resultId: pending.resultId, observation: 'sent' } : { kind: 'retry', resultId: pending.resultId };
}
