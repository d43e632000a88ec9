/**
 * Human input over HTTP in workerd (docs/http.md#post-runsidinput): `GET /runs/:id` reports a waiting run with its
 * request, `POST /runs/:id/input` answers it (202 once durable; 409, 400, 404 otherwise, writing
 * nothing), cancel ends a waiting run, an awaiting run has no alarm, and the event stream shows
 * the input records.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { DurableObjectStore } from '../../src/platform-workers/index.ts';
import { call, readEvents, startRun, status, waitFor } from './http.ts';
import type { Status } from './http.ts';

const stubOf = (runId: string): DurableObjectStub => env.RUNS.get(env.RUNS.idFromName(runId));
const alarmOf = (runId: string): Promise<number | null> =>
  runInDurableObject(stubOf(runId), (_o, state) => state.storage.getAlarm());
const APPROVE = { goal: 'hello world', approve: true };

const reply = (runId: string, body: unknown, prefix = ''): Promise<Response> =>
  call(`${prefix}/runs/${runId}/input`, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function logKinds(runId: string): Promise<string[]> {
  const res = await call(`/runs/${runId}/log`);
  const text = await res.text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { kind: string }).kind);
}

const awaiting =
  (resultId: string) =>
  (s: Status): boolean =>
    s.status === 'awaiting_input' && s.pending?.resultId === resultId;

describe('POST /runs/:id/input (workerd)', () => {
  it('reports a run stopped at an approval as awaiting_input with its request, and finishes it after each approval with the answer of a run that needed none', async () => {
    const runId = await startRun(APPROVE);
    const first = await waitFor(runId, awaiting('s0.input'));
    expect(first).toMatchObject({
      status: 'awaiting_input',
      stopReason: null,
      finalAnswer: null,
      steps: 0,
      validActions: 0,
    });
    expect(first.pending).toMatchObject({
      resultId: 's0.input',
      stepIndex: 0,
      kind: 'approval',
      target: 'action',
      decision: { action: { kind: 'tool_call', name: 'reverse_word', arguments: { word: 'hello' } } },
    });
    const res = await reply(runId, { kind: 'approve', resultId: 's0.input' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ runId, resultId: 's0.input' });
    await waitFor(runId, awaiting('s1.input'));
    expect((await reply(runId, { kind: 'approve', resultId: 's1.input' })).status).toBe(202);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    const plain = await waitFor(await startRun('hello world'), (s) => s.status === 'ended');
    expect(done).toEqual({ ...plain, runId });
    expect(done).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'olleh dlrow', pending: null });
    expect(await logKinds(runId)).toEqual(expect.arrayContaining(['input_request', 'input']));
  });

  it('records a denial as a denied step with the reason as its observation, and the run goes on', async () => {
    const runId = await startRun({ goal: 'one', approve: true });
    await waitFor(runId, awaiting('s0.input'));
    expect((await reply(runId, { kind: 'deny', resultId: 's0.input', reason: 'Not today.' })).status).toBe(202);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    expect(done).toMatchObject({ stopReason: 'final_answer', steps: 2, validActions: 0, finalAnswer: 'Not today.' });
    const { steps } = (await (await call(`/runs/${runId}/trajectory`)).json()) as {
      steps: { actionStatus: string | null; observation: string | null }[];
    };
    expect(steps[0]).toMatchObject({ actionStatus: 'denied', observation: 'Not today.' });
  });

  it('refuses a reply that fits no open request — 409 not waiting or another resultId, 400 a kind not accepted or a malformed reply, 404 no such run — writing nothing', async () => {
    const runId = await startRun(APPROVE);
    await waitFor(runId, awaiting('s0.input'));
    const before = await logKinds(runId);
    const cases: [unknown, number, string, RegExp][] = [
      [{ kind: 'approve', resultId: 's1.input' }, 409, 'conflict', /awaits input for "s0.input", not "s1.input"/],
      [
        { kind: 'answer', resultId: 's0.input', text: 'yes' },
        400,
        'bad_request',
        /accepts approve, deny, cancel, not answer/,
      ],
      [{ kind: 'executed', resultId: 's0.input', observation: 'x' }, 400, 'bad_request', /not executed/],
      [{ kind: 'approve' }, 400, 'bad_request', /resultId must be a string/],
      [{ kind: 'maybe', resultId: 's0.input' }, 400, 'bad_request', /kind must be one of/],
      // Names every object inherits are no kinds either.
      [
        { kind: 'toString', resultId: 's0.input' },
        400,
        'bad_request',
        /kind must be one of approve, deny, answer, executed, retry, cancel, got "toString"/,
      ],
      [{ kind: '__proto__', resultId: 's0.input' }, 400, 'bad_request', /kind must be one of .*, got "__proto__"/],
      [
        { kind: 'constructor', resultId: 's0.input', 'function Object() { [native code] }': 'x' },
        400,
        'bad_request',
        /kind must be one of .*, got "constructor"/,
      ],
      [{ kind: 'deny', resultId: 's0.input' }, 400, 'bad_request', /reason must be a string/],
      [
        { kind: 'approve', resultId: 's0.input', note: 1 },
        400,
        'bad_request',
        /unknown field\(s\) for a approve reply: note/,
      ],
      ['{"kind":', 400, 'bad_request', /not valid JSON/],
    ];
    for (const [body, code, errorCode, message] of cases) {
      const res = await reply(runId, body);
      expect(res.status, JSON.stringify(body)).toBe(code);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code, JSON.stringify(body)).toBe(errorCode);
      expect(error.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await reply('no-such-run', { kind: 'approve', resultId: 's0.input' })).status).toBe(404);
    expect((await call(`/runs/${runId}/input`, { method: 'POST', body: '{}', token: 'wrong' })).status).toBe(401);
    expect(await logKinds(runId)).toEqual(before);
    expect(await status(runId)).toMatchObject({ status: 'awaiting_input', pending: { resultId: 's0.input' } });

    // A running run and an ended one await no input: 409.
    const busy = await startRun({ goal: 'a b c d e f', pauseMs: 100 });
    await waitFor(busy, (s) => s.steps >= 1);
    expect((await reply(busy, { kind: 'approve', resultId: 's1.input' })).status).toBe(409);
    await waitFor(busy, (s) => s.status === 'ended');
    const late = await reply(busy, { kind: 'approve', resultId: 's1.input' });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: { message: string } }).error.message).toMatch(/has ended \(final_answer\)/);
  });

  it('takes one of two replies sent at once (202) and refuses the other (409): the approved action runs once', async () => {
    const runId = await startRun({ goal: 'twice', approve: true });
    await waitFor(runId, awaiting('s0.input'));
    const [x, y] = await Promise.all([
      reply(runId, { kind: 'approve', resultId: 's0.input' }),
      reply(runId, { kind: 'deny', resultId: 's0.input', reason: 'no' }),
    ]);
    expect([x.status, y.status].sort()).toEqual([202, 409]);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    const kinds = await logKinds(runId);
    expect(kinds.filter((k) => k === 'input')).toHaveLength(1);
    // Whichever landed was carried out, and only it.
    expect(done).toMatchObject(
      x.status === 202 ? { finalAnswer: 'eciwt', validActions: 1 } : { finalAnswer: 'no', validActions: 0 },
    );
  });

  it('clears the alarm while a run waits (an awaiting run costs nothing) and re-arms it once a reply lands', async () => {
    const runId = await startRun({ goal: 'one two', approve: true, pauseMs: 200 });
    await waitFor(runId, awaiting('s0.input'));
    for (let i = 0; i < 100 && (await alarmOf(runId)) !== null; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await alarmOf(runId)).toBeNull();
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(false);
    expect((await reply(runId, { kind: 'approve', resultId: 's0.input' })).status).toBe(202);
    // The reply landed and the slow tool runs: the rest of the run is guarded by the alarm.
    expect(await alarmOf(runId)).toBeGreaterThan(Date.now());
    await waitFor(runId, awaiting('s1.input'));
    await waitFor(runId, (s) => s.status === 'awaiting_input');
    for (let i = 0; i < 100 && (await alarmOf(runId)) !== null; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await alarmOf(runId)).toBeNull();
  });

  it('carries out a reply that landed before the object lost its instance: the alarm resumes the run with the approved action', async () => {
    const runId = await startRun({ goal: 'lost', approve: true });
    await waitFor(runId, awaiting('s0.input'));
    // As if a drive wrote the reply and then the instance died: the input record and the alarm are all there is.
    await runInDurableObject(stubOf(runId), async (_o, state) => {
      await new DurableObjectStore(state.storage).input(runId, {
        kind: 'input',
        v: '1.1',
        stepIndex: 0,
        resultId: 's0.input',
        reply: { kind: 'approve', resultId: 's0.input' },
        receivedAt: new Date().toISOString(),
      });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    expect(await status(runId)).toMatchObject({ status: 'running', pending: null });
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    expect(done).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'tsol', steps: 2, validActions: 1 });
  });

  it('answers a run whose instance was reset while it waited', async () => {
    const runId = await startRun({ goal: 'again', approve: true });
    await waitFor(runId, awaiting('s0.input'));
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    expect(await status(runId)).toMatchObject({ status: 'awaiting_input', pending: { resultId: 's0.input' } });
    // An alarm left from before the pause fires: it neither drives the run nor arms itself again.
    const before = await logKinds(runId);
    await runInDurableObject(stubOf(runId), (_o, state) => state.storage.setAlarm(Date.now() + 60_000));
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    expect(await alarmOf(runId)).toBeNull();
    expect(await logKinds(runId)).toEqual(before);
    expect((await reply(runId, { kind: 'approve', resultId: 's0.input' })).status).toBe(202);
    expect(await waitFor(runId, (s) => s.status === 'ended')).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'niaga',
    });
  });

  it('answers 500 to a reply whose drive fails (the factory throws on resume), leaving the run waiting and no promise rejected unhandled', async () => {
    const unhandled: unknown[] = [];
    const listen = (e: PromiseRejectionEvent): void => {
      unhandled.push(e.reason);
      e.preventDefault();
    };
    addEventListener('unhandledrejection', listen);
    try {
      const runId = `throws-${crypto.randomUUID()}`;
      const started = await call('/probes/runs', {
        method: 'POST',
        body: JSON.stringify({ runId, input: { goal: 'a b', approve: true, fault: 'throws-on-resume' } }),
      });
      expect(started.status).toBe(201);
      await waitFor(runId, awaiting('s0.input'), 5_000, '/probes');
      const probe = env.PROBES.get(env.PROBES.idFromName(runId));
      await runInDurableObject(probe, (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
      const res = await reply(runId, { kind: 'approve', resultId: 's0.input' }, '/probes');
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('internal');
      expect(await status(runId, '/probes')).toMatchObject({
        status: 'awaiting_input',
        pending: { resultId: 's0.input' },
      });
      await new Promise((r) => setTimeout(r, 100));
      expect(unhandled.map(String)).toEqual([]);
    } finally {
      removeEventListener('unhandledrejection', listen);
    }
  });

  it('ends a waiting run on POST /runs/:id/cancel: a cancel reply and run_ended cancelled, no alarm left', async () => {
    const runId = await startRun(APPROVE);
    await waitFor(runId, awaiting('s0.input'));
    expect((await call(`/runs/${runId}/cancel`, { method: 'POST' })).status).toBe(202);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    expect(done).toMatchObject({ stopReason: 'cancelled', steps: 0, pending: null });
    // The driver that carries the cancel out marks where it took over, before the reply.
    expect((await logKinds(runId)).slice(-4)).toEqual(['input_request', 'resumed', 'input', 'run_ended']);
    const log = await (await call(`/runs/${runId}/log`)).text();
    expect(JSON.parse(log.trim().split('\n').at(-2) ?? '{}')).toMatchObject({
      kind: 'input',
      reply: { kind: 'cancel', resultId: 's0.input' },
    });
    expect(await alarmOf(runId)).toBeNull();
    expect((await reply(runId, { kind: 'approve', resultId: 's0.input' })).status).toBe(409);
  });

  it('carries out a cancel that arrives while the drive that paused the run is still telling the run index (202, then ended cancelled)', async () => {
    const runId = `slow-index-${crypto.randomUUID()}`;
    const started = await call('/probes/runs', {
      method: 'POST',
      body: JSON.stringify({ runId, input: { goal: 'a b', approve: true, fault: 'none', indexDelayMs: 400 } }),
    });
    expect(started.status).toBe(201);
    // The log says awaiting_input at once; the drive that wrote it spends 400 ms more reporting that to the index.
    await waitFor(runId, awaiting('s0.input'), 5_000, '/probes');
    expect((await call(`/probes/runs/${runId}/cancel`, { method: 'POST' })).status).toBe(202);
    // The reply lands first (the run reads `running` for a moment), then run_ended; a lost cancel
    // leaves it awaiting (or running) and this wait runs out.
    const done = await waitFor(runId, (s) => s.status === 'ended', 5_000, '/probes');
    expect(done).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
  });

  it('shows input_request and input records on the event stream like every other record', async () => {
    const runId = await startRun({ goal: 'sse', approve: true });
    await waitFor(runId, awaiting('s0.input'));
    const waiting = await readEvents(await call(`/runs/${runId}/events`), 4);
    expect(waiting.map((e) => e.event)).toEqual(['run_started', 'intent', 'result', 'input_request']);
    expect(JSON.parse(waiting[3]?.data ?? '{}')).toMatchObject({
      kind: 'input_request',
      resultId: 's0.input',
      request: { kind: 'approval' },
    });
    expect((await reply(runId, { kind: 'approve', resultId: 's0.input' })).status).toBe(202);
    await waitFor(runId, (s) => s.status === 'ended');
    const rest = await readEvents(await call(`/runs/${runId}/events`, { headers: { 'last-event-id': '3' } }));
    // The driver that carries the approval out marks where it took over, then the reply lands.
    expect(rest[0]).toMatchObject({ id: 4, event: 'resumed' });
    expect(rest[1]).toMatchObject({ id: 5, event: 'input' });
    expect(rest.map((e) => e.event)).toContain('step');
    expect(rest.at(-1)?.event).toBe('run_ended');
  });
});

describe('cancel of a run whose model never settles (workerd)', () => {
  it('ends it cancelled within the cancel grace although the model call ignores its abort signal', async () => {
    const runId = `probe-hang-${crypto.randomUUID()}`;
    const start = await call('/probes/runs', {
      method: 'POST',
      body: JSON.stringify({ runId, input: { goal: 'never answered', fault: 'hangs-model' } }),
    });
    expect(start.status).toBe(201);
    const kinds = async (): Promise<string[]> =>
      (await (await call(`/probes/runs/${runId}/log`)).text())
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { kind: string }).kind);
    for (let i = 0; i < 200 && !(await kinds()).includes('intent'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await status(runId, '/probes')).toMatchObject({ status: 'running', steps: 0 });
    expect((await call(`/probes/runs/${runId}/cancel`, { method: 'POST' })).status).toBe(202);
    // The demo's cancelGraceMs is 5 s: the status must be ended well before the model would ever answer (never).
    const done = await waitFor(runId, (s) => s.status === 'ended', 15_000, '/probes');
    expect(done).toMatchObject({ status: 'ended', stopReason: 'cancelled', steps: 0 });
  });
});
