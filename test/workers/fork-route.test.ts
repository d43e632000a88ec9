/**
 * `POST /runs/:id/fork` in workerd (docs/http.md#post-runsidfork): the fork is read from the
 * source's object and imported into the new run's object, which drives it on. At every step of a
 * finished run the fork holds the steps before it as the source wrote them (nothing before the
 * fork point runs again) and reaches the same answer; at a pending approval the fork awaits the
 * same request, approved in one and denied in the other. The source's log is unchanged byte for
 * byte. Refusals write nothing in either object.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { childRunId } from '../../src/core/index.ts';
import { probeWaits } from './fixtures/probe-worker.ts';
import type { ProbeInput } from './fixtures/probe-worker.ts';
import { call, startRun, waitFor } from './http.ts';

let n = 0;
const uid = (name: string): string => `${name}-${Date.now()}-${n++}`;

const fork = (runId: string, body: unknown, prefix = ''): Promise<Response> =>
  call(`${prefix}/runs/${runId}/fork`, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** The NDJSON log of a run (decoded from bytes: the body is not text/*). */
const logOf = async (runId: string, prefix = ''): Promise<string> =>
  new TextDecoder().decode(await (await call(`${prefix}/runs/${runId}/log`)).arrayBuffer());

const linesOf = async (runId: string, prefix = ''): Promise<string[]> =>
  (await logOf(runId, prefix)).split('\n').filter(Boolean);

type Rec = { kind: string; stepIndex?: number; step?: { stepIndex: number }; forkedFrom?: unknown; runId?: string };

/** The step a record belongs to (run_started and run_ended: none). */
const stepOf = (line: string): number | null => {
  const r = JSON.parse(line) as Rec;
  return r.kind === 'step' ? (r.step?.stepIndex ?? null) : (r.stepIndex ?? null);
};

const ended = (runId: string, prefix = '') =>
  waitFor(runId, (s) => s.status === 'ended' || s.status === 'halted', 15_000, prefix);

const probeWaitsOf = (waits: string[]): boolean => !waits.includes('model');

const messageOf = async (res: Response): Promise<string> =>
  ((await res.json()) as { error: { message: string } }).error.message;

describe('POST /runs/:id/fork (workerd)', () => {
  it("forks a finished run at each of its steps: the steps before are the source's records, the answer the same, the source unchanged", async () => {
    const source = await startRun('hello world', uid('fork-src'));
    const done = await ended(source);
    expect(done).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'olleh dlrow', steps: 3 });
    const before = await logOf(source);
    const sourceLines = before.split('\n').filter(Boolean);
    for (let atStep = 0; atStep < done.steps; atStep++) {
      const newRunId = `${source}.f${atStep}`;
      const res = await fork(source, { atStep, newRunId });
      expect(res.status).toBe(201);
      expect(res.headers.get('location')).toBe(`/runs/${newRunId}`);
      expect(await res.json()).toEqual({
        runId: newRunId,
        url: `/runs/${newRunId}`,
        forkedFrom: { runId: source, atStep },
      });
      expect(await ended(newRunId)).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'olleh dlrow', steps: 3 });
      const lines = await linesOf(newRunId);
      expect(JSON.parse(lines[0] as string)).toMatchObject({
        kind: 'run_started',
        runId: newRunId,
        forkedFrom: { runId: source, atStep },
      });
      // Nothing before the fork point ran again: those records are the source's, byte for byte.
      const copied = sourceLines.filter((l) => {
        const step = stepOf(l);
        return step !== null && step < atStep;
      });
      expect(lines.slice(1, 1 + copied.length)).toEqual(copied);
      expect(lines.slice(1 + copied.length).every((l) => (stepOf(l) ?? atStep) >= atStep)).toBe(true);
    }
    expect(await logOf(source)).toBe(before);
  });

  it('forks a run awaiting approval into a run awaiting the same request: approved in one, denied in the other', async () => {
    const source = await startRun({ goal: 'one', approve: true }, uid('fork-approval'));
    const waiting = await waitFor(source, (s) => s.status === 'awaiting_input');
    const before = await logOf(source);
    const newRunId = `${source}.deny`;
    expect((await fork(source, { atStep: 0, newRunId })).status).toBe(201);
    const forked = await waitFor(newRunId, (s) => s.status === 'awaiting_input');
    expect(forked.pending).toEqual(waiting.pending);
    expect(await logOf(source)).toBe(before);
    const answer = (runId: string, reply: object): Promise<Response> =>
      call(`/runs/${runId}/input`, { method: 'POST', body: JSON.stringify({ resultId: 's0.input', ...reply }) });
    expect((await answer(source, { kind: 'approve' })).status).toBe(202);
    expect((await answer(newRunId, { kind: 'deny', reason: 'Not today.' })).status).toBe(202);
    expect(await ended(source)).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'eno', validActions: 1 });
    expect(await ended(newRunId)).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'Not today.',
      validActions: 0,
    });
  });

  it('refuses a fork past the last step, into a taken id, or of an unknown run, writing nothing', async () => {
    const source = await startRun('hello', uid('fork-refused'));
    await ended(source);
    const before = await logOf(source);
    const taken = await startRun('other', uid('fork-taken'));
    const past = await fork(source, { atStep: 2, newRunId: uid('past') });
    expect(past.status).toBe(409);
    expect(await messageOf(past)).toBe(
      `forkRun: run ${JSON.stringify(source)} cannot be forked at step 2: its last completed step is 1`,
    );
    const into = await fork(source, { atStep: 0, newRunId: taken });
    expect(into.status).toBe(409);
    expect(await messageOf(into)).toBe(`run ${JSON.stringify(taken)} already exists`);
    expect((await fork(source, { atStep: 0, newRunId: source })).status).toBe(409);
    expect((await fork(uid('no-such-run'), { atStep: 0, newRunId: uid('x') })).status).toBe(404);
    expect(await logOf(source)).toBe(before);
    expect((await call(`/runs/${taken}`)).status).toBe(200);
  });

  it('refuses a body it does not understand (400, 413) and a hostile new run id, writing nothing', async () => {
    const source = await startRun('hello', uid('fork-bodies'));
    await ended(source);
    const refusals: [unknown, number, string][] = [
      [{ atStep: 0, newRunId: 'ok-id', into: 'x' }, 400, 'unknown field(s): into'],
      [{ atStep: -1, newRunId: 'ok-id' }, 400, 'atStep: must be a non-negative integer'],
      [{ atStep: 0.5, newRunId: 'ok-id' }, 400, 'atStep: must be a non-negative integer'],
      [{ atStep: '0', newRunId: 'ok-id' }, 400, 'atStep: must be a non-negative integer'],
      [{ atStep: 0 }, 400, 'newRunId: required'],
      [{ atStep: 0, newRunId: '../runs/x' }, 400, 'newRunId: must be 1-200 characters'],
      [{ atStep: 0, newRunId: 'a/b' }, 400, 'newRunId: must be 1-200 characters'],
      [{ atStep: 0, newRunId: '' }, 400, 'newRunId: must be 1-200 characters'],
      [{ atStep: 0, newRunId: 'x'.repeat(201) }, 400, 'newRunId: must be 1-200 characters'],
      [{ atStep: 0, newRunId: '..' }, 400, 'newRunId: must not be "." or ".."'],
      [{ atStep: 0, newRunId: 'é' }, 400, 'newRunId: must be 1-200 characters'],
      ['[1]', 400, 'body: expected { "atStep": 0, "newRunId": "…" }'],
      ['{', 400, 'request body is not valid JSON'],
      [{ atStep: 0, newRunId: 'x'.repeat(1024 * 1024) }, 413, 'request body exceeds 1048576 bytes'],
    ];
    for (const [body, code, message] of refusals) {
      const res = await fork(source, body);
      expect(res.status).toBe(code);
      expect(await messageOf(res)).toContain(message);
    }
    expect((await call('/runs/ok-id')).status).toBe(404);
  });

  it('refuses a fork at a step in flight that awaits no person (409), writing nothing', async () => {
    const input: ProbeInput = { goal: 'hello', fault: 'waits-model' };
    const source = uid('fork-in-flight');
    expect(
      (await call('/probes/runs', { method: 'POST', body: JSON.stringify({ runId: source, input }) })).status,
    ).toBe(201);
    const stub = env.PROBES.get(env.PROBES.idFromName(source));
    // Inside its first model call: step 0 is in flight.
    for (let i = 0; i < 600 && probeWaitsOf(await runInDurableObject(stub, () => [...probeWaits(source)])); i++)
      await new Promise((r) => setTimeout(r, 25));
    const newRunId = uid('in-flight-fork');
    const res = await fork(source, { atStep: 0, newRunId }, '/probes');
    expect(res.status).toBe(409);
    expect(await messageOf(res)).toContain('cannot be forked at step 0: it has no completed step');
    expect((await call(`/probes/runs/${newRunId}`)).status).toBe(404);
    expect((await call(`/probes/runs/${source}/stop`, { method: 'POST' })).status).toBe(202);
  });

  it("refuses a fork of a sub-agent's run, naming its parent", async () => {
    const parent = uid('family-fork');
    const started = await call('/family/runs', {
      method: 'POST',
      body: JSON.stringify({ runId: parent, input: { question: 'what is it?' } }),
    });
    expect(started.status).toBe(201);
    await waitFor(parent, (s) => s.status === 'awaiting_input', 15_000, '/family');
    const child = childRunId(parent, 's0.action');
    const res = await fork(child, { atStep: 0, newRunId: uid('child-fork') }, '/family');
    expect(res.status).toBe(409);
    expect(await messageOf(res)).toBe(
      `run ${JSON.stringify(child)} is a sub-agent of run ${JSON.stringify(parent)}: fork its parent ` +
        `(POST /runs/${parent}/fork) at the step that called it; a sub-agent's run is not forked alone`,
    );
  });
});
