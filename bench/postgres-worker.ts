/**
 * One process of `npm run bench:pg`: for `--ms` milliseconds, either drive runs of `--steps`
 * steps on PostgresStore (a zero-latency model, a safe tool) and count steps and statements, or
 * (`--floor`) make bare single-row INSERTs of a record-sized text, one commit each. Prints JSON.
 */
import pg from 'pg';
import {
  defineAgent,
  jsonActionInterpreter,
  run,
  silentSink,
  STANDARD_SYNTHETIC_OBSERVATIONS,
  ToolRegistry,
} from '../src/core/index.ts';
import type { ModelCaller, RunRequest } from '../src/core/index.ts';
import { PostgresStore } from '../src/platform-postgres/index.ts';
import type { PgQuery } from '../src/platform-postgres/index.ts';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : (process.argv[i + 1] ?? fallback);
};
const url = arg('--url', '');
const ms = Number(arg('--ms', '3000'));
const steps = Number(arg('--steps', '20'));
const tag = arg('--tag', String(process.pid));
const pool = new pg.Pool({ connectionString: url, max: 2 });

if (process.argv.includes('--floor')) {
  const text = JSON.stringify({ kind: 'step', pad: 'x'.repeat(Number(arg('--bytes', '600'))) });
  let commits = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await pool.query('INSERT INTO bench_floor (run_id, seq, record) VALUES ($1, $2, $3)', [tag, commits, text]);
    commits++;
  }
  console.log(JSON.stringify({ commits, ms }));
} else {
  let statements = 0;
  let bytes = 0;
  const counted = {
    query: (q: PgQuery) => {
      // Lease renewals are not the steps' commits.
      if (!q.name?.startsWith('polyloop-renew')) statements++;
      if (q.name?.startsWith('polyloop-append'))
        bytes += ((q.values?.[4] as string[] | undefined) ?? []).reduce((a, t) => a + t.length, 0);
      return pool.query(q as never) as never;
    },
    connect: () => pool.connect() as never,
  };
  const store = new PostgresStore({ pool: counted, schema: arg('--schema', 'polyloop') });
  const tools = ToolRegistry.of([
    {
      name: 'noop',
      description: 'Does nothing.',
      replayPolicy: 'safe',
      parameters: { type: 'object', properties: { i: { type: 'integer' } } },
      handler: async ({ i }) => `ok ${String(i)}`,
    },
  ]);
  const model: ModelCaller = {
    params: { model: 'bench' },
    async call({ callSeq }) {
      return {
        callId: `c${callSeq}`,
        text: JSON.stringify(callSeq < steps - 1 ? { tool: 'noop', args: { i: callSeq } } : { final: 'done' }),
        reasoning: null,
      };
    },
  };
  const agent = defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store,
    events: silentSink(),
    syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
  });
  let done = 0;
  let runs = 0;
  const started = Date.now();
  while (Date.now() - started < ms) {
    const request: RunRequest = {
      runId: `${tag}-${runs++}`,
      tools,
      executor: tools.executor(),
      toolRenderStyle: 'none',
      cancelGraceMs: 1_000,
      budget: { maxSteps: steps + 1, maxValidActions: steps, maxContextChars: 1_000_000 },
      context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'bench' }] }] },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: 'safe',
      observationTemplate: '{observation}',
    };
    done += (await run(agent, request)).steps;
  }
  console.log(JSON.stringify({ steps: done, statements, bytes, ms: Date.now() - started }));
}
await pool.end();
