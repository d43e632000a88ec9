/**
 * A driver process of the payment agent (test/postgres/payments.ts), for tests that stop, kill
 * or stall a real process: it reads one command per line on stdin (`{ runId, honours, waitMs }`),
 * runs that run on its PostgresStore, and once the run and its handler's attempts have all
 * settled writes one report per line on stdout: how `run` settled (its stop reason and stop
 * request, or the error's code) and how each attempt of the handler ended.
 *
 * Environment: DATABASE_URL, SCHEMA, PAY_URL, LEASE_MS, HEARTBEAT_MS.
 */
import { createInterface } from 'node:readline';
import pg from 'pg';
import { isPolyLoopError, run } from '../../src/core/index.ts';
import { PostgresStore } from '../../src/platform-postgres/index.ts';
import { paymentAgent } from './payments.ts';
import type { Honours } from './payments.ts';

/** What the driver writes for each run. */
export type DriverReport = {
  readonly runId: string;
  readonly settled: 'resolved' | 'rejected';
  readonly stopReason?: string;
  readonly stopRequest?: unknown;
  readonly code?: string;
  /** How each attempt of the handler in this process ended: `paid`, or what stopped it. */
  readonly handler: readonly string[];
};

const env = (name: string): string => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`payment-driver: ${name} is not set`);
  return v;
};

const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 4 });
pool.on('error', () => undefined);
const store = new PostgresStore({
  pool,
  schema: env('SCHEMA'),
  leaseMs: Number(env('LEASE_MS')),
  heartbeatMs: Number(env('HEARTBEAT_MS')),
  owner: `payment driver pid ${process.pid}`,
});

async function drive(cmd: { runId: string; honours: Honours; waitMs: number }): Promise<DriverReport> {
  let started = 0;
  const handler: string[] = [];
  const agent = paymentAgent(store, {
    url: env('PAY_URL'),
    honours: cmd.honours,
    waitMs: cmd.waitMs,
    onHandlerStart: () => void started++,
    onHandlerEnd: (outcome) => void handler.push(outcome),
  });
  const settled = await run(agent, { runId: cmd.runId, goal: 'Pay the invoice.' }).then(
    (r) => ({ settled: 'resolved' as const, stopReason: r.stopReason, stopRequest: r.stopRequest }),
    (e: unknown) => ({ settled: 'rejected' as const, code: isPolyLoopError(e) ? e.code : String(e) }),
  );
  // A handler that ignores its signal goes on after the run gave it up: report what it did too.
  while (handler.length < started) await new Promise((r) => setTimeout(r, 20));
  return { runId: cmd.runId, ...settled, handler };
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const report = await drive(JSON.parse(line) as { runId: string; honours: Honours; waitMs: number });
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
await pool.end();
