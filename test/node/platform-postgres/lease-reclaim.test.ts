/**
 * A lease whose release failed because the database was gone (restarted mid-write): the store
 * instance that took it may take the run again at once, with nobody else's help and without
 * waiting out `leaseMs`; every other instance is still refused until the lease expires, and once
 * another instance took the run over, the old instance's writes and acquires are refused.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, isPolyLoopError, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { RunRequest, RunStore } from '../../../src/core/index.ts';
import { PostgresStore } from '../../../src/platform-postgres/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { modelIntent, started } from '../../contract/run-store.contract.ts';
import { usePostgres } from '../../postgres/fixture.ts';

const db = usePostgres();
// Long enough that waiting it out would time the test out: every acquire below must be at once.
const LONG = { leaseMs: 120_000, heartbeatMs: 40_000 } as const;

const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

/** Take the lease, then lose the database: the next write fails, and so does the release. */
async function leaseLeftBehind(store: PostgresStore, runId: string): Promise<void> {
  const release = await store.acquire(runId, {});
  await store.runStarted(runId, started(runId));
  await db.server().halt('fast');
  try {
    expect(isPolyLoopError(await failure(store.intent(runId, modelIntent(0))), 'store_error')).toBe(true);
    expect(await failure(release())).not.toBeNull();
  } finally {
    await db.server().start();
  }
}

function setup(
  store: RunStore,
  onCall: () => Promise<void>,
): { agent: ReturnType<typeof defineAgent>; request: RunRequest } {
  const tools = ToolRegistry.of([
    {
      name: 'note',
      description: 'Write a note.',
      replayPolicy: 'safe',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      handler: async () => {
        await onCall();
        return 'noted';
      },
    },
  ]);
  const agent = defineAgent({
    model: scriptedModel(['{"tool":"note","args":{"text":"hi"}}', '{"final":"done"}']),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'Not executed.', envError: 'Env failed.' },
  });
  const request: RunRequest = {
    runId: 'restarted',
    tools,
    executor: tools.executor(),
    toolRenderStyle: 'none',
    cancelGraceMs: 1_000,
    budget: { maxSteps: 5, maxValidActions: 5, maxContextChars: 10_000 },
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Note it.' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
  };
  return { agent, request };
}

describe('PostgresStore: a lease left behind by a database restart', () => {
  it('lets the run that failed when the database went away mid-write be resumed at once through the same store, and finish', async () => {
    const store = new PostgresStore({ pool: db.pool(), schema: await db.freshSchema(), ...LONG });
    let calls = 0;
    const { agent, request } = setup(store, async () => {
      // The first execution: the database goes away before the step is written (and the lease released).
      if (++calls === 1) await db.server().halt('fast');
    });
    const error = await failure(run(agent, request));
    await db.server().start();
    expect(isPolyLoopError(error, 'store_error'), String(error)).toBe(true);
    const done = await resume(agent, request);
    expect(done.stopReason).toBe('final_answer');
    expect(done.finalAnswer).toBe('done');
    expect(calls).toBe(2);
  });

  it('gives the lease back to the store instance that held it, and to no other instance until it expires', async () => {
    const schema = await db.freshSchema();
    const holder = new PostgresStore({ pool: db.pool(), schema, ...LONG });
    await leaseLeftBehind(holder, 'r');
    const other = new PostgresStore({ pool: db.newPool(), schema, ...LONG });
    const refused = await failure(other.acquire('r', {}));
    expect(isPolyLoopError(refused, 'run_locked'), String(refused)).toBe(true);
    expect(isPolyLoopError(await failure(other.intent('r', modelIntent(0))), 'store_error')).toBe(true);
    const release = await holder.acquire('r', {});
    await holder.intent('r', modelIntent(0));
    expect((await holder.readLog('r')).map((r) => r.kind)).toEqual(['run_started', 'intent']);
    // One driver per run in the instance still holds: a second acquire is refused while this one drives.
    expect(isPolyLoopError(await failure(holder.acquire('r', {})), 'run_locked')).toBe(true);
    await release();
    // Released for good: anyone may take it now.
    await (await other.acquire('r', {}))();
  });

  it('keeps the old holder fenced once another instance took the run over after the left-behind lease expired', async () => {
    const schema = await db.freshSchema();
    const holder = new PostgresStore({ pool: db.pool(), schema, ...LONG });
    await leaseLeftBehind(holder, 'r');
    // leaseMs passes without a renewal.
    await db.pool().query(`UPDATE ${schema}.runs SET lease_expires_at = now() - interval '1 second'`);
    const other = new PostgresStore({ pool: db.newPool(), schema, ...LONG });
    const releaseOther = await other.acquire('r', {});
    const write = await failure(holder.intent('r', modelIntent(0)));
    expect(isPolyLoopError(write, 'store_error'), String(write)).toBe(true);
    expect(isPolyLoopError((write as Error & { cause?: unknown }).cause, 'run_locked')).toBe(true);
    const again = await failure(holder.acquire('r', {}));
    expect(isPolyLoopError(again, 'run_locked'), String(again)).toBe(true);
    await other.intent('r', modelIntent(0));
    expect((await other.readLog('r')).map((r) => r.kind)).toEqual(['run_started', 'intent']);
    await releaseOther();
  });
});
