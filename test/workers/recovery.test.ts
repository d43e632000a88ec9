import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, startRun, status, waitFor } from './http.ts';

const stubOf = (runId: string): DurableObjectStub => env.RUNS.get(env.RUNS.idFromName(runId));
const SLOW = { goal: 'one two three four five six', pauseMs: 150 };

/** Reset one object's instance as an eviction would: its in-memory driver is gone, its storage stays. */
async function evict(runId: string): Promise<void> {
  await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
}

describe('the run object when its instance is lost (workerd)', () => {
  it('arms an alarm before the run starts and clears it when the run ends', async () => {
    const runId = await startRun(SLOW);
    const alarmOf = (): Promise<number | null> =>
      runInDurableObject(stubOf(runId), (_o, state) => state.storage.getAlarm());
    expect(await alarmOf()).toBeGreaterThan(Date.now());
    await waitFor(runId, (s) => s.status === 'ended');
    // The status reads ended once run_ended lands; the alarm goes after the run index has been told.
    let alarm = await alarmOf();
    for (let i = 0; i < 100 && alarm !== null; i++) {
      await new Promise((r) => setTimeout(r, 20));
      alarm = await alarmOf();
    }
    expect(alarm).toBeNull();
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(false);
  });

  it('stays stopped after its instance is reset, until the alarm fires and resumes it to the same answer', async () => {
    const runId = await startRun(SLOW);
    await waitFor(runId, (s) => s.steps >= 1);
    await evict(runId);
    const stalled = await status(runId);
    await new Promise((r) => setTimeout(r, 600));
    expect((await status(runId)).steps).toBe(stalled.steps);
    expect(stalled.status).toBe('running');
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    expect(done).toMatchObject({
      stopReason: 'final_answer',
      steps: 7,
      validActions: 6,
      finalAnswer: 'eno owt eerht ruof evif xis',
    });
  });

  it('cancels a run whose instance was reset: a driver is started only to end it cancelled', async () => {
    const runId = await startRun(SLOW);
    await waitFor(runId, (s) => s.steps >= 1);
    await evict(runId);
    expect((await call(`/runs/${runId}/cancel`, { method: 'POST' })).status).toBe(202);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    expect(done.stopReason).toBe('cancelled');
    expect(done.steps).toBeLessThan(7);
  });

  it('resumes a run by its id: the request comes from its log, so a goal changed in the stored input does not change the run', async () => {
    const runId = await startRun(SLOW);
    await waitFor(runId, (s) => s.steps >= 1);
    await evict(runId);
    await runInDurableObject(
      stubOf(runId),
      (_o, state) => void state.storage.sql.exec(`UPDATE polyloop_run SET input = '"a different goal"'`),
    );
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const done = await waitFor(runId, (s) => s.status === 'ended' || s.status === 'halted');
    expect(done).toMatchObject({
      status: 'ended',
      stopReason: 'final_answer',
      finalAnswer: 'eno owt eerht ruof evif xis',
    });
  });

  it('halts a run whose resume is refused (identity changed), clears its alarm, does not retry, and reports it halted with how to upgrade it', async () => {
    const runId = await startRun(SLOW);
    await waitFor(runId, (s) => s.steps >= 1);
    await evict(runId);
    // As if a deploy changed the agent the stored input builds (its tool now needs approval): the identity no longer matches.
    await runInDurableObject(
      stubOf(runId),
      (_o, state) =>
        void state.storage.sql.exec(`UPDATE polyloop_run SET input = ?`, JSON.stringify({ ...SLOW, approve: true })),
    );
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const row = async (): Promise<{ halted: string | null; alarm: number | null }> =>
      runInDurableObject(stubOf(runId), async (_o, state) => ({
        halted: state.storage.sql.exec<{ halted: string | null }>('SELECT halted FROM polyloop_run').one().halted,
        alarm: await state.storage.getAlarm(),
      }));
    for (let i = 0; i < 100 && (await row()).halted === null; i++) await new Promise((r) => setTimeout(r, 20));
    const after = await row();
    expect(after.halted).toMatch(/^RunIdentityMismatchError: .*differing keys: tools.*POST \/runs\/.+\/upgrade/);
    expect(after.alarm).toBeNull();
    expect(await status(runId)).toMatchObject({ status: 'halted', stopReason: null, error: after.halted });
  });
});
