/**
 * `requestStop` on Postgres from another worker: the run ends `cancelled` with the reason
 * (`run_ended.stopRequest`) whether it is inside a slow tool in another process (whose heartbeat
 * comes every 10 s: the stop reaches it through the store's check of the run's row), inside a
 * model call that ignores its signal, or waiting for approval; and a stop asked while no driver
 * runs (its process was killed inside a `never` action) is honoured at the next resume before
 * anything runs. Outcomes only: no test here measures how long anything took.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defineAgent,
  readRunLog,
  requestStop,
  resume,
  run,
  STANDARD_SYNTHETIC_OBSERVATIONS,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type { LogRecord, ModelCaller } from '../../../src/core/index.ts';
import { PostgresStore } from '../../../src/platform-postgres/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { startDriver } from '../../postgres/driver-process.ts';
import type { DriverProcess } from '../../postgres/driver-process.ts';
import { usePostgres } from '../../postgres/fixture.ts';
import { paymentAgent, startPaymentService } from '../../postgres/payments.ts';
import type { PaymentService } from '../../postgres/payments.ts';

const db = usePostgres();
let service: PaymentService;
const drivers: DriverProcess[] = [];

beforeAll(async () => {
  service = await startPaymentService();
});
afterAll(async () => {
  await Promise.all(drivers.map((d) => d.kill()));
  await service?.close();
});

/** A store as another worker has it: its own pool, its own lease. */
const worker = (schema: string, opts: { lease?: 'wait' } = {}): PostgresStore =>
  new PostgresStore({ pool: db.newPool(), schema, ...opts });

const ended = (log: readonly LogRecord[]) => log.find((r) => r.kind === 'run_ended');

/** Resolves when a handler of `runId` in process `pid` reaches `at`. */
function arrival(runId: string, pid: number, at: 'entered' | 'sleeping'): Promise<void> {
  return new Promise((resolve) => {
    service.hook = async (a) => {
      if (a.runId === runId && a.pid === pid && a.at === at) resolve();
    };
  });
}

describe('requestStop from another worker, PostgresStore', () => {
  it('ends a run inside a slow tool in another process (heartbeat every 10 s) cancelled with the reason; its handler sees StopRequestedError and pays nothing', async () => {
    const schema = await db.freshSchema();
    const driver = startDriver({
      databaseUrl: db.server().url,
      schema,
      payUrl: service.url,
      leaseMs: 30_000,
      heartbeatMs: 10_000,
    });
    drivers.push(driver);
    const inside = arrival('slow-tool', driver.pid, 'sleeping');
    driver.drive({ runId: 'slow-tool', honours: 'signal', waitMs: 600_000 });
    await inside;
    await requestStop(worker(schema), 'slow-tool', 'the invoice was withdrawn');
    const report = await driver.next();
    expect(report).toMatchObject({
      runId: 'slow-tool',
      settled: 'resolved',
      stopReason: 'cancelled',
      stopRequest: { reason: 'the invoice was withdrawn' },
      handler: ['stop_requested'],
    });
    expect(service.attempts('slow-tool')).toBe(0);
    const log = await worker(schema).readLog('slow-tool');
    expect(ended(log)).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'the invoice was withdrawn' } });
  }, 60_000);

  it('ends a run inside a model call that ignores its signal cancelled with the reason, recording no reply', async () => {
    const schema = await db.freshSchema();
    let called!: () => void;
    const calling = new Promise<void>((r) => (called = r));
    const model: ModelCaller = {
      params: { model: 'never-answers' },
      call: () => {
        called();
        return new Promise(() => undefined);
      },
    };
    const agent = { ...paymentAgent(worker(schema), { url: service.url, honours: 'signal', waitMs: 0 }), model };
    const running = run(agent, { runId: 'slow-model', goal: 'Pay the invoice.' });
    await calling;
    await requestStop(worker(schema), 'slow-model', 'too slow');
    const result = await running;
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'too slow' } });
    const log = await worker(schema).readLog('slow-model');
    expect(log.some((r) => r.kind === 'result')).toBe(false);
    expect(ended(log)).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'too slow' } });
  });

  it('honours a stop asked while the run waits for approval at the next resume: the approval given then is not carried out, the model not asked', async () => {
    const schema = await db.freshSchema();
    const calls: string[] = [];
    const tools = ToolRegistry.of([
      {
        name: 'pay',
        description: 'Pay the invoice (must not repeat).',
        replayPolicy: 'never',
        needsApproval: true,
        parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
        handler: async ({ amount }) => {
          calls.push(`pay ${String(amount)}`);
          return 'paid';
        },
      },
    ]);
    const model = scriptedModel(['{"tool":"pay","args":{"amount":5}}', '{"final":"paid"}']);
    const agent = defineAgent({
      model,
      interpreter: jsonActionInterpreter(),
      store: worker(schema),
      events: collectingSink(),
      syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
      defaults: {
        tools,
        executor: tools.executor(),
        toolRenderStyle: 'none',
        cancelGraceMs: 1_000,
        budget: { maxSteps: 5, maxValidActions: 5, maxContextChars: 10_000 },
        injections: {},
        modelBinding: {},
        modelReplayPolicy: 'safe',
        observationTemplate: '{observation}',
      },
    });
    const paused = await run(agent, { runId: 'approval', goal: 'Pay the invoice.' });
    expect(paused.stopReason).toBe('awaiting_input');
    await requestStop(worker(schema), 'approval', 'not needed any more');
    const asked = model.calls.length;
    const result = await resume(agent, 'approval', {
      input: { kind: 'approve', resultId: paused.pending!.resultId },
    });
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'not needed any more' } });
    expect(calls).toEqual([]);
    expect(model.calls.length).toBe(asked);
    const log = await worker(schema).readLog('approval');
    expect(log.some((r) => r.kind === 'input')).toBe(false);
    expect(readRunLog(log).state).toBe('ended');
  });

  it('honours a stop asked after the driver process was killed inside a never action at the next resume, before anything runs', async () => {
    const schema = await db.freshSchema();
    const driver = startDriver({
      databaseUrl: db.server().url,
      schema,
      payUrl: service.url,
      leaseMs: 1_000,
      heartbeatMs: 300,
    });
    drivers.push(driver);
    const inside = arrival('killed', driver.pid, 'sleeping');
    driver.drive({ runId: 'killed', honours: 'key', waitMs: 600_000 });
    await inside;
    await driver.kill();
    await requestStop(worker(schema), 'killed', 'the customer cancelled');
    const before = await worker(schema).readLog('killed');
    // The next worker waits out the dead driver's lease, then ends the run before anything else.
    const agent = paymentAgent(worker(schema, { lease: 'wait' }), { url: service.url, honours: 'key', waitMs: 0 });
    const result = await resume(agent, 'killed');
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'the customer cancelled' } });
    expect(service.arrivals.filter((a) => a.runId === 'killed' && a.pid === process.pid)).toEqual([]);
    expect(service.attempts('killed')).toBe(0);
    const after = await worker(schema).readLog('killed');
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((r) => r.kind)).toEqual(['run_ended']);
  }, 60_000);
});
