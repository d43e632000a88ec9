/**
 * What a run object tells the run index, and the telling: a pure mapping of the run row and the
 * one reading of the log to a status, and one RPC that never throws (a failure is logged and
 * reported as false, so the caller keeps its alarm and tries again).
 * @module
 */
import type { RunLogView } from '../core/index.ts';
import { RUN_INDEX_NAME } from './run-index.ts';
import type { RunIndex, RunReport } from './run-index.ts';
import type { RunRow } from './run-row.ts';
import { statusOf } from './run-status.ts';

/** The run index binding's namespace, as `createRunObject` and `createApp` take it. */
export type RunIndexNamespace = DurableObjectNamespace<RunIndex>;

/** The index's RPC methods as the run object and the app call them (spelled out, as for the run object). */
export type RunIndexRpc = Pick<RunIndex, 'record' | 'list'>;

/** The one index object of a namespace. */
export function runIndexStub(ns: RunIndexNamespace): RunIndexRpc {
  return ns.get(ns.idFromName(RUN_INDEX_NAME)) as unknown as RunIndexRpc;
}

/**
 * The status to report, as `GET /runs/:id` would answer it (without its side effects): `halted`
 * when the log cannot be read or the run row says so and the run has not ended; otherwise what
 * the log says.
 */
export function reportOf(
  meta: RunRow,
  reading: { readonly view: RunLogView } | { readonly unreadable: string },
  at: number,
): RunReport {
  if ('unreadable' in reading || (meta.halted !== null && reading.view.state !== 'ended')) {
    return { runId: meta.runId, status: 'halted', stopReason: null, at };
  }
  const { status, stopReason } = statusOf(meta.runId, reading.view);
  return { runId: meta.runId, status, stopReason, at };
}

/** Record `report` in the index; false (and a logged error) when the index could not be reached or refused it. */
export async function tellIndex(ns: RunIndexNamespace, report: RunReport): Promise<boolean> {
  try {
    await runIndexStub(ns).record(report);
    return true;
  } catch (e) {
    console.error(
      `polyloop: run ${JSON.stringify(report.runId)} could not be recorded as ${report.status} ` +
        'in the run index (retried later):',
      e,
    );
    return false;
  }
}

/**
 * The reports of one run object instance: each sent only when the status differs from the one
 * this instance told last, one at a time and in order (so a late `running` cannot overtake an
 * `awaiting_input`; `ended` is final in the index anyway).
 */
export class IndexReporter {
  readonly #index: () => RunIndexNamespace | undefined;
  readonly #current: () => RunReport | null;
  #reported: RunReport['status'] | null = null;
  #chain: Promise<boolean> = Promise.resolve(true);

  /**
   * `index`: the binding, or undefined (then nothing is reported); `current`: the run's status now, null without a run.
   */
  constructor(index: () => RunIndexNamespace | undefined, current: () => RunReport | null) {
    this.#index = index;
    this.#current = current;
  }

  /**
   * Tell the index the run's status now; true when it was told (or need not be), false when that failed. Never rejects.
   */
  report(): Promise<boolean> {
    const ns = this.#index();
    if (ns === undefined) return Promise.resolve(true);
    this.#chain = this.#chain
      .then(async () => {
        const report = this.#current();
        if (report === null || report.status === this.#reported) return true;
        const told = await tellIndex(ns, report);
        if (told) this.#reported = report.status;
        return told;
      })
      .catch((e: unknown) => {
        // The run's status could not be read (a store failure): as with an unreachable index, the alarm tries again.
        console.error('polyloop: the run index report failed:', e);
        return false;
      });
    return this.#chain;
  }
}
