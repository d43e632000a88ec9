/**
 * The run Durable Object: one object owns one run — its log, its driver, its alarm, its live
 * event stream.
 * @module
 */
import { DurableObject } from 'cloudflare:workers';
import { defineAgent, exportRun, importRun, InMemoryStore, isPolyLoopError, readRunLog, resume, run } from '../core/index.ts';
import type { EventSink, RunEvent, RunLogView, RunRequest } from '../core/index.ts';
import { DurableObjectStore } from './durable-object-store.ts';
import type { StoredLine } from './durable-object-store.ts';
import { identityRefusal, isImportRefusal } from './log-import.ts';
import { haltedStatusOf, readablePrefixView, statusOf, trajectoryOf } from './run-status.ts';
import type { RunStatus, RunTrajectory, UnreadableLog } from './run-status.ts';
import { checkOptions, prepareRun, seamsOf } from './run-setup.ts';
import type { RunObjectOptions, RunSetup, StartOutcome } from './run-setup.ts';
import { logEventStream } from './sse.ts';

type Meta = { readonly runId: string; readonly input: string; readonly cancelRequested: boolean; readonly halted: string | null };

/** One reading of the run's log (`readRunLog`), or why it cannot be read: the error's name and message. */
type Reading = { readonly view: RunLogView } | { readonly unreadable: string };

const META = 'polyloop_run';
/** Failed drives in a row and the last sequence number when the latest one failed (a drive that wrote records made progress). */
const FAILURES = 'polyloop_drive_failures';

function conflict(runId: string): StartOutcome {
  return { ok: false, code: 'conflict', message: `run ${JSON.stringify(runId)} already exists` };
}

function cancelReason(): Error {
  return new DOMException('run cancelled by request', 'AbortError');
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
  /** An import is being written: the run id is taken, though the run row does not exist yet. */
  #adopting = false;

  constructor(ctx: DurableObjectState, env: Env, options: RunObjectOptions<Env>) {
    super(ctx, env);
    this.#options = options;
    // No table is created here: an object asked about an unknown run must not be left with storage.
  }

  /** True once this object holds a run's tables (created by {@link start}); then they are ready to use. */
  #hasSchema(): boolean {
    if (this.#schemaReady) return true;
    const found = this.ctx.storage.sql.exec(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?`, META).toArray().length > 0;
    if (found) this.#createSchema();
    return found;
  }

  #createSchema(): void {
    const { sql } = this.ctx.storage;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS ${META} (id INTEGER PRIMARY KEY CHECK (id = 1), run_id TEXT NOT NULL, input TEXT NOT NULL, cancel_requested INTEGER NOT NULL DEFAULT 0, halted TEXT)`,
    );
    sql.exec(`CREATE TABLE IF NOT EXISTS ${FAILURES} (id INTEGER PRIMARY KEY CHECK (id = 1), count INTEGER NOT NULL, at_seq INTEGER NOT NULL)`);
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
    void this.#launch(prepared.setup);
    return { ok: true };
  }

  /**
   * Take over a run exported elsewhere (SPEC §10): check the input as {@link start} does and the
   * log's identity against what the factory builds, import the log through the store's own
   * methods, then drive it on with resume (and the alarm) like any run. Refused as `bad_request`
   * with nothing stored: a torn or corrupt log, a foreign schema major, a log of another run, a
   * log whose run the factory's agent and request would not resume (identity mismatch).
   */
  async adopt(runId: string, input: unknown, log: string): Promise<StartOutcome> {
    if (this.#taken()) return conflict(runId);
    const prepared = await prepareRun(this.#options.setup, { env: this.env, runId, input });
    if (!prepared.ok) return prepared;
    const request: RunRequest = { ...prepared.setup.request, runId };
    const mismatch = await identityRefusal(seamsOf(prepared.setup, new InMemoryStore()), request, log);
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
    this.ctx.storage.sql.exec(`INSERT INTO ${META} (id, run_id, input) VALUES (1, ?, ?)`, runId, stored);
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
  async #read(meta: Meta): Promise<Reading> {
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
   * ended run. A halted run gets one more attempt, which ends it only if its fault has cleared
   * (a run whose identity no longer matches stays halted). Returns false when this object holds no run.
   */
  async cancel(): Promise<boolean> {
    const meta = this.#meta();
    if (meta === null) return false;
    if (this.#ended(meta.runId)) return true;
    this.ctx.storage.sql.exec(`UPDATE ${META} SET cancel_requested = 1 WHERE id = 1`);
    if (this.#driving !== null) {
      // Before the library has been called the sink aborts at `run_started` instead (see #sink).
      if (this.#launched) this.#controller?.abort(cancelReason());
    } else {
      // Also for a halted run: one more attempt, which ends it cancelled if its fault has cleared.
      void this.#launch(null);
    }
    return true;
  }

  /**
   * The object's own HTTP face, used by the app for the event stream only (`GET /events`,
   * `Last-Event-ID`): SSE of every record after that sequence, then live ones until `run_ended`;
   * 404 when this object holds no run. A plain fetch, so a client disconnect cancels the stream.
   */
  override async fetch(request: Request): Promise<Response> {
    const after = request.headers.get('last-event-id');
    const afterSeq = after === null ? -1 : Number(after);
    const meta = this.#meta();
    if (meta === null) return new Response(null, { status: 404 });
    // Sequence numbers exist only once committed, so a client cannot have seen one past the end.
    const last = this.#store.lastSeq(meta.runId);
    if (afterSeq > last) return new Response(`Last-Event-ID ${afterSeq} is beyond the run's last record (${last})`, { status: 400 });
    // Everything up to run_ended was seen: 204 tells an EventSource to stop reconnecting.
    if (afterSeq === last && this.#ended(meta.runId)) return new Response(null, { status: 204 });
    return new Response(this.#events(meta, afterSeq), { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } });
  }

  #events(meta: Meta, afterSeq: number): ReadableStream<Uint8Array> {
    const feed = {
      readLines: (after: number) => this.#store.readLines(meta.runId, after),
      subscribe: (listener: (entry: StoredLine) => void) => {
        this.#listeners.add(listener);
        return () => void this.#listeners.delete(listener);
      },
    };
    return logEventStream(feed, afterSeq, this.#options.keepAliveMs === undefined ? {} : { keepAliveMs: this.#options.keepAliveMs });
  }

  /** Heartbeat and recovery: re-arm while the run lives; resume it when no driver runs here. */
  override async alarm(): Promise<void> {
    const meta = this.#meta();
    if (meta === null || meta.halted !== null || this.#ended(meta.runId)) return;
    await this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs());
    if (this.#driving === null) void this.#launch(null);
  }

  #resumeAfterMs(): number {
    return this.#options.resumeAfterMs ?? 30_000;
  }

  #meta(): Meta | null {
    if (!this.#hasSchema()) return null;
    const rows = this.ctx.storage.sql
      .exec<{ run_id: string; input: string; cancel_requested: number; halted: string | null }>(`SELECT run_id, input, cancel_requested, halted FROM ${META} WHERE id = 1`)
      .toArray();
    const row = rows[0];
    return row === undefined ? null : { runId: row.run_id, input: row.input, cancelRequested: row.cancel_requested === 1, halted: row.halted };
  }

  /**
   * True when the one reading of the log says `ended`. A log that cannot be read (or a store that
   * fails) counts as not ended: the next resume meets the same fault and halts or retries the run.
   */
  #ended(runId: string): boolean {
    try {
      const reading = this.#readNow(runId);
      return 'view' in reading && reading.view.state === 'ended';
    } catch {
      return false;
    }
  }

  #launch(given: RunSetup | null): Promise<void> {
    if (this.#driving !== null) return this.#driving;
    const controller = new AbortController();
    this.#controller = controller;
    this.#launched = false;
    const driving = this.#drive(given, controller).finally(() => {
      this.#driving = null;
      this.#controller = null;
      this.#launched = false;
    });
    this.#driving = driving;
    this.ctx.waitUntil(driving);
    return driving;
  }

  async #drive(given: RunSetup | null, controller: AbortController): Promise<void> {
    const meta = this.#meta();
    if (meta === null) return;
    try {
      const setup = given ?? (await this.#options.setup({ env: this.env, runId: meta.runId, input: JSON.parse(meta.input) as unknown }));
      const agent = defineAgent({ ...seamsOf(setup, this.#store), events: this.#sink(setup.events, controller) });
      const request: RunRequest = { ...setup.request, runId: meta.runId };
      const drive = this.#store.hasLog(meta.runId) ? resume : run;
      this.#launched = true;
      await drive(agent, request, { signal: controller.signal });
    } catch (e) {
      if (!this.#ended(meta.runId)) return this.#failed(meta.runId, e);
    }
    await this.ctx.storage.deleteAlarm();
  }

  /**
   * A drive that failed before the run ended. Store failures and other non-library errors may be
   * transient: the alarm stays armed and retries. A library refusal (identity mismatch, invalid
   * request, corrupt log …) will not heal by retrying: the run is halted and the alarm cleared.
   */
  async #failed(runId: string, e: unknown): Promise<void> {
    const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    if (!isPolyLoopError(e) || e.code === 'store_error') {
      const failures = this.#countFailure();
      const max = this.#options.maxFailedDrives ?? 10;
      if (failures < max) {
        console.error(`polyloop: run ${JSON.stringify(runId)} interrupted (${failures} of ${max} failed drives in a row), the alarm will resume it: ${what}`);
        return;
      }
      return this.#halt(runId, `${failures} drives in a row failed without progress; last: ${what}`);
    }
    return this.#halt(runId, what);
  }

  /** Count one failed drive: consecutive with the previous one unless records were written since. */
  #countFailure(): number {
    const seq = this.#store.lastSeq(this.#meta()?.runId ?? '');
    const row = this.ctx.storage.sql.exec<{ count: number; at_seq: number }>(`SELECT count, at_seq FROM ${FAILURES} WHERE id = 1`).toArray()[0];
    const count = row !== undefined && row.at_seq === seq ? row.count + 1 : 1;
    this.ctx.storage.sql.exec(`INSERT OR REPLACE INTO ${FAILURES} (id, count, at_seq) VALUES (1, ?, ?)`, count, seq);
    return count;
  }

  async #halt(runId: string, why: string): Promise<void> {
    console.error(`polyloop: run ${JSON.stringify(runId)} halted: ${why}`);
    this.ctx.storage.sql.exec(`UPDATE ${META} SET halted = ? WHERE id = 1`, why);
    await this.ctx.storage.deleteAlarm();
  }

  #sink(extra: EventSink | undefined, controller: AbortController): EventSink {
    return {
      params: extra?.params ?? { sink: 'run-object' },
      deliver: async (event: RunEvent) => {
        if (event.type === 'run_started' && this.#meta()?.cancelRequested) controller.abort(cancelReason());
        await extra?.deliver(event);
      },
    };
  }
}

/**
 * Make the run Durable Object class for your agent. Throws a TypeError for an invalid option. Export it under the `class_name` your
 * `wrangler.toml` binds (with a `new_sqlite_classes` migration).
 *
 * @example
 * export class RunObject extends createRunObject<Env>({
 *   setup: ({ env, input }) => ({ model, interpreter, syntheticObservations, request: buildRequest(input) }),
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
