/**
 * The run log as a value on Workers: `GET /runs/:id/log` exports a run as NDJSON, and `POST /runs`
 * with `{ runId, input, log }` imports a run written elsewhere and finishes it with the object's
 * resume.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  decodeLog,
  defineAgent,
  encodeRecord,
  exportRun,
  importRun,
  InMemoryStore,
  readRunLog,
  resume,
  run,
} from '../../src/core/index.ts';
import type { RunStore, StepRecord } from '../../src/core/index.ts';
import { DurableObjectStore } from '../../src/platform-workers/index.ts';
import { MAX_BODY_BYTES } from '../../src/platform-workers/body.ts';
import { faultyStore } from '../../src/testing/index.ts';
import { demoSetup } from '../../examples/workers/demo-agent.ts';
import { call, startRun, status, waitFor } from './http.ts';

const GOAL = 'one two';
const uid = (p: string): string => `${p}-${crypto.randomUUID()}`;
const timeless = (steps: readonly StepRecord[]): Omit<StepRecord, 'startedAt' | 'endedAt'>[] =>
  steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);

/** Run the demo agent of the Worker (the same factory, same input) on `store`, here in the test; or resume it. */
function runHere(store: RunStore, runId: string, goal = GOAL, go: typeof run | typeof resume = run): Promise<unknown> {
  const { model, interpreter, syntheticObservations, defaults, request } = demoSetup({ env: {}, runId, input: goal });
  const agent = defineAgent({
    model,
    interpreter,
    syntheticObservations,
    defaults: defaults!,
    store,
    events: { params: { sink: 'test' }, deliver: () => undefined },
  });
  return go(agent, { ...request, runId });
}

async function errorOf(res: Response, statusCode: number, code: string): Promise<string> {
  expect(res.status).toBe(statusCode);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  return body.error.message;
}

const post = (body: unknown): Promise<Response> => call('/runs', { method: 'POST', body: JSON.stringify(body) });

/** The log of a run interrupted after `writes` writes, exported from an InMemoryStore. */
async function interruptedLog(runId: string, writes: number, goal = GOAL): Promise<string> {
  const inner = new InMemoryStore();
  await runHere(faultyStore(inner, { crashAfterWrites: writes }), runId, goal).catch(() => undefined);
  return exportRun(inner, runId);
}

async function referenceTrajectory(): Promise<ReturnType<typeof timeless>> {
  const store = new InMemoryStore();
  await runHere(store, 'reference');
  return timeless((await store.readLog('reference')).flatMap((r) => (r.kind === 'step' ? [r.step] : [])));
}

describe('GET /runs/:id/log (workerd)', () => {
  it('answers 200 application/x-ndjson with exportRun of the run, byte-identical to the same records exported from InMemoryStore', async () => {
    const runId = await startRun(GOAL);
    await waitFor(runId, (s) => s.status === 'ended');
    const res = await call(`/runs/${runId}/log`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const body = await res.text();
    const stub = env.RUNS.get(env.RUNS.idFromName(runId));
    const fromObject = await runInDurableObject(stub, (_o, state) =>
      exportRun(new DurableObjectStore(state.storage), runId),
    );
    expect(body).toBe(fromObject);
    const memory = new InMemoryStore();
    await importRun(memory, runId, body);
    expect(await exportRun(memory, runId)).toBe(body);
    expect(body.endsWith('\n')).toBe(true);
    expect(
      body
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { kind: string }).kind)
        .at(-1),
    ).toBe('run_ended');
  });

  it('answers 404 for an unknown run and 401 without the token', async () => {
    await errorOf(await call(`/runs/${uid('nope')}/log`), 404, 'not_found');
    await errorOf(await call('/runs/./log'), 404, 'not_found');
    const runId = await startRun(GOAL);
    await errorOf(await call(`/runs/${runId}/log`, { token: null }), 401, 'unauthorized');
  });
});

describe('POST /runs with a log (workerd)', () => {
  it('finishes a run interrupted at every write point elsewhere with the uninterrupted trajectory', async () => {
    const reference = await referenceTrajectory();
    const total = (await interruptedLog('count', 1_000)).trimEnd().split('\n').length;
    expect(total).toBeGreaterThan(8);
    for (let writes = 1; writes <= total; writes++) {
      const runId = uid(`moved-${writes}`);
      const log = await interruptedLog(runId, writes);
      const res = await post({ runId, input: GOAL, log });
      expect(res.status, `after ${writes} writes: ${await res.clone().text()}`).toBe(201);
      expect(await res.json()).toEqual({ runId });
      const ended = await waitFor(runId, (s) => s.status !== 'running');
      expect(ended, `after ${writes} writes`).toMatchObject({
        status: 'ended',
        stopReason: 'final_answer',
        finalAnswer: 'eno owt',
      });
      const trajectory = (await (await call(`/runs/${runId}/trajectory`)).json()) as { steps: StepRecord[] };
      expect(timeless(trajectory.steps), `after ${writes} writes`).toEqual(reference);
      // The object's log continues the imported one: the same records first, byte for byte.
      expect((await (await call(`/runs/${runId}/log`)).text()).startsWith(log)).toBe(true);
    }
  });

  it('accepts a body over 1 MiB in this form (the 16 MiB limit), and refuses one over 16 MiB with 413', async () => {
    const runId = uid('big');
    const log = await interruptedLog(runId, 3);
    const padded = `${JSON.stringify({ runId, input: GOAL, log }).slice(0, -1)}${' '.repeat(MAX_BODY_BYTES)}}`;
    expect((await call('/runs', { method: 'POST', body: padded })).status).toBe(201);
    await waitFor(runId, (s) => s.status === 'ended');
    const huge = JSON.stringify({ runId: uid('huge'), input: GOAL, log: 'x'.repeat(16 * MAX_BODY_BYTES) });
    await errorOf(await call('/runs', { method: 'POST', body: huge }), 413, 'payload_too_large');
    // Over 1 MiB but not the import form: the 1 MiB limit holds.
    const plain = `${JSON.stringify({ runId: uid('plain'), input: GOAL }).slice(0, -1)}${' '.repeat(MAX_BODY_BYTES)}}`;
    expect(await errorOf(await call('/runs', { method: 'POST', body: plain }), 413, 'payload_too_large')).toMatch(
      `${MAX_BODY_BYTES} bytes`,
    );
  });

  it('refuses an input over 1 MiB in this form with 413 like a plain start, storing nothing (the id stays free)', async () => {
    const runId = uid('big-input');
    const log = await interruptedLog(runId, 3);
    // The probe factory ignores unknown keys, so this input builds the agent the log was written with.
    const input = { goal: GOAL, fault: 'none', notes: 'n'.repeat(3 * MAX_BODY_BYTES) };
    const res = await call('/probes/runs', { method: 'POST', body: JSON.stringify({ runId, input, log }) });
    expect(await errorOf(res, 413, 'payload_too_large')).toMatch(/input/);
    await errorOf(await call(`/probes/runs/${runId}`), 404, 'not_found');
    expect(
      (
        await call('/probes/runs', {
          method: 'POST',
          body: JSON.stringify({ runId, input: { goal: GOAL, fault: 'none' }, log }),
        })
      ).status,
    ).toBe(201);
    expect((await waitFor(runId, (s) => s.status !== 'running', 15_000, '/probes')).status).toBe('ended');
  });

  it('answers 409 when the run id exists, leaving that run as it was', async () => {
    const runId = await startRun(GOAL, uid('taken'));
    await waitFor(runId, (s) => s.status === 'ended');
    const before = await (await call(`/runs/${runId}/log`)).text();
    const log = await interruptedLog(runId, 4);
    await errorOf(await post({ runId, input: GOAL, log }), 409, 'conflict');
    expect(await (await call(`/runs/${runId}/log`)).text()).toBe(before);
  });

  const spoilers: [string, (log: string, runId: string) => string, RegExp][] = [
    ['a torn last line', (log) => log.slice(0, -20), /CorruptLogError: .*torn/],
    [
      'a corrupt middle line',
      (log) =>
        log
          .split('\n')
          .map((l, i) => (i === 2 ? '{oops' : l))
          .join('\n'),
      /CorruptLogError: .*imported log:3: not valid JSON/,
    ],
    ['a schema major 2', (log) => log.replaceAll('"v":"1.', '"v":"2.'), /SchemaVersionError: .*"2\./],
    [
      'a log of another run id',
      (log, runId) => log.replace(`"runId":"${runId}"`, '"runId":"someone-else"'),
      /InvalidRequestError: .*is of run "someone-else"/,
    ],
    ['an empty log', () => '', /InvalidRequestError: .*empty/],
    [
      'records out of protocol order',
      (log) => {
        const l = log.trimEnd().split('\n');
        return `${[l[0], l[2], l[1], ...l.slice(3)].join('\n')}\n`;
      },
      /CorruptLogError: /,
    ],
    [
      'a run_ended that claims 42 steps and "All good"',
      (log) =>
        `${log}{"kind":"run_ended","v":"1.1","stopReason":"final_answer","finalAnswer":"All good","steps":42,"validActions":0}\n`,
      /CorruptLogError: .*run_ended says 42 steps/,
    ],
    [
      'a snapshot that is not its hash',
      (log) => log.replace(/"snapshotHash":"[0-9a-f]/, '"snapshotHash":"x'),
      /CorruptLogError: .*snapshotHash/,
    ],
    [
      'a record nested 100,000 levels deep',
      (log) => log.replace(/\}\n/, `,"extra":${'['.repeat(100_000)}${']'.repeat(100_000)}}\n`),
      /CorruptLogError: .*imported log:1: the record is nested more than 110 levels deep/,
    ],
  ];

  it.each(spoilers)(
    'answers 400 bad_request for %s, storing nothing (the id stays free)',
    async (_what, spoil, message) => {
      const runId = uid('hostile');
      const log = await interruptedLog(runId, 6);
      expect(await errorOf(await post({ runId, input: GOAL, log: spoil(log, runId) }), 400, 'bad_request')).toMatch(
        message,
      );
      await errorOf(await call(`/runs/${runId}`), 404, 'not_found');
      expect((await post({ runId, input: GOAL, log })).status).toBe(201);
      expect((await waitFor(runId, (s) => s.status !== 'running')).status).toBe('ended');
    },
  );

  it('answers 400 when the factory, given this input, builds an agent that would not resume the log (identity mismatch), storing nothing', async () => {
    const runId = uid('mismatch');
    const log = await interruptedLog(runId, 5);
    const message = await errorOf(await post({ runId, input: 'one three', log }), 400, 'bad_request');
    expect(message).toMatch(/^log rejected: RunIdentityMismatchError: .*context\.goal/);
    await errorOf(await call(`/runs/${runId}`), 404, 'not_found');
    expect((await post({ runId, input: GOAL, log })).status).toBe(201);
    expect(await waitFor(runId, (s) => s.status !== 'running')).toMatchObject({
      status: 'ended',
      finalAnswer: 'eno owt',
    });
  });

  it('imports a log upgraded elsewhere: judged against the identity its upgrade put in force, not the one it started with', async () => {
    const runId = uid('upgraded');
    const inner = new InMemoryStore();
    const { model, interpreter, syntheticObservations, defaults, request } = demoSetup({ env: {}, runId, input: GOAL });
    const agentOn = (store: RunStore, system?: string) => {
      const prompt =
        system === undefined
          ? defaults!.context!.run!
          : [{ role: 'system' as const, content: [{ type: 'text' as const, text: system }] }];
      return defineAgent({
        model,
        interpreter,
        syntheticObservations,
        defaults: { ...defaults, context: { run: prompt } },
        store,
        events: { params: { sink: 'test' }, deliver: () => undefined },
      });
    };
    // The old code: another system prompt, interrupted after its first step.
    await run(agentOn(faultyStore(inner, { crashAfterWrites: 4 }), 'The old prompt.'), { ...request, runId }).catch(
      () => undefined,
    );
    // The new code (this Worker's agent) takes it over with an upgrade, and is interrupted right after it.
    await resume(agentOn(faultyStore(inner, { crashAfterWrites: 1 })), runId, {
      upgrade: { reason: 'the new prompt' },
    }).catch(() => undefined);
    const log = await exportRun(inner, runId);
    expect(log).toMatch(/"kind":"upgrade"/);
    const res = await post({ runId, input: GOAL, log });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(await waitFor(runId, (s) => s.status !== 'running')).toMatchObject({
      status: 'ended',
      finalAnswer: 'eno owt',
    });
    expect((await (await call(`/runs/${runId}/log`)).text()).startsWith(log)).toBe(true);
  });

  it('resumes an imported log written before stored requests (record version 1.1) with the request setup builds', async () => {
    const runId = uid('v1-1');
    // Every field out: an export leaves out what a reader derives, which a 1.1 reader would not.
    const records = decodeLog(await interruptedLog(runId, 5)).records.map(
      (r) => JSON.parse(encodeRecord(r)) as Record<string, unknown>,
    );
    // What a 1.1 writer left: the same records, without run_started's request.
    const older = records.map((r): Record<string, unknown> => ({ ...r, v: '1.1' }));
    delete older[0]!['request'];
    const log = older.map((r) => `${JSON.stringify(r)}\n`).join('');
    expect(log).not.toMatch(/"defaulted"/);
    expect((await post({ runId, input: GOAL, log })).status).toBe(201);
    expect(await waitFor(runId, (s) => s.status !== 'running')).toMatchObject({
      status: 'ended',
      finalAnswer: 'eno owt',
    });
  });

  it('answers 400 for a log without runId (a log names its run), for a non-string log, and for an input the factory rejects', async () => {
    const runId = uid('shape');
    const log = await interruptedLog(runId, 4);
    expect(await errorOf(await post({ input: GOAL, log }), 400, 'bad_request')).toMatch(/runId: required with log/);
    await errorOf(await post({ runId, input: GOAL, log: 42 }), 400, 'bad_request');
    expect(await errorOf(await post({ runId, input: { goal: 7 }, log }), 400, 'bad_request')).toMatch(
      /demo agent takes a goal string/,
    );
    await errorOf(await call(`/runs/${runId}`), 404, 'not_found');
  });

  it('drops the records of an import that never completed (no run row, so never acknowledged) before importing or starting that run id', async () => {
    for (const how of ['import', 'start'] as const) {
      const runId = uid(`leftover-${how}`);
      const log = await interruptedLog(runId, 7);
      const stub = env.RUNS.get(env.RUNS.idFromName(runId));
      // What an instance evicted mid-import leaves: the object's tables, some records, no run row
      // (of another goal: were they kept, resuming them with this input would halt on identity).
      const leftover = await interruptedLog(runId, 3, 'three four');
      await runInDurableObject(stub, async (_o, state) => {
        await importRun(new DurableObjectStore(state.storage), runId, leftover);
      });
      await errorOf(await call(`/runs/${runId}`), 404, 'not_found');
      const res = how === 'import' ? await post({ runId, input: GOAL, log }) : await post({ runId, input: GOAL });
      expect(res.status, how).toBe(201);
      expect(await waitFor(runId, (s) => s.status !== 'running')).toMatchObject({
        status: 'ended',
        finalAnswer: 'eno owt',
        steps: 3,
      });
      const exported = await (await call(`/runs/${runId}/log`)).text();
      expect(exported.split('\n').filter((l) => l.includes('"kind":"run_started"'))).toHaveLength(1);
      if (how === 'import') expect(exported.startsWith(log)).toBe(true);
    }
  });

  it('imports a log that marks where a driver took it over elsewhere, finishes it, and keeps the mark before its own', async () => {
    const runId = uid('marked');
    // Interrupted, taken over by a second driver, interrupted again: the log holds that driver's mark.
    const inner = new InMemoryStore();
    await runHere(faultyStore(inner, { crashAfterWrites: 4 }), runId).catch(() => undefined);
    await runHere(faultyStore(inner, { crashAfterWrites: 3 }), runId, GOAL, resume).catch(() => undefined);
    const log = await exportRun(inner, runId);
    expect(readRunLog(decodeLog(log).records).resumes).toHaveLength(1);
    expect((await post({ runId, input: GOAL, log })).status).toBe(201);
    expect(await waitFor(runId, (s) => s.status !== 'running')).toMatchObject({
      status: 'ended',
      finalAnswer: 'eno owt',
    });
    const after = await (await call(`/runs/${runId}/log`)).text();
    expect(after.startsWith(log)).toBe(true);
    expect(readRunLog(decodeLog(after).records).resumes).toHaveLength(2);
  });

  it('reports an imported run before it ends like any run: running, then ended with the imported steps counted', async () => {
    const runId = uid('counted');
    const log = await interruptedLog(runId, 9);
    expect((await post({ runId, input: GOAL, log })).status).toBe(201);
    const s = await status(runId);
    expect(['running', 'ended']).toContain(s.status);
    expect(await waitFor(runId, (x) => x.status === 'ended')).toMatchObject({ steps: 3, validActions: 2 });
  });
});
