/**
 * `polyloop stop` and `polyloop fork` (docs/cli.md): a person in control of a FileStore run from
 * a terminal — ask whichever process drives it to stop, or start a new run from one of its steps.
 * Both go through the library's own `requestStop` and `forkRun`; the CLI only says what happened.
 * @module
 */
import { forkRun, isPolyLoopError, readRunLog, requestStop } from '../core/index.ts';
import { FileStore } from '../platform-node/file-store.ts';
import { livePid, requireDirectory } from '../platform-node/store-dir.ts';
import { EXIT, oneLine, stateLine } from './render.ts';
import type { CliIo } from './render.ts';

/** A step number as `polyloop show` prints it (`#3` is step 3): digits only. */
const STEP = /^\d{1,15}$/;

/** Ask the run to stop; says whether a live driver holds it now or the next resume ends it. */
export async function stopCommand(dir: string, runId: string, reason: string | undefined, io: CliIo): Promise<number> {
  await requireDirectory(dir);
  const store = new FileStore({ dir, onWarning: (w) => io.err(`${oneLine(`polyloop: note: ${w.message}`)}\n`) });
  const refused = await known(
    () => requestStop(store, runId, reason),
    (e) => {
      if (isPolyLoopError(e, 'run_not_found')) return noRun(dir, runId, io);
      // A reason over its limit: nothing was written.
      if (isPolyLoopError(e, 'invalid_request')) return usage(io, (e as Error).message);
      return null;
    },
  );
  if (refused !== null) return refused;
  const view = readRunLog(await store.readLog(runId));
  const id = JSON.stringify(runId);
  if (view.ended) {
    // requestStop does nothing to an ended run: say so, rather than claim a stop.
    io.out(`${oneLine(`run ${id} has already ${stateLine(view, null)}: nothing to stop`)}\n`);
    return EXIT.ok;
  }
  const pid = await livePid(store.logPath(runId));
  const why = reason === undefined ? '' : ` (reason: ${reason})`;
  const next =
    pid === null
      ? 'no process drives it now: it ends cancelled at its next resume, before any model call or action'
      : `its driver (pid ${pid}) ends it cancelled within a second`;
  io.out(`${oneLine(`asked run ${id} to stop${why}; ${next}`)}\n`);
  return EXIT.ok;
}

/** Fork `runId` at `step` into `newRunId` in the same directory; says what the fork holds. */
export async function forkCommand(
  dir: string,
  runId: string,
  step: string,
  newRunId: string,
  io: CliIo,
): Promise<number> {
  if (!STEP.test(step))
    return usage(io, `the step to fork at must be a step number (0, 1, … as polyloop show numbers them), not ${step}`);
  await requireDirectory(dir);
  const store = new FileStore({ dir, onWarning: (w) => io.err(`${oneLine(`polyloop: note: ${w.message}`)}\n`) });
  const atStep = Number(step);
  const refused = await known(
    () => forkRun(store, runId, { atStep, newRunId }),
    (e) => {
      if (isPolyLoopError(e, 'run_not_found')) return noRun(dir, runId, io);
      if (isPolyLoopError(e, 'run_exists')) {
        const what = `run ${JSON.stringify(newRunId)} already has a log in ${dir}; nothing was forked`;
        io.err(`${oneLine(`polyloop: ${what}`)}\n`);
        return EXIT.notFound;
      }
      // A step past the run's end, or one a fork cannot take over: the argument is wrong.
      if (isPolyLoopError(e, 'invalid_request')) return usage(io, (e as Error).message);
      return null;
    },
  );
  if (refused !== null) return refused;
  const view = readRunLog(await store.readLog(newRunId));
  const copied = atStep === 0 ? 'no step copied' : `steps 0–${atStep - 1} copied`;
  io.out(
    `${oneLine(
      `forked run ${JSON.stringify(runId)} at step ${atStep} into ${JSON.stringify(newRunId)} ` +
        `(${copied}; ${store.logPath(newRunId)}): ${stateLine(view, null)}`,
    )}\n`,
  );
  io.out(
    `${oneLine(`carry it on with resume(agent, ${JSON.stringify(newRunId)}) in a process whose agent fits it`)}\n`,
  );
  return EXIT.ok;
}

/** Run `fn`; an error `answer` knows becomes its exit code, anything else goes on up (the CLI's handler). */
async function known(fn: () => Promise<void>, answer: (e: unknown) => number | null): Promise<number | null> {
  try {
    await fn();
    return null;
  } catch (e) {
    const code = answer(e);
    if (code === null) throw e;
    return code;
  }
}

function noRun(dir: string, runId: string, io: CliIo): number {
  io.err(`${oneLine(`polyloop: no run ${JSON.stringify(runId)} in ${dir} (list them with: polyloop runs ${dir})`)}\n`);
  return EXIT.notFound;
}

function usage(io: CliIo, problem: string): number {
  io.err(`${oneLine(`polyloop: ${problem}`)}\n`);
  return EXIT.usage;
}
