/**
 * The drive of a run object: start or resume its run with the library until it ends or waits for
 * a person, carrying a reply, a cancel or an upgrade; halt the run when the fault will not heal.
 * @module
 */
import { defineAgent } from '../core/index.ts';
import type { InputReply, ResumeOptions } from '../core/index.ts';
import { driveSink, tellFailure } from './drive-sink.ts';
import type { Answer, Upgrade } from './drive-sink.ts';
import { cancelReply, upgradeHint } from './run-input.ts';
import type { InputOutcome } from './run-input.ts';
import type { RunPhase } from './run-phase.ts';
import type { IndexReporter } from './run-report.ts';
import { clearHalted, failedDrive, markHalted } from './run-row.ts';
import { agentOf, callLibrary, setupContext } from './run-setup.ts';
import type { Logged, RunObjectOptions, RunSetup } from './run-setup.ts';
import type { RunStorage } from './run-storage.ts';

/** What the next resume of a drive sends: a reply, nothing, or 'wait' (the run awaits input, there is none to send). */
type Next = InputReply | 'wait' | null;

/**
 * What a drive carries: `setup` when the caller made it already (else it is made from the stored
 * input), a reply to send when the run awaits it, an upgrade to ask for on the first resume.
 */
export type DriveWork = { readonly setup?: RunSetup; readonly answer?: Answer; readonly upgrade?: Upgrade };

/** What a drive works with: the object's state, storage, phase and index reporter. */
export type DriveParts<Env> = {
  readonly ctx: DurableObjectState;
  readonly env: Env;
  readonly options: RunObjectOptions<Env>;
  readonly storage: RunStorage;
  readonly phase: RunPhase;
  readonly reporter: IndexReporter;
};

/** The drives of one run object (see the module). */
export class RunObjectDriver<Env> {
  readonly #parts: DriveParts<Env>;

  constructor(parts: DriveParts<Env>) {
    this.#parts = parts;
  }

  /** The alarm period (default 30 s). */
  get resumeAfterMs(): number {
    return this.#parts.options.resumeAfterMs ?? 30_000;
  }

  /** Arm the alarm one period from now: if this instance dies, the alarm resumes the run. */
  rearm(): Promise<void> {
    return this.#parts.ctx.storage.setAlarm(Date.now() + this.resumeAfterMs);
  }

  /** Launch a drive carrying `work`, unless one is under way: then that one is returned, and `work` is not carried. */
  launch(work: DriveWork = {}): Promise<void> {
    const { phase, ctx } = this.#parts;
    const running = phase.drive;
    if (running !== null) return running;
    const driving = phase.launch((controller) => this.#drive(work, controller));
    ctx.waitUntil(driving);
    return driving;
  }

  /**
   * Drive the run until it ends or waits for a person: start or resume it, send the answer when
   * the run awaits it, a cancel reply when a cancel was asked for while it waits, and ask for the
   * upgrade on the first resume. Then the alarm is cleared (an ended or awaiting run needs
   * none); a failure before that is left to #failed.
   */
  async #drive(work: DriveWork, first: AbortController): Promise<void> {
    const { storage, phase, env, options } = this.#parts;
    let answer = work.answer ?? null;
    let upgrade = work.upgrade ?? null;
    const meta = storage.meta();
    if (meta === null) {
      upgrade?.done({ ok: false, code: 'conflict', message: 'the run is gone' });
      return answer?.done({ ok: false, code: 'not_found', message: 'the run is gone' });
    }
    let controller = first;
    /** The upgrade has landed (or nothing differed): the run is no longer halted, and its asker is told. */
    const landed = (): void => {
      if (upgrade === null) return;
      clearHalted(storage.sql);
      upgrade.done(null);
      upgrade = null;
    };
    try {
      const stored = (): unknown => JSON.parse(meta.input);
      const setup = work.setup ?? (await options.setup(setupContext(options, env, meta.runId, stored())));
      const cancelRequested = (): boolean => storage.meta()?.cancelRequested === true;
      for (;;) {
        const { next, logged } = this.#nextFor(meta.runId, answer);
        // A waiting run with nothing to send is resumed only to write an upgrade.
        if (next === 'wait' && upgrade === null) break;
        const input = next === 'wait' ? null : next;
        const cancelling = input?.kind === 'cancel';
        // The cancel that aborted the previous resume is carried out by this one: it needs a live signal.
        if (cancelling && controller.signal.aborted) controller = phase.renew();
        const started = landed;
        const events = driveSink({ extra: setup.events, controller, answer, cancelling, cancelRequested, started });
        const agent = defineAgent({ ...agentOf(setup, storage.store), events });
        phase.calling();
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
      const refused = tellFailure(e, meta.runId, answer, upgrade);
      if (!refused && !storage.ended(meta.runId)) return this.#failed(meta.runId, e);
    }
    await this.#settled(meta.runId);
  }

  /** After a drive that ended or waits: the alarm is kept only to retry telling the run index, or for a cancel. */
  async #settled(runId: string): Promise<void> {
    const { storage, ctx, reporter } = this.#parts;
    const told = await reporter.report();
    // A cancel or stop that came while the index was being told found this drive still running, and this drive had
    // already looked for one: the alarm, due now, carries it out (it drives an awaiting run one was asked of).
    const meta = storage.meta();
    if (meta !== null && storage.asked(meta) && storage.stateOf(runId) === 'awaiting_input')
      await ctx.storage.setAlarm(Date.now());
    else if (told) await ctx.storage.deleteAlarm();
  }

  /**
   * What the next resume sends — a cancel reply (to the first open request: it ends the run
   * whichever it names), the answer (to any open request; the caller checked it fits one), nothing
   * (not awaiting, or a stop was asked: the resume ends the run so), or 'wait' (awaiting, nothing
   * to send) — and what the log keeps.
   */
  #nextFor(runId: string, answer: Answer | null): { readonly next: Next; readonly logged: Logged } {
    const { storage } = this.#parts;
    const reading = storage.readNow(runId);
    const view = 'view' in reading ? reading.view : null;
    const logged = { hasLog: storage.store.hasLog(runId), storedRequest: view?.started?.request !== undefined };
    const pending = view?.pending ?? null;
    // A stop asked of a waiting run is honoured by the resume itself (its lease is lost at once), sending nothing.
    if (pending === null || storage.store.stopOf(runId) !== null) return { next: null, logged };
    if (storage.meta()?.cancelRequested) return { next: cancelReply(pending.resultId), logged };
    return { next: answer?.reply ?? 'wait', logged };
  }

  /** Why a reply the drive was given did not land (its sender hears this unless it landed first). */
  #notLanded(): InputOutcome {
    const { storage } = this.#parts;
    const meta = storage.meta();
    const stopped = meta !== null && storage.store.stopOf(meta.runId) !== null;
    const cancelled = meta?.cancelRequested === true;
    const message = stopped
      ? 'the run was stopped before the reply landed'
      : cancelled
        ? 'the run was cancelled before the reply landed'
        : 'the run awaits no input';
    return { ok: false, code: 'conflict', message };
  }

  /**
   * A drive that failed before the run ended. Store failures and other non-library errors may be
   * transient: the alarm stays armed and retries. A library refusal (identity mismatch, invalid
   * request, corrupt log …) will not heal by retrying: the run is halted and the alarm cleared.
   */
  async #failed(runId: string, e: unknown): Promise<void> {
    const { storage, options } = this.#parts;
    const drive = { error: e, seq: storage.store.lastSeq(runId), max: options.maxFailedDrives ?? 10 };
    const verdict = failedDrive(storage.sql, drive);
    if ('halt' in verdict) return this.halt(runId, `${verdict.halt}${upgradeHint(e, runId)}`);
    console.error(`polyloop: run ${JSON.stringify(runId)} ${verdict.retry}`);
  }

  /** Halt the run: logged, marked in its row, and its alarm cleared once the run index knows. */
  async halt(runId: string, why: string): Promise<void> {
    console.error(`polyloop: run ${JSON.stringify(runId)} halted: ${why}`);
    markHalted(this.#parts.storage.sql, why);
    if (await this.#parts.reporter.report()) await this.#parts.ctx.storage.deleteAlarm();
    else await this.rearm();
  }
}
