/**
 * The front door: accepts runs over HTTP and answers what became of them. It drives nothing —
 * starting a run sends a job (the run's id and goal); the workers do the rest, and keep nothing
 * per run: a run's request is in its log from its first record on.
 *
 *   DATABASE_URL=postgres://… PORT=8080 npx tsx examples/node-workers/server.ts
 *   curl -X POST localhost:8080/runs -d '{"runId":"r1","goal":"What is the weather in Paris? Tell ops."}'
 *     → 202 {"runId":"r1","job":"…"}
 *   curl localhost:8080/runs/r1                                           → {"state":"ended","steps":3,…}
 *
 * It creates the tables on start (migrate() of PolyLoop, the world's table, pg-boss's schema).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pg from 'pg';
import { readRunLog } from '../../src/core/index.ts';
import { migrate, PostgresStore } from '../../src/platform-postgres/index.ts';
import { migrateWorld } from './agent.ts';
import type { RunJob } from './agent.ts';
import { enqueueRun, startBoss } from './queue.ts';

const url = process.env['DATABASE_URL'];
if (!url) throw new Error('server: set DATABASE_URL');
const pool = new pg.Pool({ connectionString: url, max: 4 });
pool.on('error', (e) => console.error(`server: idle connection lost: ${e.message}`));
await migrate(pool);
await migrateWorld(pool);
const store = new PostgresStore({ pool });
const boss = await startBoss(url);

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function body(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 10_000) throw new Error('body over 10 kB');
  }
  return JSON.parse(text);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (req.method === 'POST' && path === '/runs') {
    const job = (await body(req).catch(() => null)) as Partial<RunJob> | null;
    if (typeof job?.runId !== 'string' || job.runId === '' || typeof job.goal !== 'string' || job.goal === '') {
      return send(res, 400, { error: 'send {"runId": string, "goal": string}' });
    }
    // Posting a run whose job is still waiting, retrying or running queues nothing (job: null).
    const id = await enqueueRun(boss, { runId: job.runId, goal: job.goal });
    return send(res, 202, { runId: job.runId, job: id });
  }
  const m = /^\/runs\/(.+)$/.exec(path);
  if (req.method === 'GET' && m) {
    const runId = decodeURIComponent(m[1] as string);
    const view = readRunLog(await store.readLog(runId));
    if (view.state === 'not_started') return send(res, 404, { runId, state: view.state });
    return send(res, 200, {
      runId,
      state: view.state,
      steps: view.steps,
      stopReason: view.ended?.stopReason ?? null,
      finalAnswer: view.ended?.finalAnswer ?? null,
    });
  }
  send(res, 404, { error: 'POST /runs or GET /runs/:id' });
}

const server = createServer((req, res) => {
  handle(req, res).catch((e: unknown) => send(res, 500, { error: e instanceof Error ? e.message : String(e) }));
});
server.listen(Number(process.env['PORT'] ?? 8080), '127.0.0.1', () => {
  const addr = server.address();
  console.log(`server: listening on ${typeof addr === 'object' && addr ? addr.port : '?'}`);
});
const stop = async (): Promise<void> => {
  server.close();
  await boss.stop({ graceful: false });
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
