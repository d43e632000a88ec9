/**
 * `POST /runs/:id/stop` in workerd (docs/http.md#post-runsidstop): a stop asked while the run is
 * inside a model call, inside a tool, or waiting for a person ends it `cancelled` with the reason
 * in `run_ended.stopRequest`; a stop kept while no instance drives the run (evicted) is honoured at
 * the next resume before any model call or action, and a reply given then is not carried out; an
 * ended run is left alone and the answer says so; a sub-agent's run points at its parent.
 * Probe agents: fixtures/probe-worker.ts (`waits-model`, `waits-tool`), fixtures/family-object.ts.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { childRunId } from '../../src/core/index.ts';
import { DurableObjectStore } from '../../src/platform-workers/durable-object-store.ts';
import { releaseFamily } from './fixtures/family-object.ts';
import { probeWaits } from './fixtures/probe-worker.ts';
import type { ProbeInput } from './fixtures/probe-worker.ts';
import { call, waitFor } from './http.ts';
import type { Status } from './http.ts';

const PROBES = '/probes';
const FAMILY = '/family';
const probeStub = (runId: string): DurableObjectStub => env.PROBES.get(env.PROBES.idFromName(runId));
let n = 0;
const uid = (name: string): string => `${name}-${Date.now()}-${n++}`;

async function startAt(prefix: string, name: string, input: unknown): Promise<string> {
  const runId = uid(name);
  const res = await call(`${prefix}/runs`, { method: 'POST', body: JSON.stringify({ runId, input }) });
  if (res.status !== 201) throw new Error(`start failed: ${res.status} ${await res.text()}`);
  return runId;
}

const startProbe = (name: string, input: ProbeInput): Promise<string> => startAt(PROBES, name, input);

const stop = (runId: string, body?: unknown, prefix = PROBES): Promise<Response> =>
  call(`${prefix}/runs/${runId}/stop`, {
    method: 'POST',
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });

const ended = (runId: string, prefix = PROBES): Promise<Status> =>
  waitFor(runId, (s) => s.status === 'ended' || s.status === 'halted', 15_000, prefix);

type Rec = { kind: string; stopReason?: string; stopRequest?: unknown };

/** The NDJSON log of a run (decoded from bytes: the body is not text/*). */
const logOf = async (runId: string, prefix = PROBES): Promise<string> =>
  new TextDecoder().decode(await (await call(`${prefix}/runs/${runId}/log`)).arrayBuffer());

async function recordsOf(runId: string, prefix = PROBES): Promise<Rec[]> {
  return (await logOf(runId, prefix))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);
}

const kindsOf = async (runId: string): Promise<string[]> => (await recordsOf(runId)).map((r) => r.kind);

/** What the probe's waiting model and tool calls of `runId` saw, read in the isolate that runs the objects. */
const waitsOf = (runId: string): Promise<string[]> =>
  runInDurableObject(probeStub(runId), () => [...probeWaits(runId)]);

async function untilWaiting(runId: string, what: 'model' | 'tool'): Promise<void> {
  for (let i = 0; i < 600 && !(await waitsOf(runId)).includes(what); i++) await new Promise((r) => setTimeout(r, 25));
  expect(await waitsOf(runId)).toEqual([what]);
}

/** Reset a probe object's instance as an eviction would: its in-memory drive is gone, its storage stays. */
async function evict(runId: string): Promise<void> {
  await runInDurableObject(probeStub(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
}

/** Keep a stop in the run's object as a store there would, without the object's own instance seeing it. */
const keepStopInStorage = (runId: string, reason: string): Promise<void> =>
  runInDurableObject(probeStub(runId), (_o, state) =>
    new DurableObjectStore(state.storage).requestStop(runId, { reason }),
  );

const messageOf = async (res: Response): Promise<string> =>
  ((await res.json()) as { error: { message: string } }).error.message;

describe('POST /runs/:id/stop (workerd)', () => {
  it('ends a run inside a model call cancelled with the reason; the call saw its signal abort with StopRequestedError', async () => {
    const runId = await startProbe('stop-model', { goal: 'hello', fault: 'waits-model' });
    await untilWaiting(runId, 'model');
    const res = await stop(runId, { reason: 'wrong goal' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ runId, requested: true, stopRequest: { reason: 'wrong goal' } });
    expect(await ended(runId)).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
    expect((await recordsOf(runId)).at(-1)).toMatchObject({
      kind: 'run_ended',
      stopReason: 'cancelled',
      stopRequest: { reason: 'wrong goal' },
    });
    expect(await waitsOf(runId)).toEqual(['model', 'model aborted: StopRequestedError']);
  });

  it('ends a run inside a tool call cancelled with the reason; the tool saw its signal abort with StopRequestedError', async () => {
    const runId = await startProbe('stop-tool', { goal: 'hello', fault: 'waits-tool' });
    await untilWaiting(runId, 'tool');
    expect((await stop(runId, { reason: 'taking too long' })).status).toBe(202);
    expect(await ended(runId)).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
    expect((await recordsOf(runId)).at(-1)).toMatchObject({
      kind: 'run_ended',
      stopReason: 'cancelled',
      stopRequest: { reason: 'taking too long' },
    });
    expect(await waitsOf(runId)).toEqual(['tool', 'tool aborted: StopRequestedError']);
  });

  it('ends a run waiting for approval cancelled with the reason, the action never run and no reply written', async () => {
    const runId = await startProbe('stop-approval', { goal: 'hello', fault: 'none', approve: true });
    await waitFor(runId, (s) => s.status === 'awaiting_input', 15_000, PROBES);
    expect((await stop(runId, { reason: 'not needed any more' })).status).toBe(202);
    expect(await ended(runId)).toMatchObject({ status: 'ended', stopReason: 'cancelled', steps: 0 });
    const records = await recordsOf(runId);
    expect(records.at(-1)).toMatchObject({ kind: 'run_ended', stopRequest: { reason: 'not needed any more' } });
    expect(records.map((r) => r.kind)).not.toContain('input');
    expect(records.map((r) => r.kind)).not.toContain('step');
  });

  it('honours a stop kept while the run was in a model call at the resume after an eviction, before any model call', async () => {
    const runId = await startProbe('stop-evicted', { goal: 'hello', fault: 'waits-model' });
    await untilWaiting(runId, 'model');
    await keepStopInStorage(runId, 'stopped while no one watched');
    await evict(runId);
    const before = await kindsOf(runId);
    expect(await runDurableObjectAlarm(probeStub(runId))).toBe(true);
    expect(await ended(runId)).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
    expect(await kindsOf(runId)).toEqual([...before, 'run_ended']);
    expect((await recordsOf(runId)).at(-1)).toMatchObject({ stopRequest: { reason: 'stopped while no one watched' } });
    // The first instance's call was never aborted (the instance is gone), and no model call was made again.
    expect(await waitsOf(runId)).toEqual(['model']);
  });

  it('drives a run no instance drives (evicted) at once when stopped over HTTP, ending it before any model call', async () => {
    const runId = await startProbe('stop-after-eviction', { goal: 'hello', fault: 'waits-model' });
    await untilWaiting(runId, 'model');
    await evict(runId);
    const before = await kindsOf(runId);
    expect((await stop(runId, { reason: 'r' })).status).toBe(202);
    expect(await ended(runId)).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
    expect(await kindsOf(runId)).toEqual([...before, 'run_ended']);
    expect(await waitsOf(runId)).toEqual(['model']);
  });

  it('does not carry out a reply given to a waiting run a stop was kept for: the run ends cancelled, the action not run', async () => {
    const runId = await startProbe('stop-then-reply', { goal: 'hello', fault: 'none', approve: true });
    await waitFor(runId, (s) => s.status === 'awaiting_input', 15_000, PROBES);
    await keepStopInStorage(runId, 'asked elsewhere');
    await evict(runId);
    const before = await kindsOf(runId);
    const reply = await call(`${PROBES}/runs/${runId}/input`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'approve', resultId: 's0.input' }),
    });
    expect(reply.status).toBe(409);
    expect(await messageOf(reply)).toBe('the run was stopped before the reply landed');
    expect(await ended(runId)).toMatchObject({ status: 'ended', stopReason: 'cancelled', steps: 0 });
    expect(await kindsOf(runId)).toEqual([...before, 'run_ended']);
    expect((await recordsOf(runId)).at(-1)).toMatchObject({ stopRequest: { reason: 'asked elsewhere' } });
  });

  it('lets the alarm drive a waiting run a stop was kept for (a stop cut short by an eviction), ending it cancelled', async () => {
    const runId = await startProbe('stop-alarm', { goal: 'hello', fault: 'none', approve: true });
    await waitFor(runId, (s) => s.status === 'awaiting_input', 15_000, PROBES);
    await keepStopInStorage(runId, 'cut short');
    // The alarm the stop arms before it drives the run, left behind by an instance evicted before it could.
    await runInDurableObject(probeStub(runId), (_o, state) => state.storage.setAlarm(Date.now() + 60_000));
    await evict(runId);
    expect(await runDurableObjectAlarm(probeStub(runId))).toBe(true);
    expect(await ended(runId)).toMatchObject({ status: 'ended', stopReason: 'cancelled', steps: 0 });
    expect((await recordsOf(runId)).at(-1)).toMatchObject({ stopRequest: { reason: 'cut short' } });
  });

  it('leaves an ended run alone and says so (200), writing nothing', async () => {
    const runId = await startProbe('stop-ended', { goal: 'hello', fault: 'none' });
    expect(await ended(runId)).toMatchObject({ stopReason: 'final_answer' });
    const before = await logOf(runId);
    const res = await stop(runId, { reason: 'too late' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      runId,
      requested: false,
      stopReason: 'final_answer',
      message: `run ${JSON.stringify(runId)} has ended (final_answer); nothing was done`,
    });
    expect(await logOf(runId)).toBe(before);
  });

  it('takes a stop without a body, or with an empty one, as a stop without a reason', async () => {
    for (const body of [undefined, '']) {
      const runId = await startProbe('stop-no-body', { goal: 'hello', fault: 'waits-model' });
      await untilWaiting(runId, 'model');
      const res = await stop(runId, body);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ runId, requested: true, stopRequest: {} });
      expect(await ended(runId)).toMatchObject({ stopReason: 'cancelled' });
      expect((await recordsOf(runId)).at(-1)).toMatchObject({ kind: 'run_ended', stopRequest: {} });
    }
  });

  it('refuses a body it does not understand (400, 413) and an unknown run (404), keeping nothing', async () => {
    const runId = await startProbe('stop-refusals', { goal: 'hello', fault: 'waits-model' });
    await untilWaiting(runId, 'model');
    const refusals: [unknown, number, string][] = [
      [{ reason: 'x', force: true }, 400, 'unknown field(s): force'],
      [{ reason: 42 }, 400, 'reason: must be a string when given'],
      [[], 400, 'body: expected { "reason"?: "…" }'],
      ['{"reason":', 400, 'request body is not valid JSON'],
      [{ reason: 'x'.repeat(2_001) }, 400, 'longer than 2000 characters'],
      [{ reason: 'x'.repeat(1024 * 1024) }, 413, 'request body exceeds 1048576 bytes'],
    ];
    for (const [body, code, message] of refusals) {
      const res = await stop(runId, body);
      expect(res.status).toBe(code);
      expect(await messageOf(res)).toContain(message);
    }
    expect((await stop(uid('no-such-run'), { reason: 'x' })).status).toBe(404);
    expect((await stop('bad%2Fid', {})).status).toBe(404);
    const kept = await runInDurableObject(probeStub(runId), (_o, state) =>
      new DurableObjectStore(state.storage).stopOf(runId),
    );
    expect(kept).toBeNull();
    expect(await waitsOf(runId)).toEqual(['model']);
    expect((await stop(runId, {})).status).toBe(202);
    await ended(runId);
  });

  it("refuses a stop of a sub-agent's run, naming its parent; a stop of the parent ends both cancelled", async () => {
    const parent = await startAt(FAMILY, 'family-stop', { question: 'what is it?', hold: true });
    const child = childRunId(parent, 's0.action');
    for (let i = 0; i < 600 && (await call(`${FAMILY}/runs/${child}`)).status === 404; i++)
      await new Promise((r) => setTimeout(r, 25));
    const refused = await stop(child, { reason: 'x' }, FAMILY);
    expect(refused.status).toBe(409);
    expect(await messageOf(refused)).toBe(
      `run ${JSON.stringify(child)} is a sub-agent of run ${JSON.stringify(parent)}: ` +
        `stop its parent (POST /runs/${parent}/stop), which stops it`,
    );
    expect((await stop(parent, { reason: 'enough' }, FAMILY)).status).toBe(202);
    expect(await ended(parent, FAMILY)).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
    expect((await recordsOf(parent, FAMILY)).at(-1)).toMatchObject({ stopRequest: { reason: 'enough' } });
    expect(await ended(child, FAMILY)).toMatchObject({ status: 'ended', stopReason: 'cancelled' });
    await runInDurableObject(env.FAMILY.get(env.FAMILY.idFromName(parent)), () => releaseFamily(child));
  });
});
