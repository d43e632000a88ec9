/**
 * A person in control of a run from the viewer: stop it, or fork it from a step. The bodies of
 * `POST /runs/:id/stop` and `POST /runs/:id/fork`, checked as the Worker checks them (one page
 * talks to both), and what a directory viewer does with them: the library's `requestStop` and
 * `forkRun` on the FileStore it shows. Neither runs any of the user's code, so neither needs the
 * agent module, as `polyloop stop` and `polyloop fork` need none (decision 0077); with the agent,
 * a stopped run that no process drives is ended at once instead of at its next resume.
 * @module
 */
import { forkRun, isPolyLoopError, requestStop } from '../../core/index.ts';
import type { StopRequest } from '../../core/index.ts';
import { checkOptionKeys } from '../../core/internal-entry.ts';
import type { ForkBody, ForkCreated, StopAnswer, StopBody } from '../../core/internal-entry.ts';
import type { FileStore } from '../../platform-node/file-store.ts';
import type { LogReading } from './view-model.ts';
import type { ViewAnswer } from './view-source.ts';

/**
 * A new run's id: what a Worker accepts (1–200 of `[A-Za-z0-9._:-]`, not `.` or `..`), so a
 * fork made from one page can be made from the other, and its id goes in a URL as it is.
 */
const NEW_RUN_ID = /^[A-Za-z0-9._:-]{1,200}$/;

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The stop `raw` asks for, or the problem with it (not an object, an unknown key, a reason not a string). */
export function stopBody(raw: unknown): StopBody | string {
  try {
    checkOptionKeys(raw, { reason: true }, 'a stop');
  } catch (e) {
    return errorText(e);
  }
  const { reason } = raw as { reason?: unknown };
  if (reason !== undefined && typeof reason !== 'string') return 'a stop: reason must be a string when given';
  return reason === undefined ? {} : { reason };
}

/** The fork `raw` asks for, or the problem with it. */
export function forkBody(raw: unknown): ForkBody | string {
  try {
    checkOptionKeys(raw, { atStep: true, newRunId: true }, 'a fork');
  } catch (e) {
    return errorText(e);
  }
  const { atStep, newRunId } = raw as { atStep?: unknown; newRunId?: unknown };
  if (typeof atStep !== 'number' || !Number.isSafeInteger(atStep) || atStep < 0)
    return 'a fork: atStep must be a step number (an integer, 0 or more)';
  if (typeof newRunId !== 'string' || !NEW_RUN_ID.test(newRunId) || newRunId === '.' || newRunId === '..')
    return 'a fork: newRunId must be 1 to 200 characters of A-Z, a-z, 0-9, ".", "_", ":" and "-" (not "." or "..")';
  return { atStep, newRunId };
}

/** What a directory viewer lends a stop or a fork of one run. */
export type ControlContext = {
  readonly dir: string;
  readonly runId: string;
  readonly store: FileStore;
  /** The run's log as it stands now (read again after a write). */
  readonly read: () => Promise<LogReading | null>;
  /** The live process that holds the run's lock, or null. */
  readonly driverPid: () => Promise<number | null>;
  /**
   * With the agent: resume the run, which ends a stopped run no one drives at once (its only write
   * is `run_ended`). Resolves whether it ended it; null without the agent.
   */
  readonly endNow: (() => Promise<boolean>) | null;
};

/** Ask the run to stop (`requestStop`): 202 with what happens now, 200 for a run that had ended. */
export async function stopInDir(ctx: ControlContext, body: StopBody): Promise<ViewAnswer> {
  const id = JSON.stringify(ctx.runId);
  try {
    await requestStop(ctx.store, ctx.runId, body.reason);
  } catch (e) {
    if (isPolyLoopError(e, 'run_not_found')) return { status: 404, message: `no run ${id}` };
    // A reason over its limit: nothing was written.
    if (isPolyLoopError(e, 'invalid_request')) return { status: 400, message: errorText(e) };
    if (isPolyLoopError(e, 'corrupt_log')) return { status: 409, message: `run ${id} cannot be read: ${errorText(e)}` };
    throw e;
  }
  const stopRequest: StopRequest = body.reason === undefined ? {} : { reason: body.reason };
  const ended = (await ctx.read())?.view.ended ?? null;
  // requestStop does nothing to an ended run: say so, rather than claim a stop — unless this stop ended it.
  if (ended && ended.stopRequest === undefined) {
    const message = `run ${id} has already ended (${ended.stopReason}): nothing to stop`;
    const answer: StopAnswer = { runId: ctx.runId, requested: false, stopReason: ended.stopReason, message };
    return { status: 200, message, body: answer };
  }
  const message = ended ? `run ${id} ended cancelled` : await whatHappens(ctx);
  const answer: StopAnswer = { runId: ctx.runId, requested: true, stopRequest, message };
  return { status: 202, message, body: answer };
}

/** Who ends a stopped run, and when: its driver within a second, this viewer now, or its next resume. */
async function whatHappens(ctx: ControlContext): Promise<string> {
  const pid = await ctx.driverPid();
  if (pid !== null) return `its driver (process ${pid}) ends it cancelled within a second`;
  if (ctx.endNow !== null && (await ctx.endNow())) return 'no process drove it: this viewer ended it cancelled now';
  return 'no process drives it now: it ends cancelled at its next resume, before any model call or action';
}

/** Fork the run at a step (`forkRun`) into a new run of the same directory: 201 with its URL. */
export async function forkInDir(ctx: ControlContext, body: ForkBody): Promise<ViewAnswer> {
  const { atStep, newRunId } = body;
  try {
    await forkRun(ctx.store, ctx.runId, { atStep, newRunId });
  } catch (e) {
    if (isPolyLoopError(e, 'run_not_found')) return { status: 404, message: `no run ${JSON.stringify(ctx.runId)}` };
    if (isPolyLoopError(e, 'run_exists')) {
      const message = `run ${JSON.stringify(newRunId)} already has a log in ${ctx.dir}: nothing was forked`;
      return { status: 409, message };
    }
    // A step past the run's end, a step a fork cannot take over, the source's own id: the library's words.
    if (isPolyLoopError(e, 'invalid_request') || isPolyLoopError(e, 'corrupt_log'))
      return { status: 409, message: errorText(e) };
    throw e;
  }
  const created: ForkCreated = {
    runId: newRunId,
    url: `/runs/${encodeURIComponent(newRunId)}`,
    forkedFrom: { runId: ctx.runId, atStep },
  };
  return { status: 201, message: `forked into run ${JSON.stringify(newRunId)}`, body: created };
}
