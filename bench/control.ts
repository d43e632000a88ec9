/**
 * Section `control` of `npm run bench`: a person in control of a run (docs/design/control.md),
 * each figure next to a floor sampled in alternation (docs/performance.md#a-person-in-control).
 * - Stop latency: from `requestStop` resolving to `run` settling `cancelled`, the run inside a tool
 *   that honours its signal, then one that ignores it; on InMemoryStore, and on FileStore with the
 *   stop asked through a second instance on the same directory (as another process would: the
 *   holder sees it at its 200 ms poll). Floor: the same run aborted by its caller's signal.
 * - Kernel cost per step with a lease that carries `lost` (a stop can reach the run) against the
 *   same store whose lease carries none; a caller's signal beside it.
 * - `forkRun` of a 200-step run at step 100, against `exportRun` + `importRun` of the same
 *   100-step log into another store.
 * - Resume with an approval that edits the call's arguments, against a plain approval.
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  exportRun,
  forkRun,
  importRun,
  InMemoryStore,
  readRunLog,
  requestStop,
  resume,
  run,
} from '../src/core/index.ts';
import type { AgentDefinition, RunResult, RunStore } from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { STOP_POLL_MS } from '../src/platform-node/stop-file.ts';
import { GRACE_MS, nextEntry, NoLostStore, releaseParked, toolAgent } from './control-fixtures.ts';
import { benchAgent, benchRequest } from './fixtures.ts';
import { freshId, row, sampleAll } from './kernel.ts';
import { collectGarbage } from './stats.ts';
import type { Plan, Row } from './kernel.ts';

const SECTION = 'control';
const REASON = 'a person stopped it';

/** Elapsed time, ms. */
const wallMs = (): number => performance.now();
/** CPU time of the process, ms (user + system): the work done, which a loaded machine stretches less. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * How a run inside a slow tool is ended: a stop through `stopper`, or its caller's signal (the
 * floor); `afterMs` after the run entered its tool.
 */
type Ender = ({ readonly kind: 'stop'; readonly stopper: RunStore } | { readonly kind: 'abort' }) & {
  readonly afterMs: number;
};

/**
 * Ms from the end being asked (`requestStop` resolved, or `abort()` returned) to the run settling,
 * the run started on `agent` and inside its tool. A stop resolves the run `cancelled` with the
 * reason; an abort rejects it with the signal's reason. Either way the log ends `cancelled`.
 */
async function endMs(agent: AgentDefinition, end: Ender): Promise<number> {
  const runId = freshId('ctl');
  const inside = nextEntry();
  const caller = new AbortController();
  let settledAt = 0;
  const at = <T>(outcome: T): T => {
    settledAt = wallMs();
    return outcome;
  };
  const opts = end.kind === 'abort' ? { signal: caller.signal } : {};
  const settled = run(agent, { runId, goal: 'Wait.' }, opts).then(at, at);
  await inside;
  if (end.afterMs > 0) await new Promise((elapsed) => setTimeout(elapsed, end.afterMs));
  let asked: number;
  if (end.kind === 'stop') {
    await requestStop(end.stopper, runId, REASON);
    asked = wallMs();
  } else {
    caller.abort();
    asked = wallMs();
  }
  const outcome = await settled;
  releaseParked();
  await checkEnded(agent.store, runId, end, outcome);
  return settledAt - asked;
}

/** Throw unless the run settled as `end` makes it and its log ends `cancelled` (with the reason when stopped). */
async function checkEnded(store: RunStore, runId: string, end: Ender, outcome: unknown): Promise<void> {
  const last = (await store.readLog(runId)).at(-1);
  const logged = last?.kind === 'run_ended' ? last : null;
  const ok =
    logged?.stopReason === 'cancelled' &&
    (end.kind === 'stop'
      ? (outcome as RunResult).stopReason === 'cancelled' && logged.stopRequest?.reason === REASON
      : outcome instanceof Error && outcome.name === 'AbortError');
  if (!ok) throw new Error(`bench run ended ${JSON.stringify(logged)} settling with ${String(outcome)}`);
}

/**
 * The mean of `reps` end latencies. With `spread`, the i-th stop is asked `(i + ½) / reps` of a
 * poll period after the run entered its tool: a stop from another process comes at any moment of
 * the holder's poll, and asking right after the run starts would always find the first poll ~200 ms
 * away. (An abort does not wait for a poll: it is asked at once.)
 */
const meanEnd =
  (agent: () => AgentDefinition, end: Ender, reps: number, spread: boolean) => async (): Promise<number> => {
    let sum = 0;
    for (let i = 0; i < reps; i++) {
      const afterMs = spread && end.kind === 'stop' ? ((i + 0.5) * STOP_POLL_MS) / reps : 0;
      sum += await endMs(agent(), { ...end, afterMs });
    }
    return sum / reps;
  };

type StopSetup = {
  readonly holder: RunStore;
  readonly stopper: RunStore;
  readonly label: string;
  readonly reps: number;
  /** Ask at moments spread over a poll period (a store whose holder polls for stops). */
  readonly spread: boolean;
};

/** Figure 1 on one store: a stop and its floor, in a tool that honours its signal and in one that ignores it. */
async function stopLatency(plan: Plan, s: StopSetup): Promise<Row[]> {
  const rows: Row[] = [];
  for (const tool of ['wait', 'stall'] as const) {
    const agent = (): AgentDefinition => toolAgent(s.holder, tool);
    const stop = meanEnd(agent, { kind: 'stop', stopper: s.stopper, afterMs: 0 }, s.reps, s.spread);
    const abort = meanEnd(agent, { kind: 'abort', afterMs: 0 }, s.reps, s.spread);
    const [stopped = [], aborted = []] = await sampleAll([stop, abort], plan);
    const inTool = tool === 'wait' ? 'a tool that honours its signal' : 'a tool that ignores its signal';
    const when = s.spread ? `, asked at ${s.reps} moments spread over the ${STOP_POLL_MS} ms poll` : '';
    rows.push(
      row(
        SECTION,
        `stop latency, run inside ${inTool}, ${s.label}`,
        'ms',
        { a: stopped, b: aborted },
        `from requestStop resolving to run settling cancelled; floor: the caller's abort() to settling; ` +
          `cancelGraceMs ${GRACE_MS}; each sample: the mean of ${s.reps} stop${s.reps === 1 ? '' : 's'}${when}`,
      ),
    );
  }
  return rows;
}

/** Figure 1: InMemoryStore (in-process), FileStore through a second instance on the same directory. */
async function stops(plan: Plan, dir: string): Promise<Row[]> {
  const memory = new InMemoryStore();
  const inMemory = await stopLatency(plan, {
    holder: memory,
    stopper: memory,
    label: 'InMemoryStore',
    reps: 5,
    spread: false,
  });
  const file = await stopLatency(plan, {
    holder: new FileStore({ dir }),
    stopper: new FileStore({ dir }),
    label: 'FileStore, stop asked through a second instance',
    reps: plan.quick ? 1 : 4,
    spread: true,
  });
  return [...inMemory, ...file];
}

/** CPU µs per step of `runs` runs of `n` steps of the bench's standard agent (with a caller's signal or not). */
async function usPerStep(store: RunStore, n: number, runs: number, signal = false): Promise<number> {
  const agent = benchAgent(store, n);
  const requests = Array.from({ length: runs }, () => benchRequest(freshId('step'), n));
  const opts = signal ? { signal: new AbortController().signal } : {};
  const t0 = cpuMs();
  for (const req of requests) {
    const r = await run(agent, req, opts);
    if (r.stopReason !== 'final_answer' || r.steps !== n)
      throw new Error(`bench run ended ${r.stopReason} after ${r.steps} steps`);
  }
  return ((cpuMs() - t0) * 1000) / (n * runs);
}

/**
 * Like `sampleAll`, the order turning each round (whichever goes first after the garbage
 * collection is not always the same): a difference of a few µs a step needs every edge removed.
 */
export async function sampleRotated(fns: readonly (() => Promise<number>)[], plan: Plan): Promise<number[][]> {
  for (let i = 0; i < plan.warmup; i++) for (const fn of fns) await fn();
  const out = fns.map(() => [] as number[]);
  for (let round = 0; round < plan.runs; round++) {
    for (let j = 0; j < fns.length; j++) {
      const k = (round + j) % fns.length;
      collectGarbage();
      out[k]?.push(await (fns[k] as () => Promise<number>)());
    }
  }
  return out;
}

/** The median of the per-round ratios `a[i] / b[i]` (samples of one round were taken under the same load). */
function ratioRow(name: string, a: number[], b: number[]): Row {
  return row(
    SECTION,
    name,
    '×',
    { a: a.map((x, i) => x / (b[i] ?? Number.NaN)), b: null },
    'median of the per-round ratios',
  );
}

/**
 * Figure 2: a step's kernel cost with a lease that can be stopped, against the same store whose
 * lease carries no `lost`; and, beside it, a run with a caller's signal on that store (what else
 * makes a run's waits abortable).
 */
async function perStep(plan: Plan): Promise<Row[]> {
  const n = plan.quick ? 500 : 1_000;
  const runs = plan.quick ? 1 : 8;
  const rounds = plan.quick ? plan.runs : 3 * plan.runs;
  const [lost = [], none = [], signal = []] = await sampleRotated(
    [
      () => usPerStep(new InMemoryStore(), n, runs),
      () => usPerStep(new NoLostStore(), n, runs),
      () => usPerStep(new NoLostStore(), n, runs, true),
    ],
    { ...plan, runs: rounds },
  );
  const N = `N=${n.toLocaleString('en-US')}`;
  const each =
    "CPU time; floor: the same store, its lease without lost, no caller's signal; " +
    `${rounds} samples of ${runs} run${runs === 1 ? '' : 's'}, the order turning each round`;
  return [
    row(
      SECTION,
      `per step, a lease carrying lost (a stop can reach the run), InMemoryStore, ${N}`,
      'µs/step',
      { a: lost, b: none },
      `no caller's signal; ${each}`,
    ),
    ratioRow('per step: a lease carrying lost ÷ a lease without', lost, none),
    row(
      SECTION,
      `per step, a lease without lost and a caller's signal, InMemoryStore, ${N}`,
      'µs/step',
      { a: signal, b: none },
      each,
    ),
    ratioRow("per step: a caller's signal ÷ neither", signal, none),
  ];
}

/** Ms for `reps` forks of `source` at `atStep` into its store, each checked to hold the steps before it. */
async function forkMs(store: RunStore, source: string, atStep: number, reps: number, clock: () => number) {
  const ids = Array.from({ length: reps }, () => freshId('fork'));
  const t0 = clock();
  for (const newRunId of ids) await forkRun(store, source, { atStep, newRunId });
  const ms = clock() - t0;
  const steps = readRunLog(await store.readLog(ids[0] as string)).trajectory.length;
  if (steps !== atStep) throw new Error(`bench fork holds ${steps} steps, not ${atStep}`);
  return ms;
}

/**
 * Ms for copying `reps` logs of the steps before `atStep` through exportRun and importRun into
 * `other` (under their own ids): the logs are forks of `source` made first, not timed, so the
 * floor writes the very records a fork writes.
 */
async function copyMs(s: ForkSetup, source: string): Promise<number> {
  const ids = Array.from({ length: s.reps }, () => freshId('copy'));
  for (const newRunId of ids) await forkRun(s.store, source, { atStep: s.half, newRunId });
  const t0 = s.clock();
  for (const id of ids) await importRun(s.other, id, await exportRun(s.store, id));
  return s.clock() - t0;
}

type ForkSetup = {
  readonly store: RunStore;
  /** A second store of the same kind, the floor's copies go to (importRun keeps the run id). */
  readonly other: RunStore;
  readonly label: string;
  readonly reps: number;
  readonly clock: () => number;
  /** The fork's step: the source has twice as many steps. */
  readonly half: number;
};

/** Figure 3 on one store: fork a 200-step run at step 100, against copying a 100-step log (smaller when quick). */
async function forkCost(plan: Plan, s: ForkSetup): Promise<Row> {
  const source = freshId('source');
  await run(benchAgent(s.store, 2 * s.half), benchRequest(source, 2 * s.half));
  const fork = async (): Promise<number> => (await forkMs(s.store, source, s.half, s.reps, s.clock)) / s.reps;
  const copy = async (): Promise<number> => (await copyMs(s, source)) / s.reps;
  const [forks = [], copies = []] = await sampleAll([fork, copy], plan);
  const how = s.clock === cpuMs ? 'CPU time' : 'elapsed time';
  return row(
    SECTION,
    `forkRun of a ${2 * s.half}-step finished run at step ${s.half}, ${s.label}`,
    'ms/fork',
    { a: forks, b: copies },
    `${how}; into the same store; floor: exportRun + importRun of the same ${s.half}-step log into another ` +
      `store of its kind; each sample: ${s.reps} fork${s.reps === 1 ? '' : 's'}`,
  );
}

/** Figure 3: InMemoryStore (CPU time), FileStore (elapsed time, real fsyncs). */
async function forks(plan: Plan, dir: string): Promise<Row[]> {
  const quick = plan.quick;
  const half = quick ? 10 : 100;
  const memory = { store: new InMemoryStore(), other: new InMemoryStore(), label: 'InMemoryStore' };
  const files = {
    store: new FileStore({ dir }),
    other: new FileStore({ dir: join(dir, 'copies') }),
    label: 'FileStore',
  };
  return [
    await forkCost(plan, { ...memory, reps: quick ? 3 : 20, clock: cpuMs, half }),
    await forkCost(plan, { ...files, reps: quick ? 1 : 3, clock: wallMs, half }),
  ];
}

/** CPU ms of resuming `reps` runs paused on the note's approval (made first, not timed), edited or not. */
async function resumeMs(agent: AgentDefinition, reps: number, edit: boolean): Promise<number> {
  const paused: { runId: string; resultId: string }[] = [];
  for (let i = 0; i < reps; i++) {
    const runId = freshId('approve');
    const r = await run(agent, { runId, goal: 'Note it.' });
    if (r.stopReason !== 'awaiting_input' || !r.pending) throw new Error(`bench run did not pause: ${r.stopReason}`);
    paused.push({ runId, resultId: r.pending.resultId });
  }
  const args = edit ? { arguments: { q: 'edited' } } : {};
  const t0 = cpuMs();
  for (const { runId, resultId } of paused)
    checkNote(await resume(agent, runId, { input: { kind: 'approve', resultId, ...args } }), edit);
  return cpuMs() - t0;
}

/** Throw unless the run ended with its answer, the note written with the arguments approved. */
function checkNote(r: RunResult, edit: boolean): void {
  const observation = r.trajectory[0]?.observation ?? '';
  const wanted = edit ? /^A person changed the arguments[^\n]*\nnoted edited$/ : /^noted proposed$/;
  if (r.stopReason !== 'final_answer' || !wanted.test(observation))
    throw new Error(`bench resume ended ${r.stopReason} observing ${JSON.stringify(observation)}`);
}

/** Figure 4: resume with an edited approval against a plain one; both paths warmed first, as in `subagents`. */
async function edits(plan: Plan): Promise<Row[]> {
  const reps = plan.quick ? 10 : 50;
  const resumes = (n: number, edit: boolean) => async (): Promise<number> =>
    ((await resumeMs(toolAgent(new InMemoryStore(), 'note'), n, edit)) * 1000) / n;
  const warm = plan.quick ? 0 : 200;
  if (warm > 0) {
    await resumes(warm, true)();
    await resumes(warm, false)();
  }
  const [edited = [], plain = []] = await sampleAll([resumes(reps, true), resumes(reps, false)], plan);
  return [
    row(
      SECTION,
      'resume with an approval that edits the arguments, until the run ends, InMemoryStore',
      'µs/resume',
      { a: edited, b: plain },
      'CPU time, instant model; floor: the same run approved as proposed; ' +
        `each sample: ${reps} resumes after ${warm} of each unsampled`,
    ),
  ];
}

/** Section `control`: stop latency, per-step cost of a stoppable lease, fork, edit on approval. */
export async function control(plan: Plan): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-control-'));
  try {
    return [...(await stops(plan, dir)), ...(await perStep(plan)), ...(await forks(plan, dir)), ...(await edits(plan))];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
