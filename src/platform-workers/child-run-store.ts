/**
 * Sub-agents on Workers (docs/decisions/0069-sub-agents-on-workers.md): a child run lives in its own
 * run object, `idFromName(<child run id>)`, like any run; its parent's object drives it. The parent's
 * `agentTool` gets a {@link ChildRunStore}, whose every write goes to the child's object over RPC
 * and is durable there before the RPC answers (the object's output gate holds its answer until
 * then), so the parent never goes on past a child's write that could be lost. The child's object
 * checks that each write and read is of its own run, made by its parent.
 * @module
 */
import { CorruptLogError, decodeLog, RunLockedError, StoreError } from '../core/index.ts';
import { AppendLogStore } from '../core/internal-entry.ts';
import type { LogRecord, RunStore } from '../core/index.ts';
import type { LogAppend } from '../core/internal-entry.ts';

/** Why a child's object refused a write or a read (a value: errors lose their class over RPC). */
export type ChildLogRefusal = { readonly refused: string };

/** The child-side methods of a run object, as a parent's object calls them. */
export type ChildLogRpc = {
  appendChildLog(parentRunId: string, write: LogAppend): Promise<ChildLogRefusal | null>;
  childLogLines(parentRunId: string, runId: string): Promise<readonly string[] | ChildLogRefusal>;
};

/** The run objects' namespace (a `DurableObjectNamespace`), as the child store reaches a child's object. */
export type ChildObjects = {
  idFromName(name: string): unknown;
  get(id: never): unknown;
};

/** One step of a child run id: `.s3.action`, or `.s3.a1` for a call of a step with several. */
const CHILD_STEP = /\.s\d+\.(?:action|a\d+)$/;

/** The parent's run id of a child run id `${parent}.${resultId}`, or null when `runId` is none. */
export function parentRunIdOf(runId: string): string | null {
  const m = CHILD_STEP.exec(runId);
  return m === null || m.index === 0 ? null : runId.slice(0, m.index);
}

/** True when `runId` is a child of `root`, or a child of one of its children, and so on. */
function descends(runId: string, root: string): boolean {
  let at: string | null = runId;
  for (;;) {
    at = parentRunIdOf(at);
    if (at === null || at.length < root.length) return false;
    if (at === root) return true;
  }
}

/**
 * The store a run object hands its factory for sub-agents (`RunSetupContext.childStore`): the
 * runs it writes and reads are children of the object's own run (and their children), each in
 * its own object of `objects`. Without `objects` (no `runs` option on `createRunObject`) every
 * call fails with a `StoreError` saying so. A run id that is no descendant of the own run is a
 * `RunLockedError`: this object drives no other run.
 *
 * It has no `acquire` and no `requestStop` (so `requestStop` on it is refused as a store that keeps
 * no stop requests): a child run is driven only inside its parent's drive, which holds the parent's
 * lease, and a stop of the parent reaches the child through the signal the parent hands its tool.
 */
export class ChildRunStore extends AppendLogStore implements RunStore {
  readonly #root: string;
  readonly #objects: ChildObjects | undefined;

  constructor(root: string, objects: ChildObjects | undefined) {
    super();
    this.#root = root;
    this.#objects = objects;
  }

  /** Hand `write` to `store` as if it were its own: what a child's object does with a write its parent sent. */
  static land(store: AppendLogStore, write: LogAppend): Promise<void> {
    return AppendLogStore.appendTo(store, write);
  }

  protected async append(write: LogAppend): Promise<void> {
    const { runId } = write;
    const refusal = await this.#object(runId, write.method).appendChildLog(this.#parentOf(runId), write);
    if (refusal !== null) throw new RunLockedError(runId, refusal.refused);
  }

  /** Contract: as every store's; the lines come from the child's object, committed there. */
  async readLog(runId: string): Promise<readonly LogRecord[]> {
    const lines = await this.#object(runId, 'readLog').childLogLines(this.#parentOf(runId), runId);
    if ('refused' in lines) throw new RunLockedError(runId, lines.refused);
    const source = `child-run:${runId.slice(0, 200)}`;
    const decoded = decodeLog(lines, { source });
    // Lines come from committed rows: a last one that is not whole JSON is corruption, not a torn write.
    if (decoded.tornLine !== null) {
      throw new CorruptLogError(decoded.tornLine, 'a committed record is not valid JSON', { source });
    }
    return decoded.records;
  }

  #parentOf(runId: string): string {
    return parentRunIdOf(runId) as string;
  }

  #object(runId: string, operation: string): ChildLogRpc {
    if (!descends(runId, this.#root))
      throw new RunLockedError(runId, `the object of run ${JSON.stringify(this.#root)} drives only its sub-agents`);
    const objects = this.#objects;
    if (objects === undefined) {
      const why = new Error(
        "a sub-agent's run lives in its own run object: give createRunObject the runs option " +
          '(the namespace its class is bound to, e.g. runs: (env) => env.RUNS)',
      );
      throw new StoreError(runId, operation, why);
    }
    return objects.get(objects.idFromName(runId) as never) as ChildLogRpc;
  }
}

/** What a child's object checks of its run row (null: it holds no run yet). */
type ChildRow = { readonly runId: string; readonly parentRunId: string | null };

/**
 * Why the object holding `row` refuses a write or read of `runId` by the object of `parentRunId`,
 * or null: the object holds another run, a run started on its own, or another parent's sub-agent.
 */
export function childLogRefusal(row: ChildRow, parentRunId: string, runId: string): string | null {
  const run = `run ${JSON.stringify(row.runId)}`;
  if (row.runId !== runId) return `its object holds ${run}`;
  if (row.parentRunId === parentRunId) return null;
  const parent = JSON.stringify(parentRunId);
  return row.parentRunId === null
    ? `${run} was started on its own (POST /runs), not by run ${parent}`
    : `${run} is a sub-agent of run ${JSON.stringify(row.parentRunId)}, not of run ${parent}`;
}

/**
 * Why a sub-agent's run refuses to be cancelled, answered, upgraded, stopped or forked on its own:
 * its parent's object drives it, so a cancel, a reply and a stop go through the parent, which
 * carries them to it.
 */
export function subAgentRefusal(
  runId: string,
  parentRunId: string,
  what: 'cancel' | 'input' | 'upgrade' | 'stop' | 'fork',
): string {
  const parent = `/runs/${parentRunId}`;
  const how = {
    cancel: `cancel its parent (POST ${parent}/cancel), which cancels it`,
    input: `answer its parent's open request of kind child (POST ${parent}/input), which carries the reply to it`,
    upgrade: "its parent's object drives it, and a sub-agent's run is not upgraded on its own",
    stop: `stop its parent (POST ${parent}/stop), which stops it`,
    fork: `fork its parent (POST ${parent}/fork) at the step that called it; a sub-agent's run is not forked alone`,
  }[what];
  return `run ${JSON.stringify(runId)} is a sub-agent of run ${JSON.stringify(parentRunId)}: ${how}`;
}
