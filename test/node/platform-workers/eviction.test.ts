import { join } from 'node:path';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bundleWorker, follow, ROOT, startWorker, TOKEN } from './miniflare-harness.ts';
import type { LogEvent } from './miniflare-harness.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

type Status = {
  runId: string;
  status: string;
  stopReason: string | null;
  finalAnswer: string | null;
  steps: number;
  validActions: number;
};
type Steps = { runId: string; steps: Record<string, unknown>[] };

let script = '';
// Removed after the afterAll below has disposed of every Miniflare that stored there.
const dirs = sharedTempDirs();
const live: Miniflare[] = [];

/** The `work` tool's side effects: the line it prints as it starts (EXEC_MARK of the fixture), tagged with the generation that printed it. */
type Exec = { readonly runId: string; readonly n: number; readonly generation: number };
const EXEC_MARK = 'POLYLOOP_EXEC ';
const execs: Exec[] = [];
let generationNo = 0;

beforeAll(async () => {
  script = await bundleWorker(join(ROOT, 'test/workers/fixtures/eviction-worker.ts'));
});

afterAll(async () => {
  await Promise.all(live.map((mf) => mf.dispose().catch(() => undefined)));
});

async function generation(dir: string): Promise<Miniflare> {
  const gen = ++generationNo;
  const mf = await startWorker(script, dir, null, (line) => {
    const at = line.indexOf(EXEC_MARK);
    if (at >= 0)
      execs.push({
        ...(JSON.parse(line.slice(at + EXEC_MARK.length)) as { runId: string; n: number }),
        generation: gen,
      });
  });
  live.push(mf);
  return mf;
}

/** Resolves once the work tool has printed that it started item `n` of `runId`. */
async function started(runId: string, n: number, timeoutMs = 30_000): Promise<Exec> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) {
    const e = execs.find((x) => x.runId === runId && x.n === n);
    if (e) return e;
  }
  throw new Error(`the work tool never started item ${n} of ${runId}`);
}

const execsOf = (runId: string): Exec[] => execs.filter((e) => e.runId === runId);

async function kill(mf: Miniflare): Promise<void> {
  live.splice(live.indexOf(mf), 1);
  await mf.dispose();
}

function storageDir(): Promise<string> {
  return dirs.make('polyloop-evict-');
}

const withoutTimes = (steps: Record<string, unknown>[]): Record<string, unknown>[] =>
  steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);
const isIntent =
  (kind: 'model_call' | 'action') =>
  (e: LogEvent): boolean =>
    e.event === 'intent' && e.record['intent'] === kind;

describe('the run Durable Object after eviction (real workerd, persisted storage)', () => {
  it('is resumed by its alarm after being killed mid-model-call, mid-action and at a step boundary, to the trajectory of an uninterrupted run', async () => {
    const dir = await storageDir();
    const input = { steps: 4, modelPauseMs: 500, toolPauseMs: 500, replayPolicy: 'safe' };
    const seen: LogEvent[] = [];
    const lastId = (): number => seen.at(-1)?.id ?? -1;

    const restartedAt: number[] = [];
    const inFlightStep: number[] = [];
    const killWhen = async (mf: Miniflare, stop: (e: LogEvent) => boolean, toolStarted = false): Promise<void> => {
      const events = await follow(mf, 'evicted', lastId(), stop);
      seen.push(...events);
      inFlightStep.push(
        Number(
          (events.at(-1)?.record['stepIndex'] ??
            (events.at(-1)?.record['step'] as Record<string, unknown> | undefined)?.['stepIndex']) as number,
        ),
      );
      // Kill mid-action only once the tool has really started (its side effect happened).
      if (toolStarted) await started('evicted', inFlightStep.at(-1) ?? -1);
      await kill(mf);
      restartedAt.push(Date.now());
    };

    // Generation 1: start the run, kill the process while the first model call is in flight.
    let mf = await generation(dir);
    expect((await api(mf, '/runs', { method: 'POST', body: { runId: 'evicted', input } })).status).toBe(201);
    await killWhen(mf, isIntent('model_call'));

    // Generation 2: nobody calls the run; its alarm resumes it. Kill while an action is in flight.
    mf = await generation(dir);
    await killWhen(mf, isIntent('action'), true);

    // Generation 3: kill right after a step record (at a step boundary).
    mf = await generation(dir);
    await killWhen(mf, (e) => e.event === 'step');

    // Generation 4: the alarm resumes it once more, and it runs to its end.
    mf = await generation(dir);
    seen.push(...(await follow(mf, 'evicted', lastId(), (e) => e.event === 'run_ended')));
    expect(seen.map((e) => e.id)).toEqual(seen.map((_, i) => i));
    expect(seen.at(-1)?.event).toBe('run_ended');

    // The uninterrupted reference, in the same workerd.
    expect((await api(mf, '/runs', { method: 'POST', body: { runId: 'reference', input } })).status).toBe(201);
    await follow(mf, 'reference', -1, (e) => e.event === 'run_ended');

    const [evicted, reference] = await Promise.all([
      api<Status>(mf, '/runs/evicted'),
      api<Status>(mf, '/runs/reference'),
    ]);
    expect(evicted.body).toEqual({ ...reference.body, runId: 'evicted' });
    expect(evicted.body).toMatchObject({
      status: 'ended',
      stopReason: 'final_answer',
      steps: 5,
      validActions: 4,
      finalAnswer: 'item 0 done | item 1 done | item 2 done | item 3 done',
    });
    const [a, b] = await Promise.all([
      api<Steps>(mf, '/runs/evicted/trajectory'),
      api<Steps>(mf, '/runs/reference/trajectory'),
    ]);
    expect(withoutTimes(a.body.steps)).toEqual(withoutTimes(b.body.steps));

    // The first two kills landed mid-operation: the step in flight was finished only after the restart.
    const endedAt = (stepIndex: number): number => Date.parse(String(a.body.steps[stepIndex]?.['endedAt']));
    expect(endedAt(inFlightStep[0] ?? -1)).toBeGreaterThanOrEqual(restartedAt[0] ?? Infinity);
    expect(endedAt(inFlightStep[1] ?? -1)).toBeGreaterThanOrEqual(restartedAt[1] ?? Infinity);

    // Side effects: the reference ran each item once; the evicted run ran each item, and ran one
    // again (the tool is safe) only where a kill interrupted it — the action killed mid-way for sure.
    const items = [0, 1, 2, 3];
    expect(
      execsOf('reference')
        .map((e) => e.n)
        .sort(),
    ).toEqual(items);
    const sideEffects = execsOf('evicted');
    for (const n of items) {
      const runs = sideEffects.filter((e) => e.n === n);
      expect(runs.length, `item ${n}`).toBeGreaterThanOrEqual(1);
      expect(runs.length, `item ${n}`).toBeLessThanOrEqual(2);
      // A second execution follows a first one in an earlier generation, which was killed.
      if (runs.length === 2) expect(runs[0]?.generation, `item ${n}`).toBeLessThan(runs[1]?.generation ?? 0);
    }
    expect(sideEffects.filter((e) => e.n === inFlightStep[1])).toHaveLength(2);
    await kill(mf);
  }, 180_000);

  it('asks for a settlement of a never-replay action killed in flight, and finishes as the uninterrupted run once it is answered from the side effect, the action not run again', async () => {
    const dir = await storageDir();
    let mf = await generation(dir);
    const input = { steps: 1, modelPauseMs: 0, toolPauseMs: 60_000, replayPolicy: 'never' };
    expect((await api(mf, '/runs', { method: 'POST', body: { runId: 'unknowable', input } })).status).toBe(201);
    const before = await follow(mf, 'unknowable', -1, isIntent('action'));
    const first = await started('unknowable', 0); // the never action has really run, once
    await kill(mf);

    // The alarm resumes the run, which cannot know whether the action happened: it asks.
    mf = await generation(dir);
    const asked = await follow(mf, 'unknowable', before.at(-1)?.id ?? -1, (e) => e.event === 'input_request');
    // The resuming driver marks where it took over, then asks.
    expect(asked.map((e) => e.event)).toEqual(['resumed', 'input_request']);
    const waiting = await api<Status>(mf, '/runs/unknowable');
    expect(waiting.body).toMatchObject({
      status: 'awaiting_input',
      steps: 0,
      pending: { kind: 'settle', target: 'action', resultId: 's0.settle' },
    });

    // Whoever can see the outside world answers: the side effect's output says it happened.
    const observation = `item ${first.n} done`;
    const answered = await api(mf, '/runs/unknowable/input', {
      method: 'POST',
      body: { kind: 'executed', resultId: 's0.settle', observation },
    });
    expect(answered).toEqual({ status: 202, body: { runId: 'unknowable', resultId: 's0.settle' } });
    const rest = await follow(mf, 'unknowable', asked.at(-1)?.id ?? -1, (e) => e.event === 'run_ended');
    // The driver that carries the answer out marks where it took over, before the answer lands.
    expect(rest.map((e) => e.event)).toEqual(['resumed', 'input', 'step', 'intent', 'result', 'step', 'run_ended']);

    // The uninterrupted reference (a fast tool: the same observation), in the same workerd.
    const reference = { ...input, toolPauseMs: 0 };
    expect(
      (await api(mf, '/runs', { method: 'POST', body: { runId: 'settled-reference', input: reference } })).status,
    ).toBe(201);
    await follow(mf, 'settled-reference', -1, (e) => e.event === 'run_ended');
    const status = await api<Status>(mf, '/runs/unknowable');
    expect(status.body).toMatchObject({
      status: 'ended',
      stopReason: 'final_answer',
      steps: 2,
      validActions: 1,
      finalAnswer: 'item 0 done',
    });
    const [a, b] = await Promise.all([
      api<Steps>(mf, '/runs/unknowable/trajectory'),
      api<Steps>(mf, '/runs/settled-reference/trajectory'),
    ]);
    expect(withoutTimes(a.body.steps)).toEqual(withoutTimes(b.body.steps));
    expect(execsOf('unknowable')).toEqual([first]); // and never again after the eviction
    await kill(mf);
  }, 120_000);

  it('keeps a run waiting for an approval across an eviction: nothing runs while it waits, and the approval given afterwards runs the action exactly once', async () => {
    const dir = await storageDir();
    let mf = await generation(dir);
    const input = { steps: 1, modelPauseMs: 0, toolPauseMs: 0, replayPolicy: 'never', approve: true };
    expect((await api(mf, '/runs', { method: 'POST', body: { runId: 'approval', input } })).status).toBe(201);
    const asked = await follow(mf, 'approval', -1, (e) => e.event === 'input_request');
    expect(asked.at(-1)?.record).toMatchObject({
      resultId: 's0.input',
      request: { kind: 'approval', target: 'action' },
    });
    await kill(mf);

    mf = await generation(dir);
    const logLines = async (): Promise<number> =>
      (
        await (
          await mf.dispatchFetch('http://polyloop.test/runs/approval/log', {
            headers: { authorization: `Bearer ${TOKEN}` },
          })
        ).text()
      )
        .split('\n')
        .filter(Boolean).length;
    const waiting = await api<Status>(mf, '/runs/approval');
    expect(waiting.body).toMatchObject({
      status: 'awaiting_input',
      steps: 0,
      pending: { kind: 'approval', resultId: 's0.input', decision: { action: { name: 'work', arguments: { n: 0 } } } },
    });
    // Several alarm periods (300 ms) pass: an awaiting run is not driven again, and writes nothing.
    const lines = await logLines();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await logLines()).toBe(lines);
    expect(execsOf('approval')).toEqual([]);

    const approved = await api(mf, '/runs/approval/input', {
      method: 'POST',
      body: { kind: 'approve', resultId: 's0.input' },
    });
    expect(approved.status).toBe(202);
    await follow(mf, 'approval', asked.at(-1)?.id ?? -1, (e) => e.event === 'run_ended');
    expect((await api<Status>(mf, '/runs/approval')).body).toMatchObject({
      status: 'ended',
      stopReason: 'final_answer',
      finalAnswer: 'item 0 done',
      steps: 2,
      validActions: 1,
      pending: null,
    });
    expect(execsOf('approval').map((e) => ({ n: e.n, generation: e.generation }))).toEqual([
      { n: 0, generation: generationNo },
    ]);
    // A second approval of the same request is refused: the run no longer awaits it.
    expect(
      (await api(mf, '/runs/approval/input', { method: 'POST', body: { kind: 'approve', resultId: 's0.input' } }))
        .status,
    ).toBe(409);
    await kill(mf);
  }, 120_000);
});
