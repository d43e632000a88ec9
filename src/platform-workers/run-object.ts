/**
 * The run Durable Object: one object owns one run — its log, its driver, its alarm, its live
 * event stream.
 * @module
 */
import { DurableObject } from 'cloudflare:workers';
import { defineAgent, exportRun, importRun, InMemoryStore, isPolyLoopError, readRunLog } from '../core/index.ts';
import type { InputReply, ResumeOptions, RunLogState, RunLogView } from '../core/index.ts';
import { cancelReason, driveSink, tellFailure } from './drive-sink.ts';
import type { Answer, Upgrade, UpgradeRefusal } from './drive-sink.ts';
import { DurableObjectStore } from './durable-object-store.ts';
import type { StoredLine } from './durable-object-store.ts';
import { identityRefusal, isImportRefusal } from './log-import.ts';
import { cancelReply, replyRefusal, upgradeHint } from './run-input.ts';
import { IndexReporter, reportOf } from './run-report.ts';
import { clearHalted, createRunTables, failedDrive, hasRunTables, insertRunRow } from './run-row.ts';
import { markCancelRequested, markHalted, readRunRow } from './run-row.ts';
import type { CancelOutcome, InputOutcome, UpgradeOutcome } from './run-input.ts';
import type { RunRow } from './run-row.ts';
import { haltedStatusOf, readablePrefixView, statusOf, trajectoryOf } from './run-status.ts';
import type { RunStatus, RunTrajectory, UnreadableLog } from './run-status.ts';
import { agentOf, callLibrary, checkOptions, prepareRun } from './run-setup.ts';
import type { Logged, RunObjectOptions, RunSetup, StartOutcome } from './run-setup.ts';
import { logEventsResponse } from './sse.ts';


/** One reading of the run's log (`readRunLog`), or why it cannot be read: the error's name and message. */
type Reading = { readonly view: RunLogView } | { readonly unreadable: string };

/** What the next resume of a drive sends: a reply, nothing, or 'wait' (the run awaits input and there is none to send). */
type Next = InputReply | 'wait' | null;

function conflict(runId: string): StartOutcome {
  return { ok: false, code: 'conflict', message: `run ${JSON.stringify(runId)} already exists` };
}

/**
 * The run Durable Object. Do not instantiate or subclass it directly: export the class returned
 * by {@link createRunObject} under the `class_name` of your `wrangler.toml` binding. Its public
 * methods are called over RPC by {@link createApp}.
 */
export class RunObjectBase<Env = unknown> extends DurableObject<Env> {
  readonly #options: RunObjectOptions<Env>;
  #storeRef: DurableObjectStore | null = null;
  #schemaReady = false;
  readonly #listeners = new Set<(entry: StoredLine) => void>();
  #driving: Promise<void> | null = null;
  #controller: AbortController | null = null;
  #launched = false;
  /** A reply's drive was launched and its record has not landed yet (or been refused). */
  #landing: Promise<unknown> | null = null;
  /** An import is being written: the run id is taken, though the run row does not exist yet. */
  #adopting = false;
  readonly #reporter = new IndexReporter(
    () => this.#options.index?.(this.env),
    () => {
      const meta = this.#meta();
      return meta === null ? null : reportOf(meta, this.#readNow(meta.runId), Date.now());
    },
  );

  constructor(ctx: DurableObjectState, env: Env, options: RunObjectOptions<Env>) {
    super(ctx, env);
    this.#options = options;
    // No table is created here: an object asked about an unknown run must not be left with storage.
  }

  /** True once this object holds a run's tables (created by {@link start}); then they are ready to use. */
  #hasSchema(): boolean {
    if (this.#schemaReady) return true;
    const found = hasRunTables(this.ctx.storage.sql);
    if (found) this.#createSchema();
    return found;
  }

  #createSchema(): void {
    createRunTables(this.ctx.storage.sql);
    this.#storeRef ??= new DurableObjectStore(this.ctx.storage, { onAppend: (_runId, entry) => this.#listeners.forEach((l) => l(entry)) });
    this.#schemaReady = true;
  }

  /** The run's log store; only called once the run's tables exist. */
  get #store(): DurableObjectStore {
    if (this.#storeRef === null) this.#createSchema();
    return this.#storeRef as DurableObjectStore;
  }

  /** Start the run: validate the input with the factory, store it, arm the alarm, then drive. */
  async start(runId: string, input: unknown): Promise<StartOutcome> {
    if (this.#taken()) return conflict(runId);
    const prepared = await prepareRun(this.#options.setup, { env: this.env, runId, input });
    if (!prepared.ok) return prepared;
    if (this.#taken()) return conflict(runId); // another start won while the factory ran
    this.#createSchema();
    this.#store.discard(runId); // records without a run row: an import that never completed
    await this.#accept(runId, prepared.stored);
    await this.#reporter.report(); // listed before the 201: a failure here is logged and retried by the run's next report
    void this.#launch(prepared.setup);
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
    if (this.#taken()) return conflict(runId);
    const prepared = await prepareRun(this.#options.setup, { env: this.env, runId, input });
    if (!prepared.ok) return prepared;
    const mismatch = identityRefusal(agentOf(prepared.setup, new InMemoryStore()), prepared.request, log);
    if (mismatch !== null) return { ok: false, code: 'bad_request', message: `log rejected: ${mismatch}` };
    if (this.#taken()) return conflict(runId);
    // Until the run row exists the run is unknown (404) and has no alarm: a half-done import is never driven.
    this.#adopting = true;
    try {
      this.#createSchema();
      this.#store.discard(runId);
      try {
        await importRun(this.#store, runId, log);
      } catch (e) {
        if (isImportRefusal(e)) return { ok: false, code: 'bad_request', message: `log rejected: ${e.name}: ${e.message}` };
        throw e; // a storage fault: the records that landed are dropped by the next start or import of this id
      }
      await this.#accept(runId, prepared.stored);
    } finally {
      this.#adopting = false;
    }
    await this.#reporter.report();
    void this.#launch(prepared.setup);
    return { ok: true };
  }

  /** True when this object holds a run, or is importing one. */
  #taken(): boolean {
    return this.#adopting || this.#meta() !== null;
  }

  /** Make the run known: its row (input) and its alarm, written in one storage turn. */
  async #accept(runId: string, stored: string): Promise<void> {
    // The alarm goes in before any work, together with the input: if this instance dies from here
    // on, the alarm resumes the run.
    const armed = this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs());
    insertRunRow(this.ctx.storage.sql, runId, stored);
    await armed;
  }

  /** The run's status, or null when this object holds no run. A run with an unreadable log is halted (see {@link trajectory}). */
  async status(): Promise<RunStatus | null> {
    const meta = this.#meta();
    if (meta === null) return null;
    const reading = await this.#read(meta);
    if ('unreadable' in reading) return haltedStatusOf(meta.runId, readablePrefixView(this.#store.readLines(meta.runId).map((l) => l.line)), reading.unreadable);
    const { view } = reading;
    return view.state !== 'ended' && meta.halted !== null ? haltedStatusOf(meta.runId, view, meta.halted) : statusOf(meta.runId, view);
  }

  /**
   * The run's step records, or null when this object holds no run. When its log cannot be read
   * (a corrupt record, an unsupported schema version) the run is halted and the reason returned
   * instead, a value since errors lose their class over RPC.
   */
  async trajectory(): Promise<RunTrajectory | UnreadableLog | null> {
    const meta = this.#meta();
    if (meta === null) return null;
    const reading = await this.#read(meta);
    return 'unreadable' in reading ? { runId: meta.runId, unreadable: reading.unreadable } : trajectoryOf(meta.runId, reading.view);
  }

  /**
   * The run's log as `exportRun` gives it (NDJSON; empty before the first record), or null when
   * this object holds no run. An unreadable log is answered as by {@link trajectory}.
   */
  async log(): Promise<string | UnreadableLog | null> {
    const meta = this.#meta();
    if (meta === null) return null;
    const reading = await this.#read(meta);
    if ('unreadable' in reading) return { runId: meta.runId, unreadable: reading.unreadable };
    return reading.view.state === 'not_started' ? '' : exportRun(this.#store, meta.runId);
  }

  /** The one reading of the log; when it cannot be read the run is halted (once: no retry can heal a log). */
  async #read(meta: RunRow): Promise<Reading> {
    const reading = this.#readNow(meta.runId);
    if ('unreadable' in reading && meta.halted === null) await this.#halt(meta.runId, reading.unreadable);
    return reading;
  }

  /** The log read through `readRunLog` in this turn, or why it is refused. Store failures still throw. */
  #readNow(runId: string): Reading {
    try {
      return { view: readRunLog(this.#store.readLogSync(runId)) };
    } catch (e) {
      if (!isPolyLoopError(e) || (e.code !== 'corrupt_log' && e.code !== 'schema_version')) throw e;
      return { unreadable: `${e.name}: ${e.message}` };
    }
  }

  /**
   * Ask the run to stop: the library writes `run_ended` (`cancelled`). Idempotent; a no-op on an
   * ended run. A run awaiting input is ended by a `cancel` reply to its open request (written
   * like a person's, so the log says who ended it). A halted run gets one more attempt, which
   * ends it only if its fault has cleared (a run whose identity no longer matches stays halted).
   * Refused as `conflict` when the run has ended (nothing left to cancel), `not_found` when this
   * object holds no run.
   */
  async cancel(): Promise<CancelOutcome> {
    const meta = this.#meta();
    if (meta === null) return { ok: false, code: 'not_found', message: 'this object holds no run' };
    const reading = this.#readNowOrNull(meta.runId);
    if (reading?.ended) return { ok: false, code: 'conflict', message: `run ${JSON.stringify(meta.runId)} has ended (${reading.ended.stopReason}); there is nothing to cancel` };
    markCancelRequested(this.ctx.storage.sql);
    if (this.#driving !== null) {
      // Before the library has been called the sink aborts at `run_started` instead (see #sink);
      // a drive that just paused sends the cancel reply next (see #drive).
      if (this.#launched) this.#controller?.abort(cancelReason());
      return { ok: true };
    }
    // An awaiting run has no alarm: arm one, so a cancel cut short by eviction is still carried out.
    const armed = meta.halted === null ? this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs()) : null;
    // Also for a halted run: one more attempt, which ends it cancelled if its fault has cleared.
    void this.#launch(null);
    await armed;
    return { ok: true };
  }

  /**
   * Answer the run's open input request: resolves once the reply is durable in the log
   * (the run then goes on in the background, its alarm re-armed for the rest of it), or with why
   * not — `conflict` when the run awaits no input (running, ended, halted) or its request has
   * another resultId, `bad_request` when the request does not accept the reply's kind,
   * `not_found` when this object holds no run. `reply` has the shape of an `InputReply` already.
   */
  async input(reply: InputReply): Promise<InputOutcome> {
    for (;;) {
      const meta = this.#meta();
      if (meta === null) return { ok: false, code: 'not_found', message: 'this object holds no run' };
      const reading = await this.#read(meta);
      if ('unreadable' in reading) return { ok: false, code: 'conflict', message: `the run's log is unreadable, so it is halted: ${reading.unreadable}` };
      if (meta.halted !== null && reading.view.state !== 'ended') return { ok: false, code: 'conflict', message: `the run is halted: ${meta.halted}` };
      const refused = replyRefusal(meta.runId, reading.view, reply);
      if (refused !== null) return refused;
      if (this.#driving === null) break;
      // Another reply is landing, or a drive is finishing (it just paused): look again after it.
      // Failures are theirs to report (#drive never rejects for them).
      await (this.#landing ?? this.#driving).catch(() => undefined);
    }
    // In the same turn as the last look at the log: no other drive can start in between.
    const armed = this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs());
    const landed = new Promise<InputOutcome>((done, fail) => void this.#launch(null, { reply, done, fail }));
    // Settles either way (its failure is this call's to report), so no other caller waits on a rejection and none goes unhandled.
    const landing = landed.then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      if (this.#landing === landing) this.#landing = null;
    });
    this.#landing = landing;
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
    const meta = this.#meta();
    if (meta === null) return { ok: false, code: 'not_found', message: 'this object holds no run' };
    const reading = await this.#read(meta);
    const run = `run ${JSON.stringify(meta.runId)}`;
    const refuse = (message: string): UpgradeRefusal => ({ ok: false, code: 'conflict', message });
    if ('unreadable' in reading) return refuse(`the run's log is unreadable, so it is halted: ${reading.unreadable}`);
    const { ended, upgrades } = reading.view;
    if (ended) return refuse(`${run} has ended (${ended.stopReason}); an ended run is never upgraded`);
    if (this.#driving !== null) return refuse(`${run} is being driven: upgrade it once it is halted or waits`);
    const armed = this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs());
    const landed = new Promise<UpgradeRefusal | null>((done, fail) => {
      void this.#launch(null, null, { reason, done, fail });
    });
    await armed;
    const refused = await landed;
    if (refused !== null) return refused;
    await this.#reporter.report();
    return { ok: true, upgraded: (this.#readNowOrNull(meta.runId)?.upgrades.length ?? 0) > upgrades.length };
  }

  /**
   * The object's own HTTP face, used by the app for the event stream only (`GET /events`,
   * `Last-Event-ID`): SSE of every record after that sequence, then live ones until `run_ended`;
   * 404 when this object holds no run. A plain fetch, so a client disconnect cancels the stream.
   */
  override async fetch(request: Request): Promise<Response> {
    const meta = this.#meta();
    if (meta === null) return new Response(null, { status: 404 });
    const { runId } = meta;
    const feed = {
      readLines: (after: number) => this.#store.readLines(runId, after),
      subscribe: (listener: (entry: StoredLine) => void) => {
        this.#listeners.add(listener);
        return () => void this.#listeners.delete(listener);
      },
    };
    const at = { lastSeq: this.#store.lastSeq(runId), ended: () => this.#ended(runId) };
    return logEventsResponse(feed, at, request.headers.get('last-event-id'), this.#options.keepAliveMs === undefined ? {} : { keepAliveMs: this.#options.keepAliveMs });
  }

  /**
   * Heartbeat and recovery: re-arm while the run lives; resume it when no driver runs here. An
   * awaiting run is left alone and its alarm not re-armed: waiting for a person costs nothing.
   */
  override async alarm(): Promise<void> {
    const meta = this.#meta();
    if (meta === null) return;
    const state = this.#stateOf(meta.runId);
    if (meta.halted !== null || state === 'ended' || (state === 'awaiting_input' && !meta.cancelRequested)) {
      // Nothing to drive; the alarm is still armed only when the run index was not told the run's last status.
      if (!(await this.#reporter.report())) await this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs());
      return;
    }
    await this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs());
    if (this.#driving === null) void this.#launch(null);
    // A run that goes on is listed too: a report refused at its start (or lost with an instance) is tried again here.
    await this.#reporter.report();
  }

  #resumeAfterMs(): number {
    return this.#options.resumeAfterMs ?? 30_000;
  }

  #meta(): RunRow | null {
    if (!this.#hasSchema()) return null;
    return readRunRow(this.ctx.storage.sql);
  }

  /**
   * The state the one reading of the log says, or null when the log cannot be read (or the store
   * fails): not ended, not awaiting — the next resume meets the same fault and halts or retries the run.
   */
  #stateOf(runId: string): RunLogState | null {
    return this.#readNowOrNull(runId)?.state ?? null;
  }

  /** The one reading of the log, or null when it cannot be read or the store fails (see {@link #stateOf}). */
  #readNowOrNull(runId: string): RunLogView | null {
    try {
      const reading = this.#readNow(runId);
      return 'view' in reading ? reading.view : null;
    } catch {
      return null;
    }
  }

  #ended(runId: string): boolean {
    return this.#stateOf(runId) === 'ended';
  }

  #launch(given: RunSetup | null, answer: Answer | null = null, upgrade: Upgrade | null = null): Promise<void> {
    if (this.#driving !== null) return this.#driving;
    const controller = new AbortController();
    this.#controller = controller;
    this.#launched = false;
    const driving = this.#drive(given, controller, answer, upgrade).finally(() => {
      this.#driving = null;
      this.#controller = null;
      this.#launched = false;
    });
    this.#driving = driving;
    this.ctx.waitUntil(driving);
    return driving;
  }

  /**
   * Drive the run until it ends or waits for a person: start or resume it, send `answer` when the
   * run awaits it, a cancel reply when a cancel was asked for while it waits, and ask for
   * `upgrade` on the first resume. Then the alarm is cleared (an ended or awaiting run needs
   * none); a failure before that is left to #failed.
   */
  async #drive(given: RunSetup | null, first: AbortController, answer: Answer | null, asked: Upgrade | null): Promise<void> {
    let upgrade = asked;
    const meta = this.#meta();
    if (meta === null) {
      upgrade?.done({ ok: false, code: 'conflict', message: 'the run is gone' });
      return answer?.done({ ok: false, code: 'not_found', message: 'the run is gone' });
    }
    let controller = first;
    /** The upgrade has landed (or nothing differed): the run is no longer halted, and its asker is told. */
    const landed = (): void => {
      if (upgrade === null) return;
      clearHalted(this.ctx.storage.sql);
      upgrade.done(null);
      upgrade = null;
    };
    try {
      const setup = given ?? (await this.#options.setup({ env: this.env, runId: meta.runId, input: JSON.parse(meta.input) as unknown }));
      const cancelRequested = (): boolean => this.#meta()?.cancelRequested === true;
      for (;;) {
        const { next, logged } = this.#nextFor(meta.runId, answer);
        // A waiting run with nothing to send is resumed only to write an upgrade.
        if (next === 'wait' && upgrade === null) break;
        const input = next === 'wait' ? null : next;
        const cancelling = input?.kind === 'cancel';
        // The cancel that aborted the previous resume is carried out by this one: it needs a live signal.
        if (cancelling && controller.signal.aborted) this.#controller = controller = new AbortController();
        const started = landed;
        const events = driveSink({ extra: setup.events, controller, answer, cancelling, cancelRequested, started });
        const agent = defineAgent({ ...agentOf(setup, this.#store), events });
        this.#launched = true;
        const opts: ResumeOptions & { signal: AbortSignal } = {
          signal: controller.signal,
          ...(input === null ? {} : { input }),
          ...(upgrade === null ? {} : { upgrade: { reason: upgrade.reason } }),
        };
        const result = await callLibrary(agent, setup, meta.runId, opts, logged);
        answer?.done(this.#notLanded());
        answer = null;
        landed();
        if (result.stopReason !== 'awaiting_input') break;
      }
    } catch (e) {
      // A refused reply or upgrade wrote nothing: the run still waits (or stays halted), and needs no alarm.
      if (!tellFailure(e, meta.runId, answer, upgrade) && !this.#ended(meta.runId)) return this.#failed(meta.runId, e);
    }
    // Ended or waiting: the alarm is kept only to retry telling the run index.
    const told = await this.#reporter.report();
    // A cancel that came while the index was being told found this drive still running, and this drive had already
    // looked for one: the alarm, due now, carries it out (it drives an awaiting run whose cancel was asked for).
    if (this.#meta()?.cancelRequested === true && this.#stateOf(meta.runId) === 'awaiting_input') await this.ctx.storage.setAlarm(Date.now());
    else if (told) await this.ctx.storage.deleteAlarm();
  }

  /**
   * What the next resume sends — a cancel reply, the answer, nothing (not awaiting), or 'wait'
   * (awaiting, nothing to send) — and what the log keeps.
   */
  #nextFor(runId: string, answer: Answer | null): { readonly next: Next; readonly logged: Logged } {
    const reading = this.#readNow(runId);
    const view = 'view' in reading ? reading.view : null;
    const logged = { hasLog: this.#store.hasLog(runId), storedRequest: view?.started?.request !== undefined };
    const pending = view?.pending ?? null;
    if (pending === null) return { next: null, logged };
    if (this.#meta()?.cancelRequested) return { next: cancelReply(pending.resultId), logged };
    return { next: answer?.reply ?? 'wait', logged };
  }

  /** Why a reply the drive was given did not land (its sender hears this unless it landed first). */
  #notLanded(): InputOutcome {
    const cancelled = this.#meta()?.cancelRequested === true;
    return { ok: false, code: 'conflict', message: cancelled ? 'the run was cancelled before the reply landed' : 'the run awaits no input' };
  }

  /**
   * A drive that failed before the run ended. Store failures and other non-library errors may be
   * transient: the alarm stays armed and retries. A library refusal (identity mismatch, invalid
   * request, corrupt log …) will not heal by retrying: the run is halted and the alarm cleared.
   */
  async #failed(runId: string, e: unknown): Promise<void> {
    const verdict = failedDrive(this.ctx.storage.sql, { error: e, seq: this.#store.lastSeq(runId), max: this.#options.maxFailedDrives ?? 10 });
    if ('halt' in verdict) return this.#halt(runId, `${verdict.halt}${upgradeHint(e, runId)}`);
    console.error(`polyloop: run ${JSON.stringify(runId)} ${verdict.retry}`);
  }

  async #halt(runId: string, why: string): Promise<void> {
    console.error(`polyloop: run ${JSON.stringify(runId)} halted: ${why}`);
    markHalted(this.ctx.storage.sql, why);
    if (await this.#reporter.report()) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs());
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
export function createRunObject<Env = unknown>(options: RunObjectOptions<Env>): new (ctx: DurableObjectState, env: Env) => RunObjectBase<Env> {
  checkOptions(options);
  return class RunObject extends RunObjectBase<Env> {
    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env, options);
    }
  };
}
