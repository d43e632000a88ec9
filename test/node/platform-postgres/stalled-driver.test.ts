/**
 * A stalled driver cannot double a `never` action whose handler honours its signal or keys its
 * effect on `ctx.resultId`. A real driver process (test/postgres/payment-driver.ts) is SIGSTOPped
 * inside its `pay` action — before its wait starts, or in the middle of it — and stays stopped
 * past its lease; this process takes the run over, a person settles the payment `retry`, and the
 * run finishes; then the stalled process is SIGCONTed.
 *
 * - Honouring the signal: the woken driver's lease is lost before its handler goes on (the check
 *   is a timer due at the lease's expiry), its signal aborts with `LeaseLostError`, nothing is paid.
 * - Keying the payment on `ctx.resultId`: the woken handler pays again and the payment API
 *   deduplicates it: two attempts, one payment.
 * - Honouring neither: the payment happens twice. The store cannot reach into a handler; this is
 *   the outcome the test shows, and what docs/postgres.md tells a handler to avoid.
 *
 * Either way the woken driver's run rejects with `LeaseLostError` and writes nothing. Each mode
 * runs PG_STALL_TRIALS trials (default 3; 20 for the figure in docs/postgres.md); honouring
 * neither, two (one per stop point).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLog, resume } from '../../../src/core/index.ts';
import { PostgresStore } from '../../../src/platform-postgres/index.ts';
import { sleep } from '../../../src/testing/scripted-model.ts';
import { startDriver } from '../../postgres/driver-process.ts';
import type { DriverProcess } from '../../postgres/driver-process.ts';
import { usePostgres } from '../../postgres/fixture.ts';
import { paymentAgent, startPaymentService } from '../../postgres/payments.ts';
import type { Checkpoint, Honours, PaymentService } from '../../postgres/payments.ts';

const db = usePostgres();
const TRIALS = Number(process.env['PG_STALL_TRIALS'] ?? 3);
const LEASE_MS = 1_000;
/** The handler's slow part: longer than the lease, so a stop in the middle of it stalls past the lease. */
const WAIT_MS = 3_000;

let service: PaymentService;
let driver: DriverProcess;
let schema: string;

beforeAll(async () => {
  service = await startPaymentService();
  schema = await db.freshSchema();
  driver = startDriver({
    databaseUrl: db.server().url,
    schema,
    payUrl: service.url,
    leaseMs: LEASE_MS,
    heartbeatMs: 300,
  });
}, 60_000);

afterAll(async () => {
  await driver?.kill();
  await service?.close();
});

let trials = 0;

/**
 * One trial: the driver process starts a run and is stopped at `stopAt` inside `pay`; this
 * process takes the run over, settles the payment `retry` and finishes the run; the driver wakes.
 */
async function stalledTrial(honours: Honours, stopAt: Checkpoint) {
  const runId = `${honours}-${stopAt}-${++trials}`;
  let stoppedAt = 0;
  const stopped = new Promise<void>((resolve) => {
    service.hook = async (arrival) => {
      if (arrival.runId !== runId || arrival.pid !== driver.pid || arrival.at !== stopAt || stoppedAt) return;
      // Stopped before the API answers: the driver cannot have gone further than this point.
      driver.signal('SIGSTOP');
      stoppedAt = performance.now();
      resolve();
    };
  });
  driver.drive({ runId, honours, waitMs: WAIT_MS });
  await stopped;
  // Another process: waits out the stalled driver's lease, finds the payment in doubt.
  const store = new PostgresStore({ pool: db.pool(), schema, lease: 'wait', leaseMs: 5_000 });
  const agent = paymentAgent(store, { url: service.url, honours, waitMs: 0 });
  const asked = await resume(agent, runId);
  expect(asked.stopReason).toBe('awaiting_input');
  expect(asked.pending?.kind).toBe('settle');
  const done = await resume(agent, runId, { input: { kind: 'retry', resultId: asked.pending!.resultId } });
  expect(done.stopReason).toBe('final_answer');
  const log = await store.readLog(runId);
  // Stopped in the middle of its wait: keep it stopped until that wait is overdue, so on waking
  // its handler's timer and its lease's expiry are both due at once.
  if (stopAt === 'sleeping') await sleep(Math.max(0, stoppedAt + WAIT_MS + 300 - performance.now()));
  driver.signal('SIGCONT');
  const woken = await driver.next();
  expect(woken.runId).toBe(runId);
  // The woken driver lost the run: its run rejects, and it wrote nothing.
  expect(woken.settled).toBe('rejected');
  expect(woken.code).toBe('lease_lost');
  expect(await store.readLog(runId)).toEqual(log);
  expect(readRunLog(log).trajectory.map((s) => s.actionStatus)).toEqual(['executed', null]);
  return { woken, effects: service.effects(runId), attempts: service.attempts(runId) };
}

const stopPoints = (n: number): Checkpoint[] =>
  Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 'entered' : 'sleeping'));

describe('a driver stalled past its lease inside a never action, taken over and settled retry, then woken', () => {
  it(
    `pays once when the handler honours its signal: the woken handler is aborted with LeaseLostError (${TRIALS} trials)`,
    async () => {
      const doubles: string[] = [];
      for (const stopAt of stopPoints(TRIALS)) {
        const { woken, effects, attempts } = await stalledTrial('signal', stopAt);
        expect(woken.handler).toEqual(['lease_lost']);
        expect(attempts).toBe(1);
        if (effects !== 1) doubles.push(`${stopAt}: ${effects} payments`);
      }
      expect(doubles).toEqual([]);
    },
    60_000 + TRIALS * 15_000,
  );

  it(
    `pays once when the handler keys the payment on ctx.resultId: the woken handler's payment is deduplicated (${TRIALS} trials)`,
    async () => {
      const doubles: string[] = [];
      for (const stopAt of stopPoints(TRIALS)) {
        const { woken, effects, attempts } = await stalledTrial('key', stopAt);
        expect(woken.handler).toEqual(['paid']);
        expect(attempts).toBe(2);
        if (effects !== 1) doubles.push(`${stopAt}: ${effects} payments`);
      }
      expect(doubles).toEqual([]);
    },
    60_000 + TRIALS * 15_000,
  );

  it('pays twice when the handler honours neither: the store cannot stop a handler that ignores its signal', async () => {
    for (const stopAt of stopPoints(2)) {
      const { woken, effects } = await stalledTrial('neither', stopAt);
      expect(woken.handler).toEqual(['paid']);
      expect(effects).toBe(2);
    }
  }, 90_000);
});
