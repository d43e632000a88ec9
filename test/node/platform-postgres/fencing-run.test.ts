/**
 * Fencing at the level of a run: a driver that stalls inside a `never` action past its lease,
 * while another process takes the run over, loses the lease (its run rejects with
 * `LeaseLostError`, nothing written); the new driver finds the action in doubt, settles it from
 * the world, and finishes — the action ran once.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, isPolyLoopError, readRunLog, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { RunRequest, RunStore } from '../../../src/core/index.ts';
import { PostgresStore } from '../../../src/platform-postgres/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { usePostgres } from '../../postgres/fixture.ts';

const db = usePostgres();

function setup(
  store: RunStore,
  world: string[],
  gate: Promise<void>,
): { agent: ReturnType<typeof defineAgent>; request: RunRequest } {
  const tools = ToolRegistry.of([
    {
      name: 'notify',
      description: 'Send once.',
      replayPolicy: 'never',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      handler: async ({ text }) => {
        world.push(String(text));
        await gate;
        return 'sent';
      },
    },
  ]);
  const agent = defineAgent({
    model: scriptedModel(['{"tool":"notify","args":{"text":"hello"}}', '{"final":"told"}']),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'Not executed.', envError: 'Env failed.' },
  });
  const request: RunRequest = {
    runId: 'fenced',
    tools,
    executor: tools.executor(),
    toolRenderStyle: 'none',
    cancelGraceMs: 1_000,
    budget: { maxSteps: 5, maxValidActions: 5, maxContextChars: 10_000 },
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Tell them.' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
  };
  return { agent, request };
}

describe('PostgresStore fencing of a stalled driver', () => {
  it('ends a driver whose lease was taken while it stalled in a never action with LeaseLostError, writing nothing; the new driver settles it and finishes, the action ran once', async () => {
    const schema = await db.freshSchema();
    const world: string[] = [];
    let unstall: () => void = () => undefined;
    const stalled = new Promise<void>((r) => (unstall = r));
    // Its heartbeat would not come before the takeover: the expiry below is what decides.
    const first = setup(
      new PostgresStore({ pool: db.pool(), schema, leaseMs: 10_000, heartbeatMs: 9_000 }),
      world,
      stalled,
    );
    const firstRun = run(first.agent, first.request).then(
      () => null,
      (e: unknown) => e,
    );
    while (world.length === 0) await new Promise((r) => setTimeout(r, 10));
    // The first driver is stuck in the action: its heartbeat cannot save it once the lease has expired and been taken.
    await db.pool().query(`UPDATE ${schema}.runs SET lease_expires_at = now() - interval '1 second'`);
    const second = setup(new PostgresStore({ pool: db.pool(), schema, leaseMs: 5_000 }), world, Promise.resolve());
    const asked = await resume(second.agent, second.request);
    expect(asked.pending?.kind).toBe('settle');
    // The stalled driver wakes up (its handler ignores its signal): it lost the lease, nothing of it lands.
    unstall();
    const error = await firstRun;
    expect(isPolyLoopError(error, 'lease_lost'), String(error)).toBe(true);
    const store = new PostgresStore({ pool: db.pool(), schema });
    expect(readRunLog(await store.readLog('fenced')).state).toBe('awaiting_input');
    const done = await resume(second.agent, second.request, {
      input: { kind: 'executed', resultId: asked.pending!.resultId, observation: 'sent' },
    });
    expect(done.stopReason).toBe('final_answer');
    expect(done.trajectory.map((s) => s.actionStatus)).toEqual(['executed', null]);
    expect(world).toEqual(['hello']);
  });
});
