/**
 * A deploy that changes the agent under runs that live on (workerd): such a run is halted with
 * RunIdentityMismatchError when it is resumed, and `POST /runs/:id/upgrade` lets it go on under
 * the new agent with an `upgrade` record in its log — or refuses, writing nothing, when the new
 * agent would pull the tool of its open request from under it. The "deploy" is the probe
 * object's agent changed for one run (fixtures/probe-worker.ts).
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { prepareRun } from '../../src/platform-workers/run-setup.ts';
import type { RunSetup } from '../../src/platform-workers/index.ts';
import { demoSetup } from '../../examples/workers/demo-agent.ts';
import { deployProbe } from './fixtures/probe-worker.ts';
import type { ProbeDeploy, ProbeInput } from './fixtures/probe-worker.ts';
import { call, startRun, status, waitFor } from './http.ts';
import type { Status } from './http.ts';

const P = '/probes';
const uid = (p: string): string => `${p}-${crypto.randomUUID()}`;
const stubOf = (runId: string): DurableObjectStub => env.PROBES.get(env.PROBES.idFromName(runId));
const post = (path: string, body: unknown): Promise<Response> =>
  call(path, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
const upgrade = (runId: string, body: unknown, prefix = P): Promise<Response> =>
  post(`${prefix}/runs/${runId}/upgrade`, body);
const approve = (runId: string, resultId: string): Promise<Response> =>
  post(`${P}/runs/${runId}/input`, { kind: 'approve', resultId });
const awaiting =
  (resultId: string) =>
  (s: Status): boolean =>
    s.status === 'awaiting_input' && s.pending?.resultId === resultId;
const logOf = async (runId: string, prefix = P): Promise<string> => (await call(`${prefix}/runs/${runId}/log`)).text();
const recordsOf = async (runId: string): Promise<Record<string, unknown>[]> =>
  (await logOf(runId))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function startProbe(input: ProbeInput): Promise<string> {
  const runId = uid('upgrade');
  const res = await post(`${P}/runs`, { runId, input });
  expect(res.status, await res.clone().text()).toBe(201);
  return runId;
}

/** The next version of the Worker, as the run's probe object will build its agent from now on. */
function deploy(runId: string, what: ProbeDeploy): Promise<void> {
  return runInDurableObject(stubOf(runId), () => deployProbe(runId, what));
}

async function errorOf(res: Response, statusCode: number, code: string): Promise<string> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(res.status, JSON.stringify(body)).toBe(statusCode);
  expect(body.error.code).toBe(code);
  return body.error.message;
}

describe('a run whose agent changed under it (workerd)', () => {
  it('is refused a reply with 409 RunIdentityMismatchError and halted; POST /runs/:id/upgrade then writes an upgrade record and the run finishes under the new agent', async () => {
    const runId = await startProbe({ goal: 'one', approve: true, fault: 'none' });
    await waitFor(runId, awaiting('s0.input'), 15_000, P);
    await deploy(runId, { system: 'Reverse the words. New prompt.', addTool: true });

    const refused = await errorOf(await approve(runId, 's0.input'), 409, 'conflict');
    expect(refused).toMatch(/^RunIdentityMismatchError: .*differing keys: .*context.*tools/);
    const halted = await status(runId, P);
    expect(halted).toMatchObject({ status: 'halted', steps: 0 });
    expect(halted.error).toMatch(/^RunIdentityMismatchError: .*POST \/runs\/.*\/upgrade/);

    const res = await upgrade(runId, { reason: 'deploy 2: the shout tool, a new prompt' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ runId, upgraded: true });
    expect(await status(runId, P)).toMatchObject({
      status: 'awaiting_input',
      error: null,
      pending: { resultId: 's0.input' },
    });

    expect((await approve(runId, 's0.input')).status).toBe(202);
    expect(await waitFor(runId, (s) => s.status === 'ended', 15_000, P)).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'eno',
    });
    const records = await recordsOf(runId);
    const kinds = records.map((r) => r.kind);
    expect(kinds.indexOf('upgrade')).toBe(kinds.indexOf('input_request') + 1);
    const record = records.find((r) => r.kind === 'upgrade');
    expect(record).toMatchObject({ stepIndex: 0, reason: 'deploy 2: the shout tool, a new prompt' });
    expect(Object.keys(record?.['changes'] as object).sort()).toEqual(['context', 'tools']);
  });

  it('refuses an upgrade whose agent removes the tool of the open request with 409 UpgradeRefusedError, writing nothing: the run stays halted, waiting', async () => {
    const runId = await startProbe({ goal: 'one', approve: true, fault: 'none' });
    await waitFor(runId, awaiting('s0.input'), 15_000, P);
    await deploy(runId, { dropTool: true });
    await errorOf(await approve(runId, 's0.input'), 409, 'conflict');
    const before = await logOf(runId);
    const halted = await status(runId, P);

    const message = await errorOf(await upgrade(runId, { reason: 'deploy 3: reverse_word is gone' }), 409, 'conflict');
    expect(message).toMatch(/^UpgradeRefusedError: .*removes tool "reverse_word"/);
    expect(await logOf(runId)).toBe(before);
    expect(await status(runId, P)).toEqual(halted);
  });

  it('lets a run in flight that its alarm halted after a deploy go on to its end once upgraded', async () => {
    const runId = await startProbe({ goal: 'one two three', pauseMs: 100, fault: 'none' });
    await waitFor(runId, (s) => s.steps >= 1, 15_000, P);
    await runInDurableObject(stubOf(runId), (_o, state) => state.abort('simulated eviction')).catch(() => undefined);
    await deploy(runId, { system: 'Reverse the words, version 2.' });
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const halted = await waitFor(runId, (s) => s.status === 'halted', 15_000, P);
    expect(halted.error).toMatch(/^RunIdentityMismatchError: .*context/);

    const res = await upgrade(runId, { reason: 'deploy 2: a new prompt' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ runId, upgraded: true });
    expect(await waitFor(runId, (s) => s.status === 'ended', 15_000, P)).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'eno owt eerht',
    });
    const record = (await recordsOf(runId)).find((r) => r.kind === 'upgrade');
    expect(record).toMatchObject({ stepIndex: halted.steps, reason: 'deploy 2: a new prompt' });
    expect(await runInDurableObject(stubOf(runId), (_o, state) => state.storage.getAlarm())).toBeNull();
  });

  it('answers 202 with upgraded: false for a waiting run whose agent did not change, writing nothing', async () => {
    const runId = await startProbe({ goal: 'one', approve: true, fault: 'none' });
    await waitFor(runId, awaiting('s0.input'), 15_000, P);
    const before = await logOf(runId);
    const res = await upgrade(runId, { reason: 'nothing changed' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ runId, upgraded: false });
    expect(await logOf(runId)).toBe(before);
    expect(await status(runId, P)).toMatchObject({ status: 'awaiting_input' });
  });
});

describe('POST /runs/:id/upgrade refusals (workerd)', () => {
  it('refuses a malformed body (400), an unknown run (404) and an ended run (409), writing nothing', async () => {
    const runId = await startRun('one');
    await waitFor(runId, (s) => s.status === 'ended');
    const before = await logOf(runId, '');
    const bodies: [unknown, RegExp][] = [
      [{ reason: 'x', force: true }, /unknown field\(s\): force/],
      [{}, /reason/],
      [{ reason: '   ' }, /reason/],
      [{ reason: 7 }, /reason/],
      [[], /body/],
      ['{"reason":', /not valid JSON/],
    ];
    for (const [body, message] of bodies)
      expect(await errorOf(await upgrade(runId, body, ''), 400, 'bad_request'), JSON.stringify(body)).toMatch(message);
    await errorOf(await upgrade(uid('nope'), { reason: 'x' }, ''), 404, 'not_found');
    expect(await errorOf(await upgrade(runId, { reason: 'x' }, ''), 409, 'conflict')).toMatch(/has ended/);
    expect(await logOf(runId, '')).toBe(before);
  });
});

describe('what setup returns with defaults (workerd)', () => {
  const base = demoSetup({ env: {}, runId: 'r', input: 'one two' });
  const prepare = (setup: RunSetup) => prepareRun(() => setup, { env: {}, runId: 'r', input: 'one two' });

  it('is refused (400, nothing stored) without the tools and executor a resume by id needs, or with them in the request', async () => {
    const { tools: _t, executor: _e, ...codeless } = base.defaults!;
    const without = await prepare({ ...base, defaults: codeless });
    expect(without.ok === false && without.message).toMatch(
      /defaults\.tools and defaults\.executor required: a run resumes by its id/,
    );
    const both = await prepare({
      ...base,
      request: { ...base.request, tools: base.defaults!.tools!, executor: base.defaults!.executor! },
    });
    expect(both.ok === false && both.message).toMatch(/request\.tools and request\.executor not allowed with defaults/);
  });

  it('is checked as the request run() would make of it: a request field the defaults lack is named', async () => {
    const { budget: _b, ...unbudgeted } = base.defaults!;
    const refused = await prepare({ ...base, defaults: unbudgeted });
    expect(refused.ok === false && refused.message).toMatch(/budget/);
    expect(await prepare(base)).toMatchObject({ ok: true });
  });
});
