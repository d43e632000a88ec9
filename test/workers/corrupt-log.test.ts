import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, readEvents, startRun, waitFor } from './http.ts';

const stubOf = (runId: string): DurableObjectStub => env.RUNS.get(env.RUNS.idFromName(runId));

type Row = { halted: string | null; alarm: number | null };
const rowOf = (runId: string): Promise<Row> =>
  runInDurableObject(stubOf(runId), async (_o, state) => ({
    halted: state.storage.sql.exec<{ halted: string | null }>('SELECT halted FROM polyloop_run').one().halted,
    alarm: await state.storage.getAlarm(),
  }));

/** Rewrite the stored text of the run's first `result` record (as a malformed model reply or a torn write would leave it); the new text. */
async function plant(runId: string, rewrite: (line: string) => string): Promise<string> {
  return runInDurableObject(stubOf(runId), (_o, state) => {
    const { sql } = state.storage;
    const seq = sql
      .exec<{ seq: number }>(
        `SELECT seq FROM polyloop_log WHERE run_id = ? AND body LIKE '{"kind":"result"%' ORDER BY seq LIMIT 1`,
        runId,
      )
      .one().seq;
    const line = sql
      .exec<{ body: string }>('SELECT body FROM polyloop_log WHERE run_id = ? AND seq = ? ORDER BY part', runId, seq)
      .toArray()
      .map((r) => r.body)
      .join('');
    const body = rewrite(line);
    sql.exec('DELETE FROM polyloop_log WHERE run_id = ? AND seq = ? AND part > 0', runId, seq);
    sql.exec('UPDATE polyloop_log SET body = ? WHERE run_id = ? AND seq = ?', body, runId, seq);
    return body;
  });
}

/** The reply's `text` made null: what a model returning the wrong shape used to leave in the log. */
const wrongShape = (line: string): string => {
  const rec = JSON.parse(line) as { reply: { text: unknown } };
  rec.reply.text = null;
  return JSON.stringify(rec);
};
const notJson = (line: string): string => line.slice(0, Math.floor(line.length / 2));
/** A record of a schema version this library cannot read (as a newer deploy rolled back would leave). */
const futureVersion = (line: string): string => JSON.stringify({ ...(JSON.parse(line) as object), v: '9.0' });

describe('a run whose log holds an unreadable record (workerd)', () => {
  for (const [what, rewrite, error] of [
    ['a record of the wrong shape', wrongShape, /^CorruptLogError: corrupt run log at .*:\d+: /],
    ['a record that is not JSON', notJson, /^CorruptLogError: corrupt run log at .*:\d+: not valid JSON/],
    [
      'a record of an unsupported schema version',
      futureVersion,
      /^SchemaVersionError: record schema version "9.0" is not supported/,
    ],
  ] as const) {
    it(`answers GET /runs/:id with status halted and the reason, not 500, and marks the run halted (${what})`, async () => {
      const runId = await startRun('one two');
      await waitFor(runId, (s) => s.status === 'ended');
      await plant(runId, rewrite);
      for (let i = 0; i < 2; i++) {
        const res = await call(`/runs/${runId}`);
        expect(res.status).toBe(200);
        const status = (await res.json()) as Record<string, unknown>;
        expect(status).toMatchObject({ runId, status: 'halted', stopReason: null, finalAnswer: null });
        expect(status['error']).toMatch(error);
      }
      const row = await rowOf(runId);
      expect(row.halted).toMatch(error);
      expect(row.alarm).toBeNull();
      expect(await runDurableObjectAlarm(stubOf(runId))).toBe(false);
    });

    it(`answers GET /runs/:id/trajectory with 500 unreadable_log naming the fault (${what})`, async () => {
      const runId = await startRun('one two');
      await waitFor(runId, (s) => s.status === 'ended');
      await plant(runId, rewrite);
      const res = await call(`/runs/${runId}/trajectory`);
      expect(res.status).toBe(500);
      const body = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(body.code).toBe('unreadable_log');
      expect(body.message).toMatch(/has an unreadable log, so it is halted: /);
      expect(body.message.slice(body.message.indexOf('halted: ') + 8)).toMatch(error);
      expect((await rowOf(runId)).halted).toMatch(error);
    });

    it(`answers GET /runs/:id/log with 500 unreadable_log naming the fault, as the trajectory does (${what})`, async () => {
      const runId = await startRun('one two');
      await waitFor(runId, (s) => s.status === 'ended');
      await plant(runId, rewrite);
      const res = await call(`/runs/${runId}/log`);
      expect(res.status).toBe(500);
      const body = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(body.code).toBe('unreadable_log');
      expect(body.message.slice(body.message.indexOf('halted: ') + 8)).toMatch(error);
      expect((await rowOf(runId)).halted).toMatch(error);
    });

    it(`streams every record of such a log over SSE, the unreadable one as it is stored (${what})`, async () => {
      const runId = await startRun('one two');
      await waitFor(runId, (s) => s.status === 'ended');
      const body = await plant(runId, rewrite);
      const res = await call(`/runs/${runId}/events`);
      expect(res.status).toBe(200);
      const events = await readEvents(res);
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i));
      expect(events.at(-1)?.event).toBe('run_ended');
      expect(events.some((e) => e.data === body)).toBe(true);
    });
  }

  it('reports a run the object halted for another reason as halted, with its reason', async () => {
    const runId = await startRun({ goal: 'one two three four five six', pauseMs: 150 });
    await waitFor(runId, (s) => s.steps >= 1);
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    // As if a deploy changed the agent the stored input builds (its tool now needs approval).
    const changed = JSON.stringify({ goal: 'one two three four five six', pauseMs: 150, approve: true });
    await runInDurableObject(
      stubOf(runId),
      (_o, state) => void state.storage.sql.exec(`UPDATE polyloop_run SET input = ?`, changed),
    );
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const halted = await waitFor(runId, (s) => s.status === 'halted');
    expect(halted.error).toMatch(/^RunIdentityMismatchError: /);
    expect(halted.steps).toBeGreaterThanOrEqual(1);
    expect(halted.stopReason).toBeNull();
  });
});
