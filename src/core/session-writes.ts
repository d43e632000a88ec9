/**
 * What a run writes, in the order its barriers need (docs/design/step.md#writes-and-barriers,
 * decision 0040): a step's model result, held back to land with the step's next record; the
 * action intent; the step record with its action result; and the run's end, with the store's lease
 * freed after the last write and before the last event. Records and events go out through the
 * run's `Outbox`; the loop that decides what to write is `session.ts`.
 * @module
 */
import { isPolyLoopError } from './errors.ts';
import type { Counters } from './internal/stopping.ts';
import { releaseWarning } from './lease.ts';
import type { Lease } from './lease.ts';
import { DELIVERED } from './outbox.ts';
import type { Outbox } from './outbox.ts';
import type { RunStore } from './ports.ts';
import { seal } from './sealed-records.ts';
import { editedObservation } from './edits.ts';
import { failureOf, now, setOutcome } from './step-record.ts';
import type { StepDraft } from './step-record.ts';
import { RECORD_VERSION } from './types.ts';
import type {
  ActionDecision,
  ActionIntentRecord,
  ActionOutcome,
  ActionsIntentRecord,
  EndReason,
  InputRequest,
  JsonObject,
  ReplayPolicy,
  ResultRecord,
  RunEndedRecord,
  RunEvent,
  RunResult,
  StepRecord,
  StopRequest,
  StepWriteRecord,
} from './types.ts';

/** One run's records, in barrier order. */
export class RunWrites {
  /** Where records and events go. */
  readonly out: Outbox;
  readonly store: RunStore;
  readonly runId: string;
  readonly #signal: AbortSignal;
  readonly #lease: Lease | null;
  /**
   * The model result of the current step, not yet written, and the events that follow its
   * write: it lands with the step's next record (with the action intent as one write where the
   * store can), so an action step costs two barriers, not three.
   */
  #unwritten: ResultRecord | null = null;
  /**
   * The events that follow the model result's write, the first `#heldCount` of one array a run
   * (a fresh array a step, grown by its second event, allocated some 200 bytes).
   */
  readonly #held: RunEvent[] = [];
  #heldCount = 0;
  /** The `run_ended` record landed: the run is over, whatever happens next. */
  #ended = false;
  /** The last step's action resultId, built once: its intent and its result hold the same string. */
  #actionStep = -1;
  #actionId = '';

  constructor(out: Outbox, store: RunStore, runId: string, signal: AbortSignal, lease: Lease | null) {
    this.out = out;
    this.store = store;
    this.runId = runId;
    this.#signal = signal;
    this.#lease = lease;
  }

  /** The `run_ended` record landed. */
  get ended(): boolean {
    return this.#ended;
  }

  /** A model result waits to be written. */
  get holding(): boolean {
    return this.#unwritten !== null;
  }

  /** Hold the step's model result and the event that follows it until the step's next write. */
  hold(rec: ResultRecord, event: RunEvent): void {
    this.#unwritten = rec;
    this.#held[0] = event;
    this.#heldCount = 1;
  }

  /**
   * Write the step's model result if it is not written yet — with `intent` as one write where
   * the store has `resultAndIntent` — then `intent` (if any), then deliver the events that waited
   * for the result. Every write of a step after its model call goes through here. An intent is a
   * barrier: after an abort it throws `signal.reason` once written, and nothing runs.
   *
   * The joint write, an action step's, continues in a handler made once a run rather than in an
   * async function of its own: a suspended async layer costs some 400 bytes a step, its `then` a
   * quarter of that.
   */
  land(intent: ActionIntentRecord | ActionsIntentRecord | null): Promise<void> {
    const unwritten = this.#unwritten;
    if (unwritten === null || intent === null || !this.store.resultAndIntent) return this.#landApart(intent);
    this.#unwritten = null;
    return this.out.writeThen(unwritten, intent, this.#landed);
  }

  /** After the joint write: its events, then the intent's barrier. */
  readonly #landed = (): Promise<void> | undefined => this.#deliverHeld(true);

  /** {@link land} of anything but a joint write: a result alone, an intent alone, or both apart. */
  async #landApart(intent: ActionIntentRecord | ActionsIntentRecord | null): Promise<void> {
    const unwritten = this.#unwritten;
    if (unwritten !== null) {
      this.#unwritten = null;
      await this.out.write(unwritten);
    }
    if (intent !== null) await this.out.write(intent);
    if (unwritten !== null) await this.#deliverHeld(intent !== null);
    else if (intent !== null) this.#signal.throwIfAborted();
  }

  /**
   * Deliver the events that waited for the model result (indexed, not for…of: every step lands
   * one, and the iterator was allocated each time); after an intent, nothing runs once aborted.
   */
  #deliverHeld(barrier: boolean, from = 0): Promise<void> | undefined {
    const events = this.#held;
    for (let i = from; i < this.#heldCount; i++) {
      const sent = this.out.emit(events[i] as RunEvent);
      if (sent !== DELIVERED) return sent.then(() => this.#deliverHeld(barrier, i + 1));
    }
    if (barrier) this.#signal.throwIfAborted();
    return undefined;
  }

  /** Deliver `event` once the step's model result is written (at once if it is). */
  emitAfterResult(event: RunEvent): Promise<void> {
    if (this.#unwritten === null) return this.out.emit(event);
    this.#held[this.#heldCount++] = event;
    return DELIVERED;
  }

  /**
   * The resultId of step `stepIndex`'s action (`s{stepIndex}.action`), one string a step: a run keeps
   * its records, and the intent and the result holding one copy is a string less held a step.
   */
  actionResultId(stepIndex: number): string {
    if (this.#actionStep !== stepIndex) {
      this.#actionStep = stepIndex;
      this.#actionId = `s${stepIndex}.action`;
    }
    return this.#actionId;
  }

  /**
   * The action intent (3), a barrier: nothing runs after an abort. Not an async function of its own
   * (`land` checks the signal): every action step writes one, and an async layer costs an await.
   */
  actionIntent(stepIndex: number, decision: ActionDecision, replayPolicy: ReplayPolicy): Promise<void> {
    const resultId = this.actionResultId(stepIndex);
    const rec: ActionIntentRecord = {
      kind: 'intent',
      v: RECORD_VERSION,
      intent: 'action',
      stepIndex,
      resultId,
      replayPolicy,
      decision,
    };
    return this.land(seal(rec));
  }

  /** Finish a step whose action a person denied: nothing ran. */
  denied(step: StepDraft, reason: string): Promise<StepRecord> {
    step.observation = reason;
    step.actionStatus = 'denied';
    return this.finishStep(step, null);
  }

  /** Finish an action step with its outcome (the action result lands with the step record). */
  finishAction(
    step: StepDraft,
    outcome: ActionOutcome,
    completedRun: boolean,
    edit: JsonObject | null,
  ): Promise<StepRecord> {
    setOutcome(step, outcome);
    if (edit !== null) step.observation = editedObservation(step.observation ?? '', edit);
    step.toolCompletedRun = completedRun;
    return this.finishStep(step, { resultId: this.actionResultId(step.stepIndex), outcome });
  }

  /**
   * Build the step record, write it (atomically with the action result), announce it. An action
   * step's model result has landed with its intent: its step record continues in a handler made
   * once a run, not in a suspended async layer (as {@link land}).
   */
  finishStep(draft: StepDraft, actionResult: { resultId: string; outcome: ActionOutcome } | null): Promise<StepRecord> {
    if (this.#unwritten !== null) return this.land(null).then(() => this.finishStep(draft, actionResult));
    draft.endedAt = now();
    // Its nested values (usage, history content) come frozen from the reply and the decision.
    const step: StepRecord = Object.freeze(draft);
    const result = actionResult && Object.freeze(actionResult);
    this.#finishing = step;
    const rec = seal<StepWriteRecord>({ kind: 'step', v: RECORD_VERSION, step, actionResult: result });
    return this.out.writeThen(rec, undefined, this.#finished);
  }

  /** The step record in flight. */
  #finishing: StepRecord | null = null;

  /** After the step record's write: its `step_finished` event, then the step. */
  readonly #finished = (): StepRecord | Promise<StepRecord> => {
    const step = this.#finishing as StepRecord;
    const sent = this.out.emit({ type: 'step_finished', runId: this.runId, stepIndex: step.stepIndex, step });
    return sent === DELIVERED ? step : sent.then(() => step);
  };

  /** Write `run_ended`, free the lease, announce the end: the run's result. */
  async end(
    stopReason: EndReason,
    counters: Counters,
    trajectory: StepRecord[],
    stopRequest: StopRequest | null = null,
  ): Promise<RunResult> {
    const out = this.out;
    const runId = this.runId;
    const finalAnswer = stopReason === 'final_answer' ? (trajectory.at(-1)?.finalAnswer ?? null) : null;
    const { steps, validActions, usage } = counters;
    // Sealed like the step's records, so a store that keeps them (InMemoryStore) need encode none
    // of the run's records until its log is read: its nested values are frozen copies, not the
    // result's `usage` a caller may change.
    await out.write(
      seal<RunEndedRecord>({
        kind: 'run_ended',
        v: RECORD_VERSION,
        stopReason,
        finalAnswer,
        steps,
        validActions,
        eventDeliveryFailures: out.deliveryFailures,
        usage: Object.freeze({ ...usage }),
        ...(stopRequest ? { stopRequest: Object.freeze({ ...stopRequest }) } : {}),
        endedAt: now(),
      }),
    );
    this.#ended = true;
    // The last write landed: free the run before the last event.
    await this.releaseLease();
    const stopped = stopRequest ? { stopRequest } : {};
    await out.emit({ type: 'run_ended', runId, stopReason, finalAnswer, steps, validActions, ...stopped });
    out.close();
    return {
      runId,
      stopReason,
      finalAnswer,
      steps,
      validActions,
      eventDeliveryFailures: out.deliveryFailures,
      trajectory,
      pending: null,
      usage,
      error: failureOf(stopReason, trajectory),
      ...stopped,
    };
  }

  /** The run waits for a person: no `run_ended`; the result holds the open request. */
  paused(pending: InputRequest, counters: Counters, trajectory: StepRecord[]): RunResult {
    const { steps, validActions, usage } = counters;
    this.out.close();
    return {
      runId: this.runId,
      stopReason: 'awaiting_input',
      finalAnswer: null,
      steps,
      validActions,
      eventDeliveryFailures: this.out.deliveryFailures,
      trajectory,
      pending,
      usage,
      error: null,
    };
  }

  /**
   * The run pauses on a person: its request is written, its lease freed. A stop asked while the
   * request was being written is not left for a later resume to find: the run ends now, while this
   * driver still holds the lease (the loop writes `run_ended` with the stop request). A lease lost
   * meanwhile is not a pause either: another driver may own the log, and the run rejects.
   */
  async pause(): Promise<void> {
    const reason: unknown = this.#signal.reason;
    if (this.#signal.aborted && (isPolyLoopError(reason, 'stop_requested') || isPolyLoopError(reason, 'lease_lost')))
      throw reason;
    await this.releaseLease();
  }

  /**
   * Free the store's lease after the run's last write and before its last event, so a failed
   * release can still be told.
   */
  async releaseLease(): Promise<void> {
    if (this.#lease) await this.#lease.release().catch((e: unknown) => this.out.emit(releaseWarning(this.runId, e)));
  }
}
