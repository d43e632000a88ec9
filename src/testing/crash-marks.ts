/**
 * The marks half of the crash law: every driver the story starts is watched, and the `resumed`
 * records it leaves must say where it took the run over (docs/log-format.md). A driver that carries
 * the run on writes exactly one, first (an `upgrade` record aside), holding the step it carries on
 * and how that step goes on as `readRunLog` of the log it found says; a driver that carries nothing
 * on (a fresh run, an ended run, a run awaiting input resumed without a reply) writes none. A
 * driver a crash stopped may have written its mark or not, but nothing before it. Internal to the
 * test kit.
 * @module
 */
import { readRunLog } from '../core/index.ts';
import type { InputReply, LogRecord, ResumedRecord, RunLogView, RunResult, RunStore } from '../core/index.ts';

/** One driver the story starts: a fresh `run`, or a `resume` (with the reply it carries, if any). */
export type Takeover = { readonly mode: 'run' | 'resume'; readonly input: InputReply | undefined };

/** Whether a driver of `how`, finding `view` on a store that can write marks, carries the run on. */
function carriesOn(view: RunLogView, how: Takeover): boolean {
  if (how.mode === 'run' || view.state === 'not_started' || view.ended !== null) return false;
  return view.pending === null || how.input !== undefined;
}

/** What is wrong with the records a driver added, or null. */
function takeoverProblem(
  found: readonly LogRecord[],
  added: readonly LogRecord[],
  how: Takeover,
  crashed: boolean,
  marks: boolean,
): string | null {
  const view = readRunLog(found);
  const who = `the ${how.mode}${how.input ? ` with reply ${how.input.kind}` : ''} of a log of ${found.length} records`;
  const written = added.filter((r): r is ResumedRecord => r.kind === 'resumed');
  if (!marks || !carriesOn(view, how)) {
    return written.length === 0 ? null : `${who} carried nothing on, yet wrote ${written.length} resumed records`;
  }
  if (written.length > 1) return `${who} wrote ${written.length} resumed records, not one`;
  const first = added.find((r) => r.kind !== 'upgrade');
  if (first === undefined) return crashed ? null : `${who} carried the run on without a resumed record`;
  if (first.kind !== 'resumed') return `${who} wrote ${first.kind} before its resumed record`;
  const stepIndex = view.inFlight?.stepIndex ?? view.trajectory.length;
  const resolution = view.inFlight?.resolution ?? null;
  if (first.stepIndex !== stepIndex || first.resolution !== resolution) {
    const got = `step ${first.stepIndex}, ${first.resolution ?? 'null'}`;
    return `${who} marked ${got}, not step ${stepIndex}, ${resolution ?? 'null'}`;
  }
  return null;
}

/**
 * What is wrong with the marks of a log no watched driver wrote (a sub-agent's child run, driven by
 * its parent's action), or null: each must say what `readRunLog` of the records before it says — the
 * step a driver would carry on and how.
 */
export function misplacedMark(log: readonly LogRecord[]): string | null {
  for (const [i, rec] of log.entries()) {
    if (rec.kind !== 'resumed') continue;
    const view = readRunLog(log.slice(0, i));
    const stepIndex = view.inFlight?.stepIndex ?? view.trajectory.length;
    const resolution = view.inFlight?.resolution ?? null;
    if (rec.stepIndex !== stepIndex || rec.resolution !== resolution) {
      const got = `step ${rec.stepIndex}, ${rec.resolution ?? 'null'}`;
      return `record ${i + 1} marks ${got}, not step ${stepIndex}, ${resolution ?? 'null'}`;
    }
  }
  return null;
}

/**
 * Start one driver with `call` and check the marks it left, pushing what is wrong to `problems`.
 * The log is read before and after through `store` (whatever wrapper it is, reads pass through);
 * the driver's result or failure is passed on unchanged.
 */
export async function watchTakeover(
  store: RunStore,
  runId: string,
  how: Takeover,
  problems: string[],
  call: () => Promise<RunResult>,
): Promise<RunResult> {
  const found = await store.readLog(runId);
  let crashed = false;
  try {
    return await call();
  } catch (e) {
    crashed = true;
    throw e;
  } finally {
    // What the driver did or threw stands; a log that cannot be read back is a problem of its own.
    try {
      const added = (await store.readLog(runId)).slice(found.length);
      const problem = takeoverProblem(found, added, how, crashed, typeof store.resumed === 'function');
      if (problem !== null) problems.push(problem);
    } catch (e) {
      problems.push(`the log could not be read back after a driver: ${String(e)}`);
    }
  }
}
