import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { RunStatus } from '../../src/platform-workers/index.ts';
import type { CancelOutcome } from '../../src/platform-workers/run-input.ts';
import type { StartOutcome } from '../../src/platform-workers/run-setup.ts';
import type { ProbeInput } from './fixtures/probe-worker.ts';
import { releaseProbe } from './fixtures/probe-worker.ts';
import { call, waitFor } from './http.ts';

type Probe = {
  start(runId: string, input: unknown): Promise<StartOutcome>;
  status(): Promise<RunStatus | null>;
  cancel(): Promise<CancelOutcome>;
};
const probe = (runId: string): Probe => env.PROBES.get(env.PROBES.idFromName(runId)) as unknown as Probe;
const stubOf = (runId: string): DurableObjectStub => env.PROBES.get(env.PROBES.idFromName(runId));
const uid = (p: string): string => `${p}-${crypto.randomUUID()}`;
const alarmOf = (runId: string): Promise<number | null> =>
  runInDurableObject(stubOf(runId), (_o, state) => state.storage.getAlarm());

async function ended(runId: string): Promise<RunStatus | null> {
  let status: RunStatus | null = null;
  for (let i = 0; i < 300 && status?.status !== 'ended'; i++) {
    status = await probe(runId).status();
    if (status?.status !== 'ended') await new Promise((r) => setTimeout(r, 20));
  }
  return status;
}

describe('the run object with a misbehaving agent factory (workerd)', () => {
  it('rejects the input (bad_request) and stores nothing when the factory builds an invalid request or agent', async () => {
    for (const fault of ['bad-budget', 'bad-model'] as const) {
      const runId = uid(fault);
      const input: ProbeInput = { goal: 'a b', fault };
      const outcome = await probe(runId).start(runId, input);
      expect(outcome).toMatchObject({ ok: false, code: 'bad_request' });
      expect(await probe(runId).status()).toBeNull();
      expect(await alarmOf(runId)).toBeNull();
    }
  });
});

describe('the run object when every resume fails (workerd)', () => {
  it('gives up after maxFailedDrives alarms in a row fail without progress: halted (and reported so), alarm cleared, no more retries', async () => {
    const runId = uid('resume-fails');
    const input: ProbeInput = { goal: 'one two three four five', pauseMs: 100, fault: 'throws-on-resume' };
    expect(await probe(runId).start(runId, input)).toEqual({ ok: true });
    for (let i = 0; i < 200 && ((await probe(runId).status())?.steps ?? 0) < 1; i++)
      await new Promise((r) => setTimeout(r, 20));
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    const halted = (): Promise<string | null> =>
      runInDurableObject(
        stubOf(runId),
        (_o, state) =>
          state.storage.sql.exec<{ halted: string | null }>('SELECT halted FROM polyloop_run').one().halted,
      );
    let firings = 0;
    for (; firings < 10 && (await halted()) === null; firings++) {
      expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(firings).toBe(3);
    expect(await halted()).toMatch(/3 drives in a row failed.*the factory fails on every resume/);
    expect(await alarmOf(runId)).toBeNull();
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(false);
    expect(await probe(runId).status()).toMatchObject({ status: 'halted', error: await halted() });
  });
});

describe('a halted run (workerd)', () => {
  it('can still be cancelled once its fault has cleared: the cancel makes one more attempt, which ends it cancelled', async () => {
    const runId = uid('halted-cancel');
    expect(
      await probe(runId).start(runId, {
        goal: 'one two three four five',
        pauseMs: 100,
        fault: 'throws-on-3-resumes',
      } satisfies ProbeInput),
    ).toEqual({ ok: true });
    for (let i = 0; i < 200 && ((await probe(runId).status())?.steps ?? 0) < 1; i++)
      await new Promise((r) => setTimeout(r, 20));
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    for (let i = 0; i < 3; i++) {
      expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(await alarmOf(runId)).toBeNull();
    expect(await probe(runId).cancel()).toEqual({ ok: true });
    const done = await ended(runId);
    expect(done).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
  });
});

describe('the run object under racing requests (workerd)', () => {
  it('lets an alarm that fires while the run is being driven only re-arm itself: no second driver, the same trajectory', async () => {
    const runId = uid('alarm-while-driving');
    expect(await probe(runId).start(runId, { goal: 'one two three', fault: 'held' } satisfies ProbeInput)).toEqual({
      ok: true,
    });
    for (let i = 0; i < 3; i++) {
      expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
      expect(await alarmOf(runId)).toBeGreaterThan(Date.now());
      await new Promise((r) => setTimeout(r, 20));
    }
    await runInDurableObject(stubOf(runId), () => releaseProbe(runId));
    const done = await ended(runId);
    expect(done).toMatchObject({
      status: 'ended',
      stopReason: 'final_answer',
      steps: 4,
      validActions: 3,
      finalAnswer: 'eno owt eerht',
    });
    const stepRecords = await runInDurableObject(
      stubOf(runId),
      (_o, state) =>
        state.storage.sql
          .exec<{ body: string }>('SELECT body FROM polyloop_log WHERE body LIKE \'{"kind":"step"%\' ORDER BY seq')
          .toArray().length,
    );
    expect(stepRecords).toBe(4);
    expect(await alarmOf(runId)).toBeNull();
  });

  it('answers concurrent starts of one run id with exactly one 201 and 409 for the rest', async () => {
    const runId = uid('race');
    const posts = Array.from({ length: 6 }, (_, i) =>
      call('/runs', { method: 'POST', body: JSON.stringify({ runId, input: `word${i} other` }) }),
    );
    const codes = (await Promise.all(posts)).map((r) => r.status).sort();
    expect(codes).toEqual([201, 409, 409, 409, 409, 409]);
    await waitFor(runId, (s) => s.status === 'ended');
  });

  it('ends a run cancelled right after its start (before its first record) promptly, not at the next alarm', async () => {
    for (let i = 0; i < 3; i++) {
      const runId = uid('cancel-early');
      const [started, cancelled] = await Promise.all([
        call('/runs', { method: 'POST', body: JSON.stringify({ runId, input: { goal: 'a b c', pauseMs: 50 } }) }),
        new Promise((r) => setTimeout(r, i * 2)).then(() => call(`/runs/${runId}/cancel`, { method: 'POST' })),
      ]);
      expect(started.status).toBe(201);
      if (cancelled.status === 404) continue; // the cancel overtook the start: nothing to cancel yet
      expect(cancelled.status).toBe(202);
      const done = await waitFor(runId, (s) => s.status === 'ended', 5_000);
      expect(done).toMatchObject({ stopReason: 'cancelled', steps: 0, finalAnswer: null });
    }
  });
});

describe('the run object over an unreadable log (workerd)', () => {
  it('halts a run whose last record cannot be decoded, from the alarm, instead of throwing out of alarm()', async () => {
    const runId = uid('bad-tail');
    expect(
      await probe(runId).start(runId, {
        goal: 'one two three four five',
        pauseMs: 100,
        fault: 'none',
      } satisfies ProbeInput),
    ).toEqual({ ok: true });
    for (let i = 0; i < 200 && ((await probe(runId).status())?.steps ?? 0) < 1; i++)
      await new Promise((r) => setTimeout(r, 20));
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    // As if a later version had written a record this version cannot read.
    await runInDurableObject(stubOf(runId), (_o, state) => {
      const top = state.storage.sql.exec<{ m: number }>('SELECT MAX(seq) AS m FROM polyloop_log').one().m;
      state.storage.sql.exec(
        'INSERT INTO polyloop_log (run_id, seq, part, body) VALUES (?, ?, 0, ?)',
        runId,
        top + 1,
        '{"kind":"step","v":"9.0"}',
      );
    });
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const halted = (): Promise<string | null> =>
      runInDurableObject(
        stubOf(runId),
        (_o, state) =>
          state.storage.sql.exec<{ halted: string | null }>('SELECT halted FROM polyloop_run').one().halted,
      );
    for (let i = 0; i < 100 && (await halted()) === null; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await halted()).toMatch(/^SchemaVersionError: /);
    expect(await alarmOf(runId)).toBeNull();
  });
});

describe('reads of a run that does not exist (workerd)', () => {
  it('leave no storage behind: a 404 for an unknown run id writes no table into its object', async () => {
    const runId = uid('never-started');
    expect((await call(`/runs/${runId}`)).status).toBe(404);
    expect((await call(`/runs/${runId}/trajectory`)).status).toBe(404);
    expect((await call(`/runs/${runId}/events`)).status).toBe(404);
    expect((await call(`/runs/${runId}/cancel`, { method: 'POST' })).status).toBe(404);
    const stub = env.RUNS.get(env.RUNS.idFromName(runId));
    const tables = await runInDurableObject(stub, (_o, state) =>
      state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'polyloop%'")
        .toArray()
        .map((r) => r.name),
    );
    expect(tables).toEqual([]);
  });
});

describe('the event stream of a quiet run (workerd)', () => {
  it('sends keep-alive comments between records while the run is idle', async () => {
    const runId = uid('keep-alive');
    expect(
      await probe(runId).start(runId, { goal: 'one two', pauseMs: 400, fault: 'none' } satisfies ProbeInput),
    ).toEqual({ ok: true });
    const res = await stubOf(runId).fetch('https://run-object/events');
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes(': keep-alive\n\n')) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel();
    expect(text).toMatch(/^id: 0\nevent: run_started\n[\s\S]*: keep-alive\n\n$/);
  });
});

describe('createRunObject options', () => {
  it('refuses an alarm period, failure limit or keep-alive period that would spin or never fire', async () => {
    const { createRunObject } = await import('../../src/platform-workers/index.ts');
    const setup = (): never => {
      throw new Error('unused');
    };
    for (const bad of [
      { resumeAfterMs: 0 },
      { resumeAfterMs: -5 },
      { resumeAfterMs: Number.NaN },
      { resumeAfterMs: Infinity },
      { maxFailedDrives: 0 },
      { maxFailedDrives: 1.5 },
      { keepAliveMs: -1 },
      { keepAliveMs: Number.NaN },
    ]) {
      expect(() => createRunObject({ setup, ...bad }), JSON.stringify(bad)).toThrow(new RegExp(Object.keys(bad)[0]!));
    }
    expect(() => createRunObject({ setup, resumeAfterMs: 250, maxFailedDrives: 1, keepAliveMs: 0 })).not.toThrow();
  });
});

describe('the input a run is built from (workerd)', () => {
  it('is the same at start and at every resume, even for values JSON cannot hold', async () => {
    const runId = uid('input-roundtrip');
    const input = { goal: 'one two', pauseMs: 80, fault: 'none', suffix: Infinity } satisfies ProbeInput;
    expect(await probe(runId).start(runId, input)).toEqual({ ok: true });
    for (let i = 0; i < 200 && ((await probe(runId).status())?.steps ?? 0) < 1; i++)
      await new Promise((r) => setTimeout(r, 20));
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const done = await ended(runId);
    expect(done).toMatchObject({ status: 'ended', stopReason: 'final_answer', finalAnswer: 'eno owt llun' });
  });
});

describe('a run whose instance died before its first record (workerd)', () => {
  it('reports running with zero steps and null outcome, then its alarm starts it from the beginning', async () => {
    const runId = uid('no-record-yet');
    expect(
      await probe(runId).start(runId, { goal: 'one two', pauseMs: 100, fault: 'none' } satisfies ProbeInput),
    ).toEqual({ ok: true });
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    // As if the instance had died after storing the input and the alarm, before run_started.
    await runInDurableObject(stubOf(runId), (_o, state) => void state.storage.sql.exec('DELETE FROM polyloop_log'));
    expect(await probe(runId).status()).toEqual({
      runId,
      status: 'running',
      stopReason: null,
      finalAnswer: null,
      steps: 0,
      validActions: 0,
      pending: null,
      openRequests: [],
      children: [],
      error: null,
    });
    expect(await alarmOf(runId)).not.toBeNull();
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const done = await ended(runId);
    expect(done).toEqual({
      runId,
      status: 'ended',
      stopReason: 'final_answer',
      finalAnswer: 'eno owt',
      steps: 3,
      validActions: 2,
      pending: null,
      openRequests: [],
      children: [],
      error: null,
    });
  });

  it('is ended cancelled with zero steps by a cancel that arrives before any record, with no alarm left', async () => {
    const runId = uid('cancel-no-record');
    expect(
      await probe(runId).start(runId, { goal: 'one two', pauseMs: 100, fault: 'none' } satisfies ProbeInput),
    ).toEqual({ ok: true });
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    await runInDurableObject(stubOf(runId), (_o, state) => void state.storage.sql.exec('DELETE FROM polyloop_log'));
    expect(await probe(runId).cancel()).toEqual({ ok: true });
    const done = await ended(runId);
    expect(done).toEqual({
      runId,
      status: 'ended',
      stopReason: 'cancelled',
      finalAnswer: null,
      steps: 0,
      validActions: 0,
      pending: null,
      openRequests: [],
      children: [],
      error: null,
    });
    expect(await alarmOf(runId)).toBeNull();
  });
});
