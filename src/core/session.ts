/**
 * The one loop: `RunDriver` drives a run step by step from where its log stands. Writes follow
 * docs/design/step.md#writes-and-barriers (decision 0040: two barriers an action step), stops
 * docs/design/step.md#the-stop-decision, recovery docs/design/records-and-recovery.md#the-interrupted-step,
 * human input docs/design/human-input.md. `run.ts` reads the log and hands the driver what it found.
 * @module
 */
import { Cancellation } from './cancellation.ts';
import { describeError } from './errors.ts';
import { assemblePrefix, messagesSize, toolsSize } from './internal/assembly.ts';
import { countStep, NO_USAGE, stopAfterStep, stopBeforeModelCall } from './internal/stopping.ts';
import type { Counters } from './internal/stopping.ts';
import { decisionProblem, decisionShapeProblem, frozenJsonCopy, modelReplyProblem, outcomeProblem } from './internal/values.ts';
import type { StoreWarning } from './ports.ts';
import type { AgentDefinition, RunRequest } from './request.ts';
import { sha256Hex } from './snapshot.ts';
import { releaseWarning } from './lease.ts';
import type { Lease } from './lease.ts';
import { copyReply, freezeDeep, freezeOutcome, freezeReply, plainOutcome, toModelReply } from './seam-values.ts';
import { draftStep, failureOf, now, setOutcome, summarize } from './step-record.ts';
import type { StepDraft } from './step-record.ts';
import { canonicalJson } from './serialization.ts';
import { History } from './history.ts';
import { DELIVERED, Outbox } from './outbox.ts';
import { seal } from './sealed-records.ts';
import { gateFor, refusalOf, replayPolicyOf, toolOf } from './action-policy.ts';
import { RegistryExecutor } from './tools.ts';
import { RECORD_VERSION } from './types.ts';
import type {
  ActionDecision,
  ActionIntentRecord,
  ActionOutcome,
  Decision,
  EndReason,
  InFlightStep,
  InputRecord,
  InputReply,
  InputRequest,
  InputRequestKind,
  InputRequestRecord,
  IntentRecord,
  ModelReply,
  ModelToolSchema,
  ParamSnapshot,
  ResultRecord,
  RunEvent,
  RunLogView,
  RunResult,
  ReplayPolicy,
  StepRecord,
  StepWriteRecord,
  StoredRequest,
  UpgradeRecord,
} from './types.ts';

/**
 * What a step may end in besides a step record: it waits for a person, a person cancelled the
 * run, or (a store without input methods) a `never` operation in flight ends it: such a store
 * cannot hold a person's settlement.
 */
type Pause = { readonly pause: 'awaiting'; readonly pending: InputRequest } | { readonly pause: 'cancelled' } | { readonly pause: 'in_flight_unknown' };

/** One run, driven from its log's state to its end or its next pause: the one loop. */
export class RunDriver {
  readonly #agent: AgentDefinition;
  readonly #req: RunRequest;
  readonly #signal: AbortSignal;
  readonly #cancel: Cancellation;
  readonly #runId: string;
  readonly #tools: readonly ModelToolSchema[];
  readonly #trajectory: StepRecord[] = [];
  /** Prefix then history, append-only: handed to the model as is, never copied per step. */
  readonly #history: History;
  /** Characters of the prefix and the tool schemas: the part of the context that never grows. */
  readonly #fixedSize: number;
  #counters: Counters = { steps: 0, validActions: 0, usage: NO_USAGE };
  /** A reply without usage under a token budget was reported once (`usage_missing`). */
  #usageMissingTold = false;
  /** Records to the store, events to the sink. */
  readonly #out: Outbox;
  /** The `run_ended` record landed: the run is over, whatever happens next. */
  #endWritten = false;
  /**
   * The model result of the current step, not yet written, and the events that follow its
   * write: it lands with the step's next record (with the action intent as one write where the
   * store can, decision 0040), so an action step costs two barriers, not three.
   */
  #unwritten: { readonly rec: ResultRecord; readonly events: RunEvent[] } | null = null;

  readonly #lease: Lease | null;

  constructor(agent: AgentDefinition, request: RunRequest, cancel: Cancellation, lease: Lease | null) {
    this.#lease = lease;
    this.#agent = agent;
    this.#req = request;
    this.#cancel = cancel;
    this.#signal = cancel.signal;
    this.#runId = request.runId;
    this.#tools = request.tools.modelSchemas();
    this.#out = new Outbox(agent.store, agent.events, request.runId, cancel);
    const prefix = assemblePrefix({ runContext: request.context.run, tools: this.#tools, toolRenderStyle: request.toolRenderStyle, injections: request.injections, goalContext: request.context.goal });
    this.#history = new History(prefix, request.observationTemplate, agent.syntheticObservations);
    this.#fixedSize = messagesSize(prefix) + toolsSize(this.#tools);
  }

  /** A write the grace period gave up on; it may still land. */
  get abandonedWrite(): Promise<unknown> | null {
    return this.#out.abandonedWrite;
  }

  /** Write the `upgrade` record (a barrier) before anything runs under the new identity. */
  upgrade(rec: UpgradeRecord): Promise<void> {
    return this.#out.write(rec);
  }

  async drive(view: RunLogView, start: { readonly snapshot: ParamSnapshot; readonly request: StoredRequest }, warnings: readonly StoreWarning[], input: InputReply | null): Promise<RunResult> {
    const req = this.#req;
    try {
      // The interrupted step, entered where it stopped; null for a fresh step.
      let inFlight: InFlightStep | null = view.inFlight;
      if (view.state === 'not_started') {
        const { snapshot, request } = start;
        const snapshotHash = await sha256Hex(canonicalJson(snapshot));
        await this.#out.write({ kind: 'run_started', v: RECORD_VERSION, runId: this.#runId, snapshot, snapshotHash, request, startedAt: now() });
      } else {
        for (const step of view.trajectory) this.#remember(step);
      }
      await this.#out.emit({ type: 'run_started', runId: this.#runId, resumed: view.state !== 'not_started', fromStep: this.#trajectory.length });
      for (const w of warnings) await this.#out.emit({ type: 'warning', runId: this.#runId, code: w.code, message: w.message });
      if (input !== null && inFlight !== null) inFlight = await this.#receive(inFlight, input);
      const last = this.#trajectory.at(-1) ?? null;
      let reason = inFlight === null ? stopAfterStep({ cancelled: this.#signal.aborted, step: last, counters: this.#counters, budget: req.budget }) : null;
      while (reason === null) {
        if (inFlight === null) {
          reason = stopBeforeModelCall({ cancelled: this.#signal.aborted, contextSize: this.#fixedSize + this.#history.size, budget: req.budget });
          if (reason !== null) break;
        }
        const step = await this.#step(this.#trajectory.length, inFlight);
        if ('pause' in step) {
          if (step.pause === 'awaiting') return this.#awaiting(step.pending);
          return await this.#end(step.pause);
        }
        this.#remember(step);
        inFlight = null;
        reason = stopAfterStep({ cancelled: this.#signal.aborted, step, counters: this.#counters, budget: req.budget });
      }
      if (reason === 'cancelled') throw this.#signal.reason;
      return await this.#end(reason);
    } catch (e) {
      // Abort wins, but nothing is written after a failed or abandoned write, nor after the end.
      if (this.#signal.aborted && !this.#out.writeFailed && this.#out.abandonedWrite === null && !this.#endWritten) {
        await this.#end('cancelled').catch(() => undefined);
      }
      throw this.#signal.aborted ? this.#signal.reason : e;
    } finally {
      this.#out.close();
    }
  }

  /**
   * One step, in the order of its writes: (1) model-call intent, (2) model result, interpretation,
   * (3) action intent, (4) action result and step record in one write — with a person asked
   * where the tool or a `never` operation in flight needs one. An interrupted step is entered where
   * it stopped, as `readRunLog` decided; `apply_input` carries out the reply that landed.
   */
  async #step(stepIndex: number, inFlight: InFlightStep | null): Promise<StepRecord | Pause> {
    const step = draftStep(stepIndex, now());
    await this.#out.emit({ type: 'step_started', runId: this.#runId, stepIndex });
    const reply = inFlight?.resolution === 'apply_input' ? (inFlight.input?.reply ?? null) : null;
    if (reply?.kind === 'cancel') return { pause: 'cancelled' };
    if (inFlight?.resolution === 'settle') return this.#ask(stepIndex, 'settle', inFlight.target, inFlight.actionIntent?.decision ?? null);
    // 1–2: call the model (again, with the same resultId, for `reissue_model` or a settled retry), or use the stored reply.
    const retryModel = reply?.kind === 'retry' && inFlight?.request?.request.target === 'model_call';
    const called = inFlight?.result ? { reply: freezeDeep(inFlight.result.reply) } : await this.#callModel(stepIndex, { intent: inFlight === null || retryModel, replayed: inFlight !== null });
    if ('failure' in called) {
      step.observation = called.failure;
      return this.#finishStep(step, null);
    }
    const { reply: r } = called;
    step.modelCallId = r.callId;
    step.modelText = r.text;
    step.reasoning = r.reasoning;
    step.usage = r.usage ?? null;
    step.finishReason = r.finishReason ?? null;
    // The decision: the one recorded (action intent or input request; never re-interpreted), or a fresh interpretation.
    let decision: Decision;
    const recorded = inFlight?.actionIntent?.decision ?? (inFlight?.request?.request.kind === 'settle' ? null : inFlight?.request?.request.decision) ?? null;
    if (recorded) {
      decision = freezeDeep(recorded);
    } else {
      const interpreted = this.#interpret(called.reply);
      if ('failure' in interpreted) {
        await this.#emitAfterResult({ type: 'decision', runId: this.#runId, stepIndex, decision: 'interpreter_error', summary: interpreted.failure });
        step.decision = 'interpreter_error';
        step.observation = interpreted.failure;
        return this.#finishStep(step, null);
      }
      decision = interpreted.decision;
      await this.#emitAfterResult({ type: 'decision', runId: this.#runId, stepIndex, decision: decision.kind, summary: summarize(decision) });
    }
    step.historyText = decision.historyText;
    step.historyContent = decision.historyContent ?? null;
    if (decision.kind === 'final') {
      step.decision = 'final';
      step.finalAnswer = decision.answer;
      return this.#finishStep(step, null);
    }
    if (decision.kind === 'invalid') {
      step.decision = 'invalid';
      step.explanation = decision.explanation;
      return this.#finishStep(step, null);
    }
    // No new side effect after an abort, even if the model ignored the signal and replied.
    if (this.#signal.aborted) {
      if (this.#unwritten !== null) await this.#landResult(null);
      this.#signal.throwIfAborted();
    }
    return this.#act(step, decision, inFlight, reply);
  }

  /**
   * The action half of a step: the gate (a person approves or answers), (3) the action intent,
   * (4) execution — or what a settlement says happened.
   */
  async #act(step: StepDraft, decision: ActionDecision, inFlight: InFlightStep | null, reply: InputReply | null): Promise<StepRecord | Pause> {
    const { stepIndex } = step;
    const resultId = `s${stepIndex}.action`;
    const refusal = refusalOf(this.#req, decision);
    step.decision = 'action';
    step.actionRepr = decision.trajectoryRepr;
    step.toolCallId = decision.action.kind === 'tool_call' ? (decision.action.id ?? null) : null;
    let replayed = inFlight?.resolution === 'replay_action';
    if (!inFlight?.actionIntent) {
      // A reply to this step's gate holds as recorded, whatever an executor's hook says now.
      const answer = inFlight?.approval?.reply ?? null;
      if (answer === null) {
        const gate = refusal === null ? gateFor(this.#req, decision) : null;
        if (gate) return this.#ask(stepIndex, gate, 'action', decision);
      } else if (answer.kind === 'deny') return this.#denied(step, answer.reason);
      else if (answer.kind === 'answer') return this.#byPerson(step, decision, answer.text);
      // 3: the action intent, a barrier.
      await this.#writeActionIntent(stepIndex, decision, refusal === null ? replayPolicyOf(this.#req, decision) : 'safe');
    } else if (reply) {
      // A settlement of the action in flight: what the person says happened is recorded, not run again.
      if (reply.kind === 'executed') return this.#byPerson(step, decision, reply.observation);
      if (reply.kind === 'deny') return this.#denied(step, reply.reason);
      await this.#writeActionIntent(stepIndex, decision, inFlight.actionIntent.replayPolicy);
      replayed = true;
    }
    await this.#out.emit({ type: 'action_started', runId: this.#runId, stepIndex, resultId, action: decision.action, replayed });
    // 4: execute; the action result and the step record land as one write.
    const { outcome, completedRun } = refusal ?? (await this.#execute(decision, stepIndex, resultId));
    await this.#out.emit({ type: 'action_finished', runId: this.#runId, stepIndex, resultId, outcome });
    return this.#finishAction(step, outcome, completedRun);
  }

  /** Finish a step whose action a person denied: nothing ran. */
  #denied(step: StepDraft, reason: string): Promise<StepRecord> {
    step.observation = reason;
    step.actionStatus = 'denied';
    return this.#finishStep(step, null);
  }

  /** Finish a step with what a person says the action gave (an answer, or a settlement): nothing ran here. */
  #byPerson(step: StepDraft, decision: ActionDecision, observation: string): Promise<StepRecord> {
    return this.#finishAction(step, plainOutcome('executed', observation), toolOf(this.#req, decision)?.completesRun === true);
  }

  /** Finish an action step with its outcome (the action result lands with the step record). */
  #finishAction(step: StepDraft, outcome: ActionOutcome, completedRun: boolean): Promise<StepRecord> {
    setOutcome(step, outcome);
    step.toolCompletedRun = completedRun;
    return this.#finishStep(step, { resultId: `s${step.stepIndex}.action`, outcome });
  }

  async #writeActionIntent(stepIndex: number, decision: ActionDecision, replayPolicy: ReplayPolicy): Promise<void> {
    await this.#landResult(seal<ActionIntentRecord>({ kind: 'intent', v: RECORD_VERSION, intent: 'action', stepIndex, resultId: `s${stepIndex}.action`, replayPolicy, decision }));
    this.#signal.throwIfAborted();
  }

  /**
   * Write the step's model result if it is not written yet — with `intent` as one write where
   * the store has `resultAndIntent` — then `intent` (if any), then deliver the events that waited
   * for the result (decision 0040). Every write of a step after its model call goes through here.
   */
  async #landResult(intent: ActionIntentRecord | null): Promise<void> {
    const unwritten = this.#unwritten;
    if (unwritten === null) {
      if (intent !== null) await this.#out.write(intent);
      return;
    }
    this.#unwritten = null;
    const { rec } = unwritten;
    if (intent !== null && this.#agent.store.resultAndIntent) {
      await this.#out.write(rec, intent);
    } else {
      await this.#out.write(rec);
      if (intent !== null) await this.#out.write(intent);
    }
    for (const event of unwritten.events) await this.#out.emit(event);
  }

  /** Deliver `event` once the step's model result is written (at once if it is). */
  async #emitAfterResult(event: RunEvent): Promise<void> {
    if (this.#unwritten === null) await this.#out.emit(event);
    else this.#unwritten.events.push(event);
  }

  /** Write an input request (a barrier) and pause the run on it. */
  async #ask(stepIndex: number, kind: InputRequestKind, target: 'action' | 'model_call', decision: ActionDecision | null): Promise<Pause> {
    const store = this.#agent.store;
    // A store without input methods cannot hold a settlement: the run ends `in_flight_unknown`.
    if (!store.inputRequest && kind === 'settle') return { pause: 'in_flight_unknown' };
    const resultId = `s${stepIndex}.${kind === 'settle' ? 'settle' : 'input'}`;
    const request = { kind, target, decision };
    if (this.#unwritten !== null) await this.#landResult(null);
    await this.#out.write({ kind: 'input_request', v: RECORD_VERSION, stepIndex, resultId, request, requestedAt: now() });
    // The run's last write for now: free it before the last event.
    await this.#releaseLease();
    const pending: InputRequest = freezeDeep({ resultId, stepIndex, ...request });
    await this.#out.emit({ type: 'input_requested', runId: this.#runId, stepIndex, resultId, request: pending });
    return { pause: 'awaiting', pending };
  }

  /** Write a person's reply (a barrier; `reply` is the plain copy `checkReply` made) before carrying it out; the step then applies it. */
  async #receive(inFlight: InFlightStep, reply: InputReply): Promise<InFlightStep> {
    const request = inFlight.request as InputRequestRecord;
    const rec: InputRecord = { kind: 'input', v: RECORD_VERSION, stepIndex: inFlight.stepIndex, resultId: request.resultId, reply, receivedAt: now() };
    await this.#out.write(rec);
    await this.#out.emit({ type: 'input_received', runId: this.#runId, stepIndex: rec.stepIndex, resultId: rec.resultId, kind: reply.kind });
    const gate = request.request.kind !== 'settle';
    return { ...inFlight, resolution: 'apply_input', input: rec, approval: gate ? rec : inFlight.approval };
  }

  /** The run waits for a person: no `run_ended`; the promise resolves with the open request. */
  #awaiting(pending: InputRequest): RunResult {
    const { steps, validActions, usage } = this.#counters;
    this.#out.close();
    return { runId: this.#runId, stopReason: 'awaiting_input', finalAnswer: null, steps, validActions, eventDeliveryFailures: this.#out.deliveryFailures, trajectory: this.#trajectory, pending, usage, error: null };
  }

  /** Barrier, call, result. A failure of the model is a value; abort and store failures throw. */
  async #callModel(stepIndex: number, opts: { readonly intent: boolean; readonly replayed: boolean }): Promise<{ reply: ResultRecord['reply'] } | { failure: string }> {
    const req = this.#req;
    const resultId = `s${stepIndex}.model`;
    const callSeq = stepIndex;
    const { replayed } = opts;
    if (opts.intent) {
      const rec = seal<IntentRecord>({ kind: 'intent', v: RECORD_VERSION, intent: 'model_call', stepIndex, callSeq, resultId, replayPolicy: req.modelReplayPolicy });
      await this.#out.write(rec);
    }
    await this.#out.emit({ type: 'model_call_started', runId: this.#runId, stepIndex, callSeq, resultId, replayed });
    let deltas: Promise<void> = DELIVERED;
    const onDelta = (delta: string, kind?: 'text' | 'reasoning'): void => {
      // An abandoned call may go on streaming: nothing of it reaches the sink after an abort.
      if (this.#signal.aborted || this.#out.closed || typeof delta !== 'string') return;
      if (kind !== undefined && kind !== 'text' && kind !== 'reasoning') return;
      // A text delta's event stays as it always was: `kind` is there only for reasoning.
      const tag = kind === 'reasoning' ? { kind } : {};
      const event: RunEvent = { type: 'model_delta', runId: this.#runId, stepIndex, callSeq, delta, ...tag };
      deltas = deltas.then(() => this.#out.emit(event));
    };
    let raw: unknown;
    try {
      const expected = this.#history.messages.length;
      try {
        raw = await this.#cancel.seam(() => this.#agent.model.call({ messages: this.#history.messages, callSeq, runId: this.#runId, resultId, binding: req.modelBinding, tools: this.#tools, signal: this.#signal, onDelta }));
      } finally {
        this.#history.keep(expected, this.#trajectory);
      }
      const problem = modelReplyProblem(raw);
      if (problem !== null) throw new TypeError(`the model caller returned a malformed reply: ${problem}`);
    } catch (e) {
      await deltas;
      this.#signal.throwIfAborted();
      const failure = describeError(e);
      await this.#out.emit({ type: 'model_call_finished', runId: this.#runId, stepIndex, callSeq, callId: null, error: failure });
      return { failure };
    }
    await deltas;
    // Frozen: it is written after the interpreter has seen it, which must not change what lands.
    const reply = freezeReply(copyReply(raw as ModelReply));
    // Written with the step's next record (#landResult); its events wait for it.
    const events: RunEvent[] = [{ type: 'model_call_finished', runId: this.#runId, stepIndex, callSeq, callId: reply.callId, error: null }];
    if (reply.usage === null && req.budget.maxTotalTokens !== undefined && !this.#usageMissingTold) {
      // A token budget cannot see calls that report nothing: say so once, and count them as 0.
      this.#usageMissingTold = true;
      events.push({ type: 'warning', runId: this.#runId, stepIndex, code: 'usage_missing', message: `the model reported no token usage; budget.maxTotalTokens counts such calls as 0 tokens` });
    }
    this.#unwritten = { rec: seal<ResultRecord>({ kind: 'result', v: RECORD_VERSION, resultId, stepIndex, callSeq, reply }), events };
    return { reply };
  }

  /**
   * Interpret a stored reply. A throw, or a decision that breaks the contract (and so could not be
   * stored and read back), is an interpreter failure
   * (docs/design/records-and-recovery.md#seam-faults, decision 0012).
   */
  #interpret(reply: ResultRecord['reply']): { decision: Decision } | { failure: string } {
    try {
      const decision: unknown = this.#agent.interpreter.interpret(toModelReply(reply), { tools: this.#req.tools });
      // A frozen copy of what will be stored (the live decision equals the one a resume reads
      // back), read once: the copy is what is checked and used, so a getter or a proxy cannot
      // pass the check and then gate, log or run something else. No copy, no step: the check
      // of the original only names the problem (the step fails whatever it reads there).
      let copy: unknown;
      try {
        copy = frozenJsonCopy(decision);
      } catch (e) {
        let named: string | null = null;
        try {
          named = decisionProblem(decision);
        } catch {
          // a getter that throws again: the copy's own error says enough
        }
        throw new TypeError(`the interpreter returned a malformed decision: ${named ?? describeError(e)}`);
      }
      // The copy is plain JSON by construction: only its shape is left to check.
      const problem = decisionShapeProblem(copy);
      if (problem !== null) throw new TypeError(`the interpreter returned a malformed decision: ${problem}`);
      return { decision: copy as Decision };
    } catch (e) {
      return { failure: describeError(e) };
    }
  }

  /** Run the action. A custom executor's throw (not abort) or malformed outcome is `env_error`. */
  async #execute(decision: ActionDecision, stepIndex: number, resultId: string): Promise<{ outcome: ActionOutcome; completedRun: boolean }> {
    const ex = this.#req.executor;
    const ctx = { runId: this.#runId, stepIndex, resultId, signal: this.#signal };
    try {
      if (ex instanceof RegistryExecutor) {
        const tracked = await this.#cancel.seam(() => ex.executeTracked(decision.action, ctx));
        return { outcome: freezeOutcome(tracked.outcome), completedRun: tracked.completedRun };
      }
      const raw: unknown = await this.#cancel.seam(() => ex.execute(decision.action, ctx));
      const problem = outcomeProblem(raw);
      if (problem !== null) throw new TypeError(`the executor returned a malformed outcome: ${problem}`);
      const outcome = freezeOutcome(raw as ActionOutcome);
      return { outcome, completedRun: outcome.status === 'executed' && toolOf(this.#req, decision)?.completesRun === true };
    } catch (e) {
      this.#signal.throwIfAborted();
      return { outcome: plainOutcome('env_error', describeError(e)), completedRun: false };
    }
  }

  /** Build the step record, write it (atomically with the action result), announce it. */
  async #finishStep(draft: StepDraft, actionResult: { resultId: string; outcome: ActionOutcome } | null): Promise<StepRecord> {
    if (this.#unwritten !== null) await this.#landResult(null);
    draft.endedAt = now();
    // Its nested values (usage, history content) come frozen from the reply and the decision.
    const step: StepRecord = Object.freeze(draft);
    const rec = seal<StepWriteRecord>({ kind: 'step', v: RECORD_VERSION, step, actionResult: actionResult && Object.freeze(actionResult) });
    await this.#out.write(rec);
    await this.#out.emit({ type: 'step_finished', runId: this.#runId, stepIndex: step.stepIndex, step });
    return step;
  }

  /** Add a completed step to the trajectory, the counters and the history (incrementally). */
  #remember(step: StepRecord): void {
    this.#trajectory.push(step);
    this.#counters = countStep(this.#counters, step);
    this.#history.add(step);
  }

  async #end(stopReason: EndReason): Promise<RunResult> {
    const finalAnswer = stopReason === 'final_answer' ? (this.#trajectory.at(-1)?.finalAnswer ?? null) : null;
    const { steps, validActions, usage } = this.#counters;
    await this.#out.write({ kind: 'run_ended', v: RECORD_VERSION, stopReason, finalAnswer, steps, validActions, eventDeliveryFailures: this.#out.deliveryFailures, usage, endedAt: now() });
    this.#endWritten = true;
    // The last write landed: free the run before the last event.
    await this.#releaseLease();
    await this.#out.emit({ type: 'run_ended', runId: this.#runId, stopReason, finalAnswer, steps, validActions });
    this.#out.close();
    const error = failureOf(stopReason, this.#trajectory);
    return { runId: this.#runId, stopReason, finalAnswer, steps, validActions, eventDeliveryFailures: this.#out.deliveryFailures, trajectory: this.#trajectory, pending: null, usage, error };
  }

  /** Free the store's lease after the run's last write and before its last event, so a failed release can still be told. */
  async #releaseLease(): Promise<void> {
    if (this.#lease) await this.#lease.release().catch((e: unknown) => this.#out.emit(releaseWarning(this.#runId, e)));
  }
}

