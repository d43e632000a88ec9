/**
 * The crash law of sub-agents under two crashes, one in each run (docs/design/laws.md#sub-agents):
 * a process dies at a write of the parent (or of the child), the next one at a write of the other
 * run, and a third resumes to the end — with the scenarios of sub-agents-law.ts. A person answers
 * every request, a settlement from what the case's world shows; every end must be the uninterrupted
 * one, parent and child, and each approved note happen exactly once.
 */
import { InMemoryStore, innermostRequest, isPolyLoopError, resume, run } from '../../src/core/index.ts';
import type { AgentDefinition, LogRecord, RunRequest, RunResult, RunStore } from '../../src/core/index.ts';
import { interceptWrites } from '../../src/testing/faulty-store.ts';
import { SimulatedCrashError } from '../../src/testing/index.ts';
import { CHILD_RUN, PARENT_RUN, SCENARIOS, subAgentReply, subAgentSetup, worldProblems } from './sub-agents-law.ts';
import type { Scenario, SubAgentOptions } from './sub-agents-law.ts';

/** Whose writes a crash counts: the parent's run, or its child's. */
type Whose = 'parent' | 'child';
const whoseIs = (runId: string): Whose => (runId === PARENT_RUN ? 'parent' : 'child');

/**
 * `inner` as a process that dies at the `after`-th write of `whose` run sees it: that write is lost
 * (or lands, `landed`) and rejects, as does every write after it, the other run's too.
 */
function crashingAt(inner: RunStore, whose: Whose, after: number, landed: boolean): RunStore {
  let seen = 0;
  let crashed = false;
  return interceptWrites(inner, async (method, runId, _records, doWrite) => {
    if (!crashed && whoseIs(runId) === whose && seen++ === after) {
      crashed = true;
      if (landed) await doWrite();
    }
    if (crashed) throw new SimulatedCrashError(`simulated crash before ${method} of ${runId}`);
    await doWrite();
  });
}

/** Counts the writes of each run that land. */
function counting(inner: RunStore): { readonly store: RunStore; readonly writes: Record<Whose, number> } {
  const writes = { parent: 0, child: 0 };
  const store = interceptWrites(inner, async (_method, runId, _records, doWrite) => {
    await doWrite();
    writes[whoseIs(runId)]++;
  });
  return { store, writes };
}

/** One world and its store, and the person's settlements in it. */
type Case = { readonly inner: RunStore; readonly world: string[]; settled: number };

/**
 * One process lifetime over `store`: start the parent (resume it when `inner` holds its log), answer
 * every request with the scenario's person — a fresh setup per call, as a new request handler
 * builds it — to the end; a crash is returned, not thrown.
 */
async function lifetime(c: Case, store: RunStore, opts: SubAgentOptions): Promise<RunResult | Error> {
  const person = subAgentReply(() => c.world);
  const setup = (): { agent: AgentDefinition; request: RunRequest } => subAgentSetup(store, () => c.world, opts);
  try {
    const s = setup();
    let r =
      (await c.inner.readLog(PARENT_RUN)).length > 0 ? await resume(s.agent, s.request) : await run(s.agent, s.request);
    while (r.pending) {
      if (innermostRequest(r.pending).kind === 'settle') c.settled++;
      const again = setup();
      r = await resume(again.agent, again.request, { input: person(r.pending) });
    }
    return r;
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** What the double crashes found: how many pairs ran, how many settlements a person gave, and what differed. */
export type DoubleCrashResult = {
  readonly writes: Record<Whose, number>;
  readonly pairs: number;
  readonly settled: number;
  readonly problems: readonly string[];
};

/** A run's step records and end, timestamps aside: what two runs' logs must share. */
const trace = (log: readonly LogRecord[]): string =>
  JSON.stringify(
    log.flatMap((r): object[] => {
      if (r.kind === 'step') return [{ ...r.step, startedAt: '', endedAt: '' }];
      return r.kind === 'run_ended' ? [{ ...r, endedAt: '', eventDeliveryFailures: 0 }] : [];
    }),
  );

/**
 * How many writes of each run the scenario's uninterrupted run makes (over a fresh InMemoryStore):
 * a store that must make its cases ahead (a schema each) makes `2 × (parent + child) + 1` for the law.
 */
export async function subAgentsWrites(opts: SubAgentOptions): Promise<Record<Whose, number>> {
  const c: Case = { inner: new InMemoryStore(), world: [], settled: 0 };
  const count = counting(c.inner);
  const end = await lifetime(c, count.store, opts);
  if (end instanceof Error) throw new Error(`the uninterrupted run failed: ${end.message}`);
  return count.writes;
}

/** Options of {@link subAgentsDoubleCrash}. */
export type DoubleCrashOptions = SubAgentOptions & {
  /** A fresh, empty store for one case. */
  readonly newStore: () => RunStore | Promise<RunStore>;
  /** Only the pairs whose `k1 + k2` is a multiple of it (default 1: every pair). */
  readonly stride?: number;
  /** Only the first crashes at a k1 that is a multiple of it (default 1: every write of each run). */
  readonly every?: number;
};

/**
 * The scenario crashed twice, one crash in each run: at the k1-th write of one run (parent or
 * child), then at the k2-th write of the other in the resume that follows, then resumed to the end.
 * Every k1 of the uninterrupted run (or every `every`-th), lost and landed; every k2 of that resume
 * (past its last write the resume ends, and the pairs of that k1 with it) whose `k1 + k2` is a
 * multiple of `stride`, landed on alternate k2. Each end must be the uninterrupted one, parent and
 * child, and each approved note happen exactly once.
 */
export async function subAgentsDoubleCrash(opts: DoubleCrashOptions): Promise<DoubleCrashResult> {
  const fresh = async (): Promise<Case> => ({ inner: await opts.newStore(), world: [], settled: 0 });
  const ref = await fresh();
  const count = counting(ref.inner);
  const end = await lifetime(ref, count.store, opts);
  if (end instanceof Error) throw new Error(`the uninterrupted run failed: ${end.message}`);
  const want = { parent: trace(await ref.inner.readLog(PARENT_RUN)), child: trace(await ref.inner.readLog(CHILD_RUN)) };
  const stride = opts.stride ?? 1;
  const found = { pairs: 0, settled: 0, problems: [] as string[] };
  for (const [first, second] of [
    ['parent', 'child'],
    ['child', 'parent'],
  ] as const) {
    for (let k1 = 0; k1 < count.writes[first]; k1 += opts.every ?? 1) {
      for (const lands1 of [false, true]) {
        for (let k2 = (stride - (k1 % stride)) % stride; ; k2 += stride) {
          const lands2 = lands1 !== (k2 % 2 === 1);
          const c = await fresh();
          const crashes = [
            await lifetime(c, crashingAt(c.inner, first, k1, lands1), opts),
            await lifetime(c, crashingAt(c.inner, second, k2, lands2), opts),
          ];
          const last = await lifetime(c, c.inner, opts);
          const where = `crash at ${writeAt(first, k1, lands1)}, then at ${writeAt(second, k2, lands2)}`;
          const problems = await pairProblems(c, crashes, last, want, SCENARIOS[opts.scenario]);
          found.problems.push(...problems.map((p) => `${where}: ${p}`));
          // Past the resume's last write of the other run it ended (or failed otherwise, a problem
          // already): the pairs of this k1 end there.
          if (!isPolyLoopError(crashes[1], 'store_error')) break;
          found.pairs++;
          found.settled += c.settled;
        }
      }
    }
  }
  return { writes: count.writes, ...found };
}

const writeAt = (whose: Whose, k: number, lands: boolean): string => `${whose} write ${k}${lands ? ' (landed)' : ''}`;
const describe = (e: RunResult | Error): string => (e instanceof Error ? e.message : `it ended ${e.stopReason}`);

/** What a pair of crashes and the resume after them did against the uninterrupted run. */
async function pairProblems(
  c: Case,
  crashes: readonly (RunResult | Error)[],
  last: RunResult | Error,
  want: { readonly parent: string; readonly child: string },
  s: Scenario,
): Promise<string[]> {
  const problems: string[] = [];
  const [first, second] = crashes;
  // A crash is a store failure, as the run reports it; the second may find no write left to crash at.
  if (!isPolyLoopError(first, 'store_error')) problems.push(`the first attempt did not crash: ${describe(first!)}`);
  if (second instanceof Error && !isPolyLoopError(second, 'store_error'))
    problems.push(`the second attempt failed: ${describe(second)}`);
  if (last instanceof Error) return [...problems, `the last resume failed: ${describe(last)}`];
  if (trace(await c.inner.readLog(PARENT_RUN)) !== want.parent) problems.push("the parent's log differs");
  if (trace(await c.inner.readLog(CHILD_RUN)) !== want.child) problems.push("the child's log differs");
  problems.push(...worldProblems(s, [c.world]));
  return problems;
}
