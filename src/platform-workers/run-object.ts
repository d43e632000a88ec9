/**
 * The run Durable Object: one object owns one run — its log, its driver, its alarm, its live
 * event stream.
 * @module
 */
import { DurableObject } from 'cloudflare:workers';
import { exportRun, importRun, InMemoryStore } from '../core/index.ts';
import type { InputReply } from '../core/index.ts';
import type { ForkBody, LogAppend } from '../core/internal-entry.ts';
import { childLogRefusal, ChildRunStore, subAgentRefusal } from './child-run-store.ts';
import type { ChildLogRefusal } from './child-run-store.ts';
import { cancelReason } from './drive-sink.ts';
import type { UpgradeRefusal } from './drive-sink.ts';
import { identityRefusal, isImportRefusal } from './log-import.ts';
import { forkSourceOf, stopRun } from './run-control.ts';
import type { ControlParts, ForkSource, StopOutcome } from './run-control.ts';
import { replyRefusal } from './run-input.ts';
import type { CancelOutcome, InputOutcome, UpgradeOutcome } from './run-input.ts';
import { RunObjectDriver } from './run-drive.ts';
import { RunPhase } from './run-phase.ts';
import type { RunReport } from './run-index.ts';
import { IndexReporter, reportOf } from './run-report.ts';
import { insertChildRow, insertRunRow, markCancelRequested } from './run-row.ts';
import type { RunRow } from './run-row.ts';
import { agentOf, checkOptions, prepareRun, setupContext, startConflict } from './run-setup.ts';
import type { RunObjectOptions, StartOutcome } from './run-setup.ts';
import { haltedStatusOf, readablePrefixView, statusOf, trajectoryOf } from './run-status.ts';
import type { RunStatus, RunTrajectory, UnreadableLog } from './run-status.ts';
import { RunStorage } from './run-storage.ts';
import type { Reading } from './run-storage.ts';
import { logEventsResponse } from './sse.ts';

/**
 * The run Durable Object. Do not instantiate or subclass it directly: export the class returned
 * by {@link createRunObject} under the `class_name` of your `wrangler.toml` binding. Its public
 * methods are called over RPC by {@link createApp}.
 */
export class RunObjectBase<Env = unknown> extends DurableObject<Env> {
  readonly #options: RunObjectOptions<Env>;
  /** The run's tables, log store and live listeners; no table is created until a run starts. */
  readonly #storage: RunStorage;
  /** What this instance is doing with the run: idle, adopting an import, or driving. */
  readonly #phase = new RunPhase();
  readonly #reporter: IndexReporter;
  readonly #driver: RunObjectDriver<Env>;
  /** What a stop and a fork work with (run-control.ts). */
  readonly #control: ControlParts;

  constructor(ctx: DurableObjectState, env: Env, options: RunObjectOptions<Env>) {
    super(ctx, env);
    this.#options = options;
    const storage = new RunStorage(ctx.storage);
    this.#storage = storage;
    const current = (): RunReport | null => {
      const meta = storage.meta();
      // A sub-agent's run is not listed on its own: its parent's status lists it (`children`).
      if (meta === null || meta.parentRunId !== null) return null;
      return reportOf(meta, storage.readNow(meta.runId), Date.now());
    };
    this.#reporter = new IndexReporter(() => options.index?.(env), current);
    this.#driver = new RunObjectDriver({ ctx, env, options, storage, phase: this.#phase, reporter: this.#reporter });
    this.#control = { storage, phase: this.#phase, driver: this.#driver, read: (meta) => this.#read(meta) };
  }

  /** Start the run: validate the input with the factory, store it, arm the alarm, then drive. */
  async start(runId: string, input: unknown): Promise<StartOutcome> {
    if (this.#taken()) return startConflict(runId);
    const prepared = await prepareRun(this.#options.setup, setupContext(this.#options, this.env, runId, input));
    if (!prepared.ok) return prepared;
    if (this.#taken()) return startConflict(runId); // another start won while the factory ran
    this.#storage.createTables();
    this.#storage.store.discard(runId); // records without a run row: an import that never completed
    await this.#accept(runId, prepared.stored);
    // Listed before the 201: a failure here is logged and retried by the run's next report.
    await this.#reporter.report();
    void this.#driver.launch({ setup: prepared.setup });
    return { ok: true };
  }

  /**
   * Take over a run exported elsewhere (docs/design/run-log.md#export-and-import): check the input
   * as {@link start} does and the log's identity (as its upgrades left it) against what the factory
   * builds, import the log through the store's own methods, then drive it on with resume (and the
   * alarm) like any run. Refused as `bad_request` with nothing stored: a torn or corrupt log, a
   * foreign schema major, a log of another run, a log whose run the factory's agent and request
   * would not resume (identity mismatch).
   */
  async adopt(runId: string, input: unknown, log: string): Promise<StartOutcome> {
    if (this.#taken()) return startConflict(runId);
    const prepared = await prepareRun(this.#options.setup, setupContext(this.#options, this.env, runId, input));
    if (!prepared.ok) return prepared;
    const mismatch = identityRefusal(agentOf(prepared.setup, new InMemoryStore()), prepared.request, log);
    if (mismatch !== null) return { ok: false, code: 'bad_request', message: `log rejected: ${mismatch}` };
    if (this.#taken()) return startConflict(runId);
    // Until the run row exists the run is unknown (404) and has no alarm: a half-done import is never driven.
    this.#phase.adopt();
    try {
      this.#storage.createTables();
      this.#storage.store.discard(runId);
      try {
        await importRun(this.#storage.store, runId, log);
      } catch (e) {
        if (isImportRefusal(e))
          return { ok: false, code: 'bad_request', message: `log rejected: ${e.name}: ${e.message}` };
        throw e; // a storage fault: the records that landed are dropped by the next start or import of this id
      }
      await this.#accept(runId, prepared.stored);
    } finally {
      this.#phase.adopted();
    }
    await this.#reporter.report();
    void this.#driver.launch({ setup: prepared.setup });
    return { ok: true };
  }

  /** True when this object holds a run, or is importing one. */
  #taken(): boolean {
    return this.#phase.adopting || this.#storage.meta() !== null;
  }

  /** Make the run known: its row (input) and its alarm, written in one storage turn. */
  async #accept(runId: string, stored: string): Promise<void> {
    // The alarm goes in before any work, together with the input: if this instance dies from here
    // on, the alarm resumes the run.
    const armed = this.#driver.rearm();
    insertRunRow(this.ctx.storage.sql, runId, stored);
    await armed;
  }

  /**
   * The run's status, or null when this object holds no run. A run
   * with an unreadable log is halted (see {@link trajectory}).
   */
  async status(): Promise<RunStatus | null> {
    const meta = this.#storage.meta();
    if (meta === null) return null;
    const reading = await this.#read(meta);
    if ('unreadable' in reading) {
      const prefix = readablePrefixView(this.#storage.store.readLines(meta.runId).map((l) => l.line));
      return haltedStatusOf(meta.runId, prefix, reading.unreadable);
    }
    const { view } = reading;
    return view.state !== 'ended' && meta.halted !== null
      ? haltedStatusOf(meta.runId, view, meta.halted)
      : statusOf(meta.runId, view);
  }

  /**
   * The run's step records, or null when this object holds no run. When its log cannot be read
   * (a corrupt record, an unsupported schema version) the run is halted and the reason returned
   * instead, a value since errors lose their class over RPC.
   */
  async trajectory(): Promise<RunTrajectory | UnreadableLog | null> {
    const meta = this.#storage.meta();
    if (meta === null) return null;
    const reading = await this.#read(meta);
    return 'unreadable' in reading
      ? { runId: meta.runId, unreadable: reading.unreadable }
      : trajectoryOf(meta.runId, reading.view);
  }

  /**
   * The run's log as `exportRun` gives it (NDJSON; empty before the first record), or null when
   * this object holds no run. An unreadable log is answered as by {@link trajectory}.
   */
  async log(): Promise<string | UnreadableLog | null> {
    const meta = this.#storage.meta();
    if (meta === null) return null;
    const reading = await this.#read(meta);
    if ('unreadable' in reading) return { runId: meta.runId, unreadable: reading.unreadable };
    return reading.view.state === 'not_started' ? '' : exportRun(this.#storage.store, meta.runId);
  }

  /** The one reading of the log; when it cannot be read the run is halted (once: no retry can heal a log). */
  async #read(meta: RunRow): Promise<Reading> {
    const reading = this.#storage.readNow(meta.runId);
    if ('unreadable' in reading && meta.halted === null) await this.#driver.halt(meta.runId, reading.unreadable);
    return reading;
  }

  /**
   * Ask the run to stop: the library writes `run_ended` (`cancelled`). Idempotent; a no-op on an
   * ended run. A run awaiting input is ended by a `cancel` reply to its (first) open request
   * (written like a person's, so the log says who ended it). A halted run gets one more attempt, which
   * ends it only if its fault has cleared (a run whose identity no longer matches stays halted).
   * Refused as `conflict` when the run has ended (nothing left to cancel), `not_found` when this
   * object holds no run.
   */
  async cancel(): Promise<CancelOutcome> {
    const meta = this.#storage.meta();
    if (meta === null) return { ok: false, code: 'not_found', message: 'this object holds no run' };
    if (meta.parentRunId !== null)
      return { ok: false, code: 'conflict', message: subAgentRefusal(meta.runId, meta.parentRunId, 'cancel') };
    const view = this.#storage.view(meta.runId);
    if (view?.ended) {
      const ended = `run ${JSON.stringify(meta.runId)} has ended (${view.ended.stopReason})`;
      return { ok: false, code: 'conflict', message: `${ended}; there is nothing to cancel` };
    }
    markCancelRequested(this.ctx.storage.sql);
    if (this.#phase.drive !== null) {
      // Before the library has been called the sink aborts at `run_started` instead (see drive-sink.ts);
      // a drive that just paused sends the cancel reply next (see run-drive.ts).
      this.#phase.abort(cancelReason());
      return { ok: true };
    }
    // An awaiting run has no alarm: arm one, so a cancel cut short by eviction is still carried out.
    const armed = meta.halted === null ? this.#driver.rearm() : null;
    // Also for a halted run: one more attempt, which ends it cancelled if its fault has cleared.
    void this.#driver.launch();
    await armed;
    return { ok: true };
  }

  /**
   * Answer one of the run's open input requests (any of them, when a step with several calls waits
   * for several): resolves once the reply is durable in the log (the run then goes on in the
   * background, its alarm re-armed for the rest of it, and waits again while others are open), or
   * with why not — `conflict` when the run awaits no input (running, ended, halted) or no open
   * request has the reply's resultId, `bad_request` when the request does not accept the reply's
   * kind, `not_found` when this object holds no run. `reply` has the shape of an `InputReply` already.
   */
  async input(reply: InputReply): Promise<InputOutcome> {
    for (;;) {
      const meta = this.#storage.meta();
      if (meta === null) return { ok: false, code: 'not_found', message: 'this object holds no run' };
      if (meta.parentRunId !== null)
        return { ok: false, code: 'conflict', message: subAgentRefusal(meta.runId, meta.parentRunId, 'input') };
      const reading = await this.#read(meta);
      if ('unreadable' in reading)
        return {
          ok: false,
          code: 'conflict',
          message: `the run's log is unreadable, so it is halted: ${reading.unreadable}`,
        };
      if (meta.halted !== null && reading.view.state !== 'ended')
        return { ok: false, code: 'conflict', message: `the run is halted: ${meta.halted}` };
      const refused = replyRefusal(meta.runId, reading.view, reply);
      if (refused !== null) return refused;
      const busy = this.#phase.busy;
      if (busy === null) break;
      // Another reply is landing, or a drive is finishing (it just paused): look again after it.
      // Failures are theirs to report (a drive never rejects for them).
      await busy.catch(() => undefined);
    }
    // In the same turn as the last look at the log: no other drive can start in between.
    const armed = this.#driver.rearm();
    const landed = new Promise<InputOutcome>((done, fail) => {
      void this.#driver.launch({ answer: { reply, done, fail } });
    });
    // Settles either way (its failure is this call's to report): no caller waits on a rejection, none goes unhandled.
    this.#phase.land(
      landed.then(
        () => undefined,
        () => undefined,
      ),
    );
    await armed;
    const outcome = await landed;
    if (outcome.ok) await this.#reporter.report(); // the run goes on: listed as running again
    return outcome;
  }

  /**
   * Let a run whose agent changed under it (a deploy) go on under this deployment's agent: resumes
   * it with `{ upgrade: { reason } }`, which writes an `upgrade` record when the identity differs.
   * Resolves once that record is durable (a halted run is no longer halted; a waiting run still
   * waits, a run in flight goes on in the background), or with why not — `conflict` when the run
   * has ended, is being driven, its log is unreadable, or the library refuses the upgrade
   * (`UpgradeRefusedError`: nothing written, the run as it was); `not_found` when this object
   * holds no run.
   */
  async upgrade(reason: string): Promise<UpgradeOutcome> {
    const meta = this.#storage.meta();
    if (meta === null) return { ok: false, code: 'not_found', message: 'this object holds no run' };
    if (meta.parentRunId !== null)
      return { ok: false, code: 'conflict', message: subAgentRefusal(meta.runId, meta.parentRunId, 'upgrade') };
    const reading = await this.#read(meta);
    const run = `run ${JSON.stringify(meta.runId)}`;
    const refuse = (message: string): UpgradeRefusal => ({ ok: false, code: 'conflict', message });
    if ('unreadable' in reading) return refuse(`the run's log is unreadable, so it is halted: ${reading.unreadable}`);
    const { ended, upgrades } = reading.view;
    if (ended) return refuse(`${run} has ended (${ended.stopReason}); an ended run is never upgraded`);
    if (this.#phase.drive !== null) return refuse(`${run} is being driven: upgrade it once it is halted or waits`);
    const armed = this.#driver.rearm();
    const landed = new Promise<UpgradeRefusal | null>((done, fail) => {
      void this.#driver.launch({ upgrade: { reason, done, fail } });
    });
    await armed;
    const refused = await landed;
    if (refused !== null) return refused;
    await this.#reporter.report();
    return { ok: true, upgraded: (this.#storage.view(meta.runId)?.upgrades.length ?? 0) > upgrades.length };
  }

  /** Ask the run to stop, durably; the run ends `cancelled` with it (run-control.ts, docs/http.md#post-runsidstop). */
  requestStop(reason: string | undefined): Promise<StopOutcome> {
    return stopRun(this.#control, reason);
  }

  /** The log of a fork of this run, and its input; the run is only read (docs/http.md#post-runsidfork). */
  forkSource(fork: ForkBody): Promise<ForkSource> {
    return forkSourceOf(this.#control, fork);
  }

  /**
   * A write of a sub-agent's run, sent by its parent's object (child-run-store.ts): made in this
   * object's storage as the run's own store makes it, the run row created with the first one.
   * Resolves once committed; the output gate holds the answer until the write is durable, so the
   * parent goes on only past a durable write. Refused when this object holds another run, a run
   * started on its own, or another parent's sub-agent.
   */
  async appendChildLog(parentRunId: string, write: LogAppend): Promise<ChildLogRefusal | null> {
    const meta = this.#storage.meta();
    if (meta === null) {
      if (this.#phase.adopting) return { refused: 'its object is importing a log under that id' };
      this.#storage.createTables();
      this.#storage.store.discard(write.runId); // records without a run row: an import that never completed
      insertChildRow(this.ctx.storage.sql, write.runId, parentRunId);
    } else {
      const refused = childLogRefusal(meta, parentRunId, write.runId);
      if (refused !== null) return { refused };
    }
    await ChildRunStore.land(this.#storage.store, write);
    return null;
  }

  /**
   * The committed lines of a sub-agent's run, for its parent's object; `[]` before its first
   * write (a read creates nothing).
   */
  async childLogLines(parentRunId: string, runId: string): Promise<readonly string[] | ChildLogRefusal> {
    const meta = this.#storage.meta();
    if (meta === null) return [];
    const refused = childLogRefusal(meta, parentRunId, runId);
    if (refused !== null) return { refused };
    return this.#storage.store.readLines(runId).map((l) => l.line);
  }

  /**
   * The object's own HTTP face, used by the app for the event stream only (`GET /events`,
   * `Last-Event-ID`): SSE of every record after that sequence, then live ones until `run_ended`;
   * 404 when this object holds no run. A plain fetch, so a client disconnect cancels the stream.
   */
  override async fetch(request: Request): Promise<Response> {
    const meta = this.#storage.meta();
    if (meta === null) return new Response(null, { status: 404 });
    const { runId } = meta;
    const feed = this.#storage.feed(runId);
    const at = { lastSeq: this.#storage.store.lastSeq(runId), ended: () => this.#storage.ended(runId) };
    const { keepAliveMs } = this.#options;
    const lastEventId = request.headers.get('last-event-id');
    return logEventsResponse(feed, at, lastEventId, keepAliveMs === undefined ? {} : { keepAliveMs });
  }

  /**
   * Heartbeat and recovery: re-arm while the run lives; resume it when no driver runs here. An awaiting
   * run is left alone, its alarm not re-armed (waiting costs nothing), unless a cancel or stop was asked.
   */
  override async alarm(): Promise<void> {
    const meta = this.#storage.meta();
    // A sub-agent's run is driven (and resumed) by its parent's object, never by its own alarm.
    if (meta === null || meta.parentRunId !== null) return;
    const state = this.#storage.stateOf(meta.runId);
    if (meta.halted !== null || state === 'ended' || (state === 'awaiting_input' && !this.#storage.asked(meta))) {
      // Nothing to drive; the alarm is still armed only when the run index was not told the run's last status.
      if (!(await this.#reporter.report())) await this.#driver.rearm();
      return;
    }
    await this.#driver.rearm();
    if (this.#phase.drive === null) void this.#driver.launch();
    // A run that goes on is listed too: a report refused at its start (or lost with an instance) is tried again here.
    await this.#reporter.report();
  }
}

/**
 * Make the run Durable Object class for your agent. Throws `InvalidRequestError` for a key that is not
 * an option (naming the nearest one) and a TypeError for an invalid value. Export it under the
 * `class_name` your `wrangler.toml` binds (with a `new_sqlite_classes` migration).
 *
 * @example
 * export class RunObject extends createRunObject<Env>({
 *   setup: ({ env, input }) => ({ model, interpreter, syntheticObservations,
 *     defaults: { tools, executor: tools.executor(), budget, context: { run: [system] }, … },
 *     request: { goal: goalOf(input) } }),
 * }) {}
 */
export function createRunObject<Env = unknown>(
  options: RunObjectOptions<Env>,
): new (
  ctx: DurableObjectState,
  env: Env,
) => RunObjectBase<Env> {
  checkOptions(options);
  return class RunObject extends RunObjectBase<Env> {
    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env, options);
    }
  };
}
