/**
 * The power-loss crash-state explorer (ALICE / CrashMonkey style): trace one uninterrupted run of
 * the power agent on FileStore under `strace -f`, build every on-disk state a power cut could
 * leave (`crash-states.ts`), materialise each distinct one in a fresh directory, resume it in
 * process with the same agent, and check the recovery properties (`check.ts`). Shared by
 * `power-loss.test.ts` and `npm run fuzz:power`.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import type { LogRecord, RunResult } from '../../../../src/core/index.ts';
import { FileStore } from '../../../../src/platform-node/index.ts';
import { checkState } from './check.ts';
import type { StateOutcome } from './check.ts';
import { crashStates } from './crash-states.ts';
import type { CrashState } from './crash-states.ts';
import { POWER_RUN_ID } from './power-agent.ts';
import type { PowerModelPolicy } from './power-agent.ts';
import { parseTrace, traceRun } from './trace.ts';
import type { TraceEvent } from './trace.ts';

/** Whether strace can trace a child here (installed, and ptrace allowed in this container). */
export function straceWorks(): boolean {
  return spawnSync('strace', ['-f', '-e', 'trace=none', '-o', '/dev/null', 'true'], { stdio: 'ignore' }).status === 0;
}

/** What one exploration runs. */
export type ExploreOptions = {
  /** Steps of the traced run (the last a final answer). */
  readonly steps: number;
  readonly modelPolicy: PowerModelPolicy;
  /** The negative control: barriers written without fsync; the explorer must report violations. */
  readonly lazy?: boolean;
  /** Resumes in flight at once (in this process). Default 4. */
  readonly concurrency?: number;
};

/** What the traced run did, uninterrupted: the reference every resume is held to. */
export type Reference = {
  readonly steps: number;
  readonly modelPolicy: PowerModelPolicy;
  readonly result: RunResult;
  readonly log: readonly LogRecord[];
  readonly world: readonly string[];
  readonly calls: ReadonlyMap<number, string>;
};

/** The figures of one exploration. */
export type ExploreReport = {
  readonly events: number;
  readonly fsEvents: number;
  readonly fsyncs: number;
  readonly cuts: number;
  readonly states: number;
  readonly distinct: number;
  readonly reference: Reference;
  readonly outcomes: readonly StateOutcome[];
};

const CHILD_SOURCE = resolve(import.meta.dirname, 'power-child.ts');

/** Bundle the child into one .mjs, so strace sees node and our code, not a TypeScript loader. */
async function bundleChild(dir: string): Promise<string> {
  const path = join(dir, 'power-child.mjs');
  await build({
    entryPoints: [CHILD_SOURCE],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: path,
    logLevel: 'warning',
  });
  return path;
}

/** Run the child once under strace; its events and the reference it set. */
export async function traceReference(
  work: string,
  opts: ExploreOptions,
): Promise<{ readonly events: TraceEvent[]; readonly reference: Reference }> {
  const child = await bundleChild(work);
  const root = join(work, 'fs');
  await mkdir(root);
  const layout = { root, world: join(work, 'world.txt'), acks: join(work, 'acks.txt') };
  const argv = [
    process.execPath,
    child,
    join(root, 'store'),
    layout.world,
    layout.acks,
    String(opts.steps),
    opts.modelPolicy,
    ...(opts.lazy ? ['lazy'] : []),
  ];
  const { trace, stdout } = await traceRun(argv, join(work, 'trace.txt'));
  const resultLine = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!resultLine) throw new Error(`traced run printed no result: ${stdout.slice(0, 500)}`);
  const calls = new Map(
    [...stdout.matchAll(/^CALL (\d+) ([0-9a-f]+)$/gm)].map((m) => [Number(m[1]), m[2] as string] as const),
  );
  const log = await new FileStore({ dir: join(root, 'store') }).readLog(POWER_RUN_ID);
  const world = (await readFile(layout.world, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
  const reference = {
    steps: opts.steps,
    modelPolicy: opts.modelPolicy,
    result: JSON.parse(resultLine.slice('RESULT '.length)) as RunResult,
    log,
    world,
    calls,
  };
  return { events: parseTrace(trace, layout), reference };
}

/**
 * How many records the acks before the cut promise durable: through the last acknowledged
 * barrier (`isBarrier`, as the child marks each ack). A safe model-call intent, a result or
 * `run_started` acknowledged after it may still be lost: it becomes durable with the next barrier.
 */
export function ackedBarrierRecords(acks: readonly string[]): number {
  let n = 0;
  for (const a of acks) {
    const m = /^ACK (\d+) \w+ barrier$/.exec(a);
    if (m) n = Math.max(n, Number(m[1]) + 1);
  }
  return n;
}

function stateKey(s: CrashState): string {
  const h = createHash('sha256');
  for (const d of s.dirs) h.update(`D ${d}\n`);
  for (const [f, bytes] of s.files) h.update(`F ${f} ${bytes.length}\n`).update(bytes);
  return h.update('W\n').update(s.world).digest('hex');
}

/** Every distinct state over every cut, each with the most barrier records acknowledged at any cut that left it. */
export function distinctStates(events: readonly TraceEvent[]): {
  readonly states: number;
  readonly distinct: Map<string, { state: CrashState; acked: number }>;
} {
  const distinct = new Map<string, { state: CrashState; acked: number }>();
  let states = 0;
  for (let cut = 0; cut <= events.length; cut++) {
    for (const state of crashStates(events, cut)) {
      states++;
      const key = stateKey(state);
      const acked = ackedBarrierRecords(state.acks);
      const seen = distinct.get(key);
      // Acks only grow with the cut: checking against the most ever acknowledged covers every cut.
      if (!seen || seen.acked < acked) distinct.set(key, { state, acked });
    }
  }
  return { states, distinct };
}

/** Write a state under `dir` (`fs/…` and `world.txt`); files get an old mtime, as after a reboot. */
export async function materialise(
  state: CrashState,
  dir: string,
): Promise<{ readonly storeDir: string; readonly world: string }> {
  const root = join(dir, 'fs');
  for (const d of state.dirs) await mkdir(join(root, d), { recursive: true });
  const past = new Date(Date.now() - 3_600_000);
  for (const [f, bytes] of state.files) {
    await writeFile(join(root, f), bytes);
    await utimes(join(root, f), past, past);
  }
  const world = join(dir, 'world.txt');
  await writeFile(world, state.world);
  return { storeDir: join(root, 'store'), world };
}

/** Trace, enumerate, materialise and resume every distinct state; the figures and each outcome. */
export async function explore(
  opts: ExploreOptions,
  onOutcome?: (o: StateOutcome, i: number, total: number) => void,
): Promise<ExploreReport> {
  const work = await mkdtemp(join(tmpdir(), 'polyloop-power-'));
  try {
    const { events, reference } = await traceReference(work, opts);
    const { states, distinct } = distinctStates(events);
    const todo = [...distinct.values()];
    const outcomes: StateOutcome[] = new Array(todo.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < todo.length; i = next++) {
        const { state, acked } = todo[i] as { state: CrashState; acked: number };
        const dir = await mkdtemp(join(work, 'state-'));
        try {
          const paths = await materialise(state, dir);
          outcomes[i] = await checkState({ ...paths, reference, acked, cut: state.cut });
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
        onOutcome?.(outcomes[i] as StateOutcome, i, todo.length);
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker));
    return {
      events: events.length,
      fsEvents: events.filter((e) => e.kind !== 'ack' && e.kind !== 'world').length,
      fsyncs: events.filter((e) => e.kind === 'fsync' || e.kind === 'fsyncDir').length,
      cuts: events.length + 1,
      states,
      distinct: distinct.size,
      reference,
      outcomes,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Counts of a report's outcomes, for docs/reliability.md. */
export function tally(report: ExploreReport): Record<string, number> {
  const o = report.outcomes;
  return {
    'events recorded': report.events,
    'fs operations': report.fsEvents,
    'fsyncs (file + dir)': report.fsyncs,
    'cut points': report.cuts,
    'states generated': report.states,
    'distinct states': report.distinct,
    'resumed to the end': o.filter(
      (x) => x.stopReason !== null && x.stopReason !== 'in_flight_unknown' && x.stopReason !== 'cancelled',
    ).length,
    'settled: executed (the record happened)': o.filter((x) => x.settled.includes('executed')).length,
    'settled: retry (it did not happen)': o.filter((x) => x.settled.includes('retry')).length,
    'settled: cancel (a model call the world saw)': o.filter((x) => x.settled.includes('cancel')).length,
    'ended in_flight_unknown': o.filter((x) => x.stopReason === 'in_flight_unknown').length,
    'started afresh (no run_started survived)': o.filter((x) => x.startedFresh).length,
    'tail repaired by FileStore': o.filter((x) => x.repaired).length,
    'states with violations': o.filter((x) => x.problems.length > 0).length,
  };
}
