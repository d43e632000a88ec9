/**
 * One worker process of `npm run bench:capacity-pg` (bench/capacity-pg.ts): for `--ms`
 * milliseconds it keeps `--concurrency` runs of the capacity workload (`--steps` steps, a model
 * answering after `--delay` ms) going on PostgresStore, and prints as JSON the steps it finished,
 * the statements (each its own commit) it sent by kind, and the CPU time it used.
 * @module
 */
import pg from 'pg';
import { run } from '../src/core/index.ts';
import { PostgresStore } from '../src/platform-postgres/index.ts';
import type { PgQuery } from '../src/platform-postgres/index.ts';
import { capacityAgent, capacityRequest } from './capacity-workload.ts';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : (process.argv[i + 1] ?? fallback);
};
const ms = Number(arg('--ms', '4000'));
const steps = Number(arg('--steps', '20'));
const delay = Number(arg('--delay', '0'));
const concurrency = Number(arg('--concurrency', '1'));
const tag = arg('--tag', String(process.pid));
const pool = new pg.Pool({ connectionString: arg('--url', ''), max: Math.max(2, concurrency + 1) });

const statements: Record<string, number> = {};
const counted = {
  query: (q: PgQuery) => {
    const kind = (q.name ?? 'unnamed').replace(/^polyloop-/, '').replace(/-.*$/, '');
    statements[kind] = (statements[kind] ?? 0) + 1;
    return pool.query(q as never) as never;
  },
  connect: () => pool.connect() as never,
};
const store = new PostgresStore({ pool: counted });
let done = 0;
let runs = 0;
const cpu0 = process.cpuUsage();
const started = Date.now();
const lane = async (): Promise<void> => {
  while (Date.now() - started < ms) {
    const r = await run(capacityAgent(store, steps, delay), capacityRequest(`${tag}-${runs++}`, steps));
    if (r.stopReason !== 'final_answer') throw new Error(`a run ended ${r.stopReason}`);
    done += r.steps;
  }
};
await Promise.all(Array.from({ length: concurrency }, lane));
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({ steps: done, statements, cpuMs: (cpu.user + cpu.system) / 1000, ms: Date.now() - started }),
);
await pool.end();
